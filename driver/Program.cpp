#include "driver/Program.h"

#include <Eigen/Core>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

#include "driver/Descriptor.h"

namespace nncosim::driver {
namespace {

constexpr uint32_t kProgramMagic = 0x4e50524f;  // "NPRO"
constexpr uint32_t kProgramVersion = 1;
// Bounds on what deserialization accepts before allocating anything.
constexpr uint64_t kMaxCount = 1u << 24;

class Writer {
  public:
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) mBytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    void u64(uint64_t v) {
        u32(static_cast<uint32_t>(v));
        u32(static_cast<uint32_t>(v >> 32));
    }
    void str(const std::string& s) {
        u32(static_cast<uint32_t>(s.size()));
        mBytes.insert(mBytes.end(), s.begin(), s.end());
    }
    std::vector<uint8_t> take() { return std::move(mBytes); }

  private:
    std::vector<uint8_t> mBytes;
};

class Reader {
  public:
    explicit Reader(const std::vector<uint8_t>& bytes) : mBytes(bytes) {}
    bool u32(uint32_t* v) {
        if (mBytes.size() - mPos < 4) return false;
        *v = 0;
        for (int i = 0; i < 4; ++i) *v |= uint32_t{mBytes[mPos++]} << (8 * i);
        return true;
    }
    bool u64(uint64_t* v) {
        uint32_t lo, hi;
        if (!u32(&lo) || !u32(&hi)) return false;
        *v = (uint64_t{hi} << 32) | lo;
        return true;
    }
    bool count(uint32_t* v) { return u32(v) && *v <= kMaxCount && *v <= mBytes.size() - mPos; }
    bool str(std::string* s) {
        uint32_t n;
        if (!count(&n)) return false;
        s->assign(mBytes.begin() + static_cast<long>(mPos),
                  mBytes.begin() + static_cast<long>(mPos + n));
        mPos += n;
        return true;
    }
    bool atEnd() const { return mPos == mBytes.size(); }

  private:
    const std::vector<uint8_t>& mBytes;
    size_t mPos = 0;
};

void writeIos(Writer& w, const std::vector<ProgramIo>& ios) {
    w.u32(static_cast<uint32_t>(ios.size()));
    for (const auto& io : ios) {
        w.u32(io.offset);
        w.u32(io.size);
        w.u32(io.binary16OnDevice ? 1 : 0);
        w.u32(static_cast<uint32_t>(io.dimensions.size()));
        for (uint32_t d : io.dimensions) w.u32(d);
    }
}

bool readIos(Reader& r, std::vector<ProgramIo>* ios) {
    uint32_t n;
    if (!r.count(&n)) return false;
    ios->resize(n);
    for (auto& io : *ios) {
        uint32_t rank, binary16;
        if (!r.u32(&io.offset) || !r.u32(&io.size) || !r.u32(&binary16) || binary16 > 1 ||
            !r.count(&rank))
            return false;
        io.binary16OnDevice = binary16 == 1;
        io.dimensions.resize(rank);
        for (auto& d : io.dimensions) {
            if (!r.u32(&d)) return false;
        }
    }
    return true;
}

std::string tensorText(const npu::TensorDesc& t) {
    std::ostringstream out;
    out << "@0x" << std::hex << t.addr << std::dec << " inner " << t.inner << " x" << t.count1
        << "/" << t.stride1 << " x" << t.count2 << "/" << t.stride2 << " x" << t.count3 << "/"
        << t.stride3;
    return out.str();
}

}  // namespace

bool operator==(const CompilerTarget& a, const CompilerTarget& b) {
    return a.compilerVersion == b.compilerVersion && a.arrayRows == b.arrayRows &&
           a.arrayCols == b.arrayCols && a.dramBusBytes == b.dramBusBytes &&
           a.spadWords == b.spadWords && a.accDepth == b.accDepth;
}

std::string compilerTargetText(const CompilerTarget& t) {
    std::ostringstream out;
    out << "compiler " << t.compilerVersion << ", " << t.arrayRows << "x" << t.arrayCols
        << " array, " << t.dramBusBytes << "-byte bus, " << t.spadWords << "-word scratchpad, "
        << t.accDepth << "-entry accumulators";
    return out.str();
}

std::vector<uint8_t> floatsToBinary16(const uint8_t* floats, size_t count) {
    std::vector<uint8_t> out(2 * count);
    for (size_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, floats + 4 * i, 4);
        const Eigen::half h(f);
        std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
}

std::vector<uint8_t> binary16ToFloats(const std::vector<uint8_t>& halves) {
    std::vector<uint8_t> out(2 * halves.size());
    for (size_t i = 0; i < halves.size() / 2; ++i) {
        Eigen::half h;
        std::memcpy(&h, halves.data() + 2 * i, 2);
        const float f = static_cast<float>(h);
        std::memcpy(out.data() + 4 * i, &f, 4);
    }
    return out;
}

std::vector<uint8_t> serializeProgram(const Program& program) {
    Writer w;
    w.u32(kProgramMagic);
    w.u32(kProgramVersion);
    w.u32(static_cast<uint32_t>(program.descriptors.size()));
    for (const auto& d : program.descriptors) {
        for (uint32_t word : d.encode()) w.u32(word);
    }
    w.u64(program.constants.size());
    writeIos(w, program.inputs);
    writeIos(w, program.outputs);
    w.u32(program.constantsOffset);
    w.u32(program.descriptorOffset);
    w.u32(program.completionOffset);
    w.u32(program.arenaSize);
    w.u64(program.estimatedCycles);
    w.u32(static_cast<uint32_t>(program.operationNames.size()));
    for (const auto& name : program.operationNames) w.str(name);
    return w.take();
}

Result<Program> deserializeProgram(const std::vector<uint8_t>& bytes,
                                   std::vector<uint8_t> constants) {
    auto bad = [](const char* what) {
        return fail(ErrorStatus::GENERAL_FAILURE, "program: ", what);
    };
    Reader r(bytes);
    uint32_t magic, version, count;
    if (!r.u32(&magic) || magic != kProgramMagic || !r.u32(&version) || version != kProgramVersion)
        return bad("unknown format");
    Program p;
    if (!r.count(&count)) return bad("truncated descriptors");
    p.descriptors.resize(count);
    for (auto& d : p.descriptors) {
        npu::DescriptorWords words;
        for (auto& word : words) {
            if (!r.u32(&word)) return bad("truncated descriptors");
        }
        d = npu::Descriptor::decode(words);
    }
    uint64_t constantsSize;
    if (!r.u64(&constantsSize) || constantsSize != constants.size())
        return bad("constants size mismatch");
    p.constants = std::move(constants);
    if (!readIos(r, &p.inputs) || !readIos(r, &p.outputs)) return bad("truncated inputs/outputs");
    if (!r.u32(&p.constantsOffset) || !r.u32(&p.descriptorOffset) || !r.u32(&p.completionOffset) ||
        !r.u32(&p.arenaSize) || !r.u64(&p.estimatedCycles) || !r.count(&count))
        return bad("truncated layout");
    p.operationNames.resize(count);
    for (auto& name : p.operationNames) {
        if (!r.str(&name)) return bad("truncated names");
    }
    if (!r.atEnd()) return bad("trailing bytes");
    // The layout must be self-consistent: everything inside the arena, the chain not empty.
    const uint64_t chainEnd =
        uint64_t{p.descriptorOffset} + uint64_t{npu::kDescriptorWords} * 4 * p.descriptors.size();
    if (p.descriptors.empty() ||
        uint64_t{p.constantsOffset} + p.constants.size() > p.descriptorOffset ||
        chainEnd > p.completionOffset ||
        uint64_t{p.completionOffset} + npu::kCompletionWords * 4 > p.arenaSize)
        return bad("inconsistent layout");
    for (const auto* ios : {&p.inputs, &p.outputs}) {
        for (const auto& io : *ios) {
            if (uint64_t{io.offset} + io.size > p.arenaSize)
                return bad("input/output outside the arena");
        }
    }
    return p;
}

std::string dumpProgram(const Program& p) {
    std::ostringstream out;
    out << "NPU program: " << p.descriptors.size() << " descriptors, arena " << p.arenaSize
        << " bytes, "
        << "estimated " << p.estimatedCycles << " cycles\n";
    out << "  constants    @0x" << std::hex << p.constantsOffset << std::dec << " "
        << p.constants.size() << " bytes\n";
    for (size_t i = 0; i < p.inputs.size(); ++i)
        out << "  input " << std::dec << i << "      @0x" << std::hex << p.inputs[i].offset
            << std::dec << " " << p.inputs[i].size << " bytes " << toString(p.inputs[i].dimensions)
            << "\n";
    for (size_t i = 0; i < p.outputs.size(); ++i)
        out << "  output " << i << "     @0x" << std::hex << p.outputs[i].offset << std::dec << " "
            << p.outputs[i].size << " bytes " << toString(p.outputs[i].dimensions) << "\n";
    out << "  descriptors  @0x" << std::hex << p.descriptorOffset << ", completion @0x"
        << p.completionOffset << std::dec << "\n";
    std::map<uint32_t, size_t> tiles;
    for (const auto& d : p.descriptors) ++tiles[d.tag];
    const auto name = [&](uint32_t tag) {
        return "operation " + std::to_string(tag) + " (" +
               (tag < p.operationNames.size() ? p.operationNames[tag] : std::string("-")) + ")";
    };
    const auto has = [](const npu::Descriptor& d, npu::DescFlag f) {
        return (d.flags & static_cast<uint32_t>(f)) != 0;
    };
    std::string lastHeading;
    for (size_t i = 0; i < p.descriptors.size(); ++i) {
        const auto& d = p.descriptors[i];
        // One heading per operation, or per fused group (CHAIN_OUT into CHAIN_IN, tile by tile:
        // a depthwise and pointwise pair, or an expansion, depthwise and projection triple).
        if (!has(d, npu::DescFlag::CHAIN_IN)) {
            std::string heading = name(d.tag), counts = std::to_string(tiles[d.tag]);
            for (size_t j = i;
                 j + 1 < p.descriptors.size() && has(p.descriptors[j], npu::DescFlag::CHAIN_OUT);
                 ++j) {
                const uint32_t tag = p.descriptors[j + 1].tag;
                heading += " fused with " + name(tag);
                counts += " + " + std::to_string(tiles[tag]);
            }
            if (heading != lastHeading) out << heading << ": " << counts << " descriptor(s)\n";
            lastHeading = std::move(heading);
        }
        const bool isFloat = d.format != static_cast<uint32_t>(npu::Format::INT8);
        const std::string types =
            isFloat ? std::string(npu::elementBytes(d) == 4 ? " fp32" : " fp16") +
                          (d.negateB ? " NEGATE_B" : "")
                    : std::string(d.aSigned ? " a:s8" : " a:u8") + (d.bSigned ? " b:s8" : " b:u8") +
                          (d.outSigned ? " out:s8" : " out:u8");
        out << "  [" << i << "] " << npu::op::name(d.opcode)
            << (has(d, npu::DescFlag::FENCE)
                    ? " FENCE(after [" + std::to_string(i - 1 - d.fenceSkip) + "])"
                    : "")
            << (has(d, npu::DescFlag::LAST) ? " LAST" : "")
            << (has(d, npu::DescFlag::TAPS) ? " TAPS" : "")
            << (has(d, npu::DescFlag::PACK) ? " PACK" : "")
            << (has(d, npu::DescFlag::CHAIN_OUT) ? " CHAIN_OUT" : "")
            << (has(d, npu::DescFlag::CHAIN_IN) ? " CHAIN_IN" : "")
            << (has(d, npu::DescFlag::RESIDUAL) ? " RESIDUAL" : "")
            << (has(d, npu::DescFlag::WIDE) ? " WIDE" : "") << types << "\n";
        if (d.opcode == npu::Opcode::NOP) continue;
        if (isFloat) {
            float lo, hi;
            std::memcpy(&lo, &d.fpMin, sizeof lo);
            std::memcpy(&hi, &d.fpMax, sizeof hi);
            out << "      A   " << tensorText(d.a) << "\n";
            if (npu::op::usesB(d.opcode)) out << "      B   " << tensorText(d.b) << "\n";
            out << "      OUT " << tensorText(d.out) << "  clamp [" << lo << ", " << hi << "]\n";
            static const char* const kFunctions[] = {"e^x", "ln x", "sqrt x", "?"};
            if (d.opcode == npu::Opcode::FUNC)
                out << "      function " << kFunctions[d.floatFn & 3] << "\n";
            if (d.opcode == npu::Opcode::MUL && d.divide) out << "      A / B\n";
            if (d.opcode == npu::Opcode::ADD && d.negateB) out << "      A - B\n";
        } else {
            out << "      A   " << tensorText(d.a) << "  zp " << d.aZeroPoint << "\n";
            if (npu::op::usesB(d.opcode))
                out << "      B   " << tensorText(d.b) << "  zp " << d.bZeroPoint << "\n";
            if (has(d, npu::DescFlag::RESIDUAL))  // added to the result, zero point MID
                out << "      B   " << tensorText(d.b) << "  zp " << d.resZeroPoint << " mid zp "
                    << d.midZeroPoint << "\n";
            out << "      OUT " << tensorText(d.out) << "  zp " << d.outZeroPoint << "  clamp ["
                << d.actMin << ", " << d.actMax << "]\n";
        }
        if (npu::op::isWindow(d.opcode)) {
            out << "      kernel " << d.kernelW << "x" << d.kernelH << " stride " << d.strideW
                << "x" << d.strideH << " dilation " << d.dilationW << "x" << d.dilationH
                << " pad left " << d.padLeft << " top " << d.padTop;
            if (npu::op::usesW(d.opcode))
                out << " weights @0x" << std::hex << d.wAddr << std::dec << " weight zp "
                    << d.bZeroPoint;
            out << "\n";
        }
        // The fields of the element-wise units, one set per opcode (none for float).
        switch (isFloat                           ? npu::Opcode::NOP
                : has(d, npu::DescFlag::RESIDUAL) ? npu::Opcode::ADD
                                                  : d.opcode) {
            case npu::Opcode::ADD:
                out << "      left shift " << d.leftShift << " a " << d.aMultiplier << ">>"
                    << -d.aShift << " b " << d.bMultiplier << ">>" << -d.bShift << " out "
                    << d.outMultiplier << " shift " << d.outShift << "\n";
                break;
            case npu::Opcode::MUL:
                out << "      out " << d.outMultiplier << " shift " << d.outShift << "\n";
                break;
            case npu::Opcode::LUT:
                out << "      table @0x" << std::hex << d.wAddr << std::dec << "\n";
                break;
            default:
                break;
        }
    }
    return out.str();
}

}  // namespace nncosim::driver
