// Depthwise convolution on the NPU: the TAPS mapping (taps on array rows) for depth multiplier 1,
// and the fusion of a depthwise layer with the 1x1 convolution that alone reads its result
// (DWCONV with CHAIN_OUT, CONV with CHAIN_IN: the intermediate tensor stays on chip), and with
// the expansion before it; and the fences between layers. Checked on
// the compiled descriptors and against the golden, on the behavioral NPU and on the RTL.
#include <algorithm>
#include <string>

#include "driver/ChainBuilder.h"
#include "driver/Compiler.h"
#include "driver/tests/TestUtil.h"
#include "golden/Executor.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

constexpr uint32_t kTaps = static_cast<uint32_t>(npu::DescFlag::TAPS);
constexpr uint32_t kChainOut = static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT);
constexpr uint32_t kChainIn = static_cast<uint32_t>(npu::DescFlag::CHAIN_IN);

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 12345u;
    for (auto& b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(x >> 24);
    }
    return v;
}

struct DwPw {
    OperandType type = OperandType::TENSOR_QUANT8_ASYMM;
    uint32_t batch = 1, h = 9, w = 10, c = 20, outC = 24;
    uint32_t kernel = 3, stride = 1;
    bool pointwise = true;  // a 1x1 CONV_2D after the depthwise layer
    uint32_t pointwiseStride = 1;
    bool intermediateIsOutput = false;
    bool secondReader = false;      // a RELU reads the depthwise result too
    bool runtimeDwWeights = false;  // the depthwise filter is RELU(model input)
    bool nchw = false;
    uint32_t expandFrom = 0;  // > 0: a 1x1 CONV_2D (RELU) from this many channels makes the input
    bool residual = false;    // the output is ADD(the 1x1 convolution's result, the model input)
};

// Input [batch, h, w, c] -> DEPTHWISE_CONV_2D 3x3 (SAME, multiplier 1, RELU) -> CONV_2D 1x1 ->
// [batch, h', w', outC]. Model inputs: the image (and the depthwise filter when run-time).
Model dwPwModel(const DwPw& o) {
    ModelBuilder b;
    const bool sgn = o.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    auto dims = [&](uint32_t h, uint32_t w, uint32_t c) {
        return o.nchw ? std::vector<uint32_t>{o.batch, c, h, w}
                      : std::vector<uint32_t>{o.batch, h, w, c};
    };
    uint32_t in =
        b.addInput(o.type, dims(o.h, o.w, o.expandFrom ? o.expandFrom : o.c), 0.5f, sgn ? -3 : 3);
    const uint32_t image = in;
    if (o.expandFrom > 0) {
        const uint32_t filter = b.addConstant(o.type, {o.c, 1, 1, o.expandFrom},
                                              pattern(o.c * o.expandFrom, 3), 0.5f, sgn ? 1 : 90);
        std::vector<int32_t> bias(o.c);
        for (uint32_t i = 0; i < o.c; ++i) bias[i] = static_cast<int32_t>(i * 29 % 400) - 200;
        const uint32_t biasOp = b.addConstant(OperandType::TENSOR_INT32, {o.c}, bias, 0.25f, 0);
        const uint32_t expanded = b.addOperand(o.type, dims(o.h, o.w, o.c), 0.5f, sgn ? -3 : 3);
        b.addOperation(
            OperationType::CONV_2D,
            {in, filter, biasOp, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1)},
            {expanded});
        in = expanded;
    }
    const std::vector<uint32_t> dwFilterDims{1, o.kernel, o.kernel, o.c};
    uint32_t dwFilter;
    if (o.runtimeDwWeights) {
        const uint32_t raw = b.addInput(o.type, dwFilterDims, 0.25f, sgn ? 2 : 7);
        dwFilter = b.addOperand(o.type, dwFilterDims, 0.25f, sgn ? 2 : 7);
        b.addOperation(OperationType::RELU, {raw}, {dwFilter});
    } else {
        dwFilter = b.addConstant(o.type, dwFilterDims, pattern(o.kernel * o.kernel * o.c, 1), 0.25f,
                                 sgn ? 2 : 7);
    }
    std::vector<int32_t> dwBias(o.c);
    for (uint32_t i = 0; i < o.c; ++i) dwBias[i] = static_cast<int32_t>(i * 37 % 200) - 100;
    const uint32_t dwBiasOp = b.addConstant(OperandType::TENSOR_INT32, {o.c}, dwBias, 0.125f, 0);
    const uint32_t oh = (o.h + o.stride - 1) / o.stride, ow = (o.w + o.stride - 1) / o.stride;
    const bool dwIsOutput = o.intermediateIsOutput || !o.pointwise;
    const uint32_t mid = dwIsOutput ? b.addOutput(o.type, dims(oh, ow, o.c), 1.0f, sgn ? -5 : 5)
                                    : b.addOperand(o.type, dims(oh, ow, o.c), 1.0f, sgn ? -5 : 5);
    std::vector<uint32_t> dwIn{in,
                               dwFilter,
                               dwBiasOp,
                               b.addInt32(1),
                               b.addInt32(o.stride),
                               b.addInt32(o.stride),
                               b.addInt32(1),
                               b.addInt32(1)};
    if (o.nchw) dwIn.push_back(b.addBool(true));
    b.addOperation(OperationType::DEPTHWISE_CONV_2D, dwIn, {mid});
    if (o.pointwise) {
        const uint32_t pwFilter = b.addConstant(o.type, {o.outC, 1, 1, o.c},
                                                pattern(o.outC * o.c, 2), 0.5f, sgn ? -1 : 100);
        std::vector<int32_t> pwBias(o.outC);
        for (uint32_t i = 0; i < o.outC; ++i) pwBias[i] = static_cast<int32_t>(i * 53 % 300) - 150;
        const uint32_t pwBiasOp =
            b.addConstant(OperandType::TENSOR_INT32, {o.outC}, pwBias, 0.5f, 0);
        const uint32_t ph = (oh + o.pointwiseStride - 1) / o.pointwiseStride,
                       pw = (ow + o.pointwiseStride - 1) / o.pointwiseStride;
        const uint32_t out = o.residual ? b.addOperand(o.type, dims(ph, pw, o.outC), 4.0f, 10)
                                        : b.addOutput(o.type, dims(ph, pw, o.outC), 4.0f, 10);
        std::vector<uint32_t> pwIn{mid,
                                   pwFilter,
                                   pwBiasOp,
                                   b.addInt32(1),
                                   b.addInt32(o.pointwiseStride),
                                   b.addInt32(o.pointwiseStride),
                                   b.addInt32(0)};
        if (o.nchw) pwIn.push_back(b.addBool(true));
        b.addOperation(OperationType::CONV_2D, pwIn, {out});
        if (o.residual) {
            const uint32_t sum = b.addOutput(o.type, dims(ph, pw, o.outC), 2.0f, sgn ? -7 : 7);
            b.addOperation(OperationType::ADD, {out, image, b.addInt32(1)}, {sum});  // RELU
        }
    }
    if (o.secondReader) {
        const uint32_t relu = b.addOutput(o.type, dims(oh, ow, o.c), 1.0f, sgn ? -5 : 5);
        b.addOperation(OperationType::RELU, {mid}, {relu});
    }
    return b.build();
}

std::vector<TensorData> dwPwInputs(const Model& model) {
    std::vector<TensorData> inputs;
    for (size_t i = 0; i < model.main.inputIndexes.size(); ++i) {
        const auto& dims = model.main.operands[model.main.inputIndexes[i]].dimensions;
        inputs.push_back({dims, pattern(elementCount(dims), 10 + static_cast<uint32_t>(i))});
    }
    return inputs;
}

// The fused depthwise + pointwise pairs both fusion tests run: each 8-bit type, with constant
// depthwise weights (stride 1) and run-time ones (stride 2).
std::vector<DwPw> fusedPairs() {
    std::vector<DwPw> pairs;
    for (const auto type :
         {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
        for (const bool runtime : {false, true}) {
            DwPw o;
            o.type = type;
            o.batch = 2;
            o.stride = runtime ? 2 : 1;
            o.runtimeDwWeights = runtime;
            pairs.push_back(o);
        }
    }
    return pairs;
}

// The fences of a chain against a brute-force reading of its DRAM footprints (the bounding
// byte ranges of what each descriptor reads and writes): a descriptor waits exactly for the
// latest earlier one that writes a byte it reads or reads weights it overwrites (FENCE_SKIP at
// most 127: then at least that long), and nothing else carries a FENCE.
void checkFences(const std::vector<npu::Descriptor>& chain) {
    struct Range {
        uint64_t begin = 0, end = 0;
        bool meets(const Range& o) const {
            return begin < end && o.begin < o.end && begin < o.end && o.begin < end;
        }
    };
    const auto rangeOf = [](const npu::TensorDesc& t) {
        const uint64_t last = uint64_t{t.count1 - 1} * t.stride1 +
                              uint64_t{t.count2 - 1} * t.stride2 +
                              uint64_t{t.count3 - 1} * t.stride3;
        return Range{t.addr, t.addr + last + t.inner};
    };
    const auto has = [](const npu::Descriptor& d, npu::DescFlag f) {
        return (d.flags & static_cast<uint32_t>(f)) != 0;
    };
    const auto weights = [](const npu::Descriptor& d) {
        return Range{d.wAddr, d.wAddr + npu::weightStreamWords(d) * npu::kDramBusBytes};
    };
    const auto writes = [&](const npu::Descriptor& d) {
        return d.opcode != npu::Opcode::NOP && !has(d, npu::DescFlag::CHAIN_OUT);
    };
    for (size_t i = 0; i < chain.size(); ++i) {
        const npu::Descriptor& d = chain[i];
        std::vector<Range> reads;
        if (d.opcode != npu::Opcode::NOP) {
            if (npu::op::usesA(d.opcode) && !has(d, npu::DescFlag::CHAIN_IN))
                reads.push_back(rangeOf(d.a));
            if (npu::readsB(d)) reads.push_back(rangeOf(d.b));
            reads.push_back(weights(d));
        }
        std::optional<size_t> producer;
        for (size_t j = 0; j < i; ++j) {
            const npu::Descriptor& e = chain[j];
            bool dependent = writes(d) && weights(e).meets(rangeOf(d.out));
            for (const Range& r : reads) dependent |= writes(e) && rangeOf(e.out).meets(r);
            if (dependent) producer = j;
        }
        CAPTURE(i);
        REQUIRE(has(d, npu::DescFlag::FENCE) == producer.has_value());
        if (producer) CHECK(d.fenceSkip == std::min<size_t>(i - 1 - *producer, 127));
    }
}

Program compiled(const Model& model) {
    REQUIRE(validateModel(model).ok());
    auto program = compileModel(model, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    checkFences(program->descriptors);
    return *program;
}

struct Census {
    size_t dwconv = 0, taps = 0, chainOut = 0, chainIn = 0, conv = 0;
};
Census census(const Program& p) {
    Census c;
    for (const auto& d : p.descriptors) {
        c.dwconv += d.opcode == npu::Opcode::DWCONV;
        c.conv += d.opcode == npu::Opcode::CONV;
        c.taps += (d.flags & kTaps) != 0;
        c.chainOut += (d.flags & kChainOut) != 0;
        c.chainIn += (d.flags & kChainIn) != 0;
    }
    return c;
}

// Runs `model` through the driver on `device`; an empty string when every output equals the
// golden's, byte for byte.
std::string matchesGolden(const IDevice& device, const Model& model) {
    auto run = runWithGolden(device, model, dwPwInputs(model));
    if (!run) return run.status().message;
    for (size_t i = 0; i < run->golden.size(); ++i) {
        const auto& ref = run->golden[i].bytes;
        for (size_t k = 0; k < ref.size(); ++k) {
            if (run->device[i][k] != ref[k])
                return "output " + std::to_string(i) + " byte " + std::to_string(k) + ": NPU " +
                       std::to_string(run->device[i][k]) + ", golden " + std::to_string(ref[k]);
        }
    }
    return "";
}

}  // namespace

TEST_CASE("driver_depthwise_taps") {
    auto device = makeTestDevice();
    for (const bool runtime : {false, true}) {
        for (const uint32_t stride : {1u, 2u}) {
            CAPTURE(runtime);
            CAPTURE(stride);
            DwPw o;
            o.pointwise = false;
            o.stride = stride;
            o.runtimeDwWeights = runtime;
            const Model model = dwPwModel(o);
            const Program p = compiled(model);
            const Census c = census(p);
            CHECK(c.dwconv > 0);
            CHECK(c.taps == c.dwconv);  // every depthwise tile in TAPS mode
            CHECK(c.chainOut == 0);
            CHECK(matchesGolden(*device.device, model) == "");
        }
    }
    // A kernel with more taps than array rows stays on diagonal blocks.
    DwPw big;
    big.pointwise = false;
    big.kernel = 5;
    const Census c = census(compiled(dwPwModel(big)));
    CHECK(c.dwconv > 0);
    CHECK(c.taps == (npu::kArrayRows >= 25 && npu::kDwTapPorts >= 5 ? c.dwconv : 0));
    CHECK(matchesGolden(*device.device, dwPwModel(big)) == "");
}

TEST_CASE("driver_depthwise_pointwise_fused") {
    auto device = makeTestDevice();
    for (const DwPw& o : fusedPairs()) {
        const bool runtime = o.runtimeDwWeights;
        CAPTURE(static_cast<int>(o.type));
        CAPTURE(runtime);
        const Model model = dwPwModel(o);
        const Program p = compiled(model);
        const uint32_t dwIndex = runtime ? 1 : 0, pwIndex = dwIndex + 1;
        // Per tile a DWCONV TAPS|CHAIN_OUT tagged with the depthwise operation, then a CONV
        // CHAIN_IN tagged with the pointwise one.
        const Census c = census(p);
        CHECK(c.dwconv > 0);
        CHECK(c.chainOut == c.dwconv);
        CHECK(c.chainIn == c.dwconv);
        CHECK(c.conv == c.dwconv);
        for (size_t i = 0; i < p.descriptors.size(); ++i) {
            const auto& d = p.descriptors[i];
            if (d.opcode != npu::Opcode::DWCONV) continue;
            REQUIRE(i + 1 < p.descriptors.size());
            const auto& next = p.descriptors[i + 1];
            CHECK((d.flags & (kTaps | kChainOut)) == (kTaps | kChainOut));
            CHECK(d.tag == dwIndex);
            CHECK(next.opcode == npu::Opcode::CONV);
            CHECK((next.flags & kChainIn) != 0);
            CHECK(next.tag == pwIndex);
            CHECK(next.a.inner == d.out.inner);
            CHECK(next.a.count1 * next.a.count2 == d.out.count1 * d.out.count2);
        }
        // The intermediate tensor has no memory: the arena is smaller than with it exposed.
        DwPw exposed = o;
        exposed.intermediateIsOutput = true;
        const Program unfused = compiled(dwPwModel(exposed));
        CHECK(p.arenaSize < unfused.arenaSize);
        const std::string dump = dumpProgram(p);
        CHECK(dump.find("TAPS CHAIN_OUT") != std::string::npos);
        CHECK(dump.find("fused with operation " + std::to_string(pwIndex)) != std::string::npos);
        CHECK(matchesGolden(*device.device, model) == "");
    }
}

// MobileNet-v2's inverted residual block: an expansion whose result only the depthwise layer
// reads fuses before the pair where the expanded tensor's trip through DRAM would cost more than
// recomputing the rows the tiles share: per tile a CONV CHAIN_OUT (the expansion), a DWCONV
// CHAIN_IN | CHAIN_OUT and a CONV CHAIN_IN, each tagged with its operation.
DwPw invertedResidual(OperandType type) {
    DwPw o;
    o.type = type;
    o.batch = 2;
    o.h = o.w = 48;
    o.expandFrom = 16;
    o.c = 96;
    o.outC = 24;
    o.stride = 2;
    return o;
}

TEST_CASE("driver_expansion_depthwise_pointwise_fused") {
    auto device = makeTestDevice();
    for (const auto type :
         {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
        {
            CAPTURE(static_cast<int>(type));
            const DwPw o = invertedResidual(type);
            const Model model = dwPwModel(o);
            const Program p = compiled(model);
            const Census c = census(p);
            CHECK(c.dwconv > 1);
            CHECK(c.conv == 2 * c.dwconv);
            CHECK(c.chainOut == 2 * c.dwconv);
            CHECK(c.chainIn == 2 * c.dwconv);
            for (size_t i = 0; i < p.descriptors.size(); ++i) {
                const auto& d = p.descriptors[i];
                if (d.opcode != npu::Opcode::DWCONV) continue;
                REQUIRE(i >= 1);
                REQUIRE(i + 1 < p.descriptors.size());
                const auto& expand = p.descriptors[i - 1];
                CHECK(expand.opcode == npu::Opcode::CONV);
                CHECK(expand.flags == kChainOut);
                CHECK(expand.tag == 0);
                CHECK(expand.out.inner == d.a.inner);
                CHECK(expand.out.count1 == d.a.count1);
                CHECK(expand.out.count2 == d.a.count2);
                CHECK((d.flags & (kTaps | kChainOut | kChainIn)) == (kTaps | kChainOut | kChainIn));
                CHECK(d.tag == 1);
                CHECK(p.descriptors[i + 1].tag == 2);
            }
            // One heading for the triple, the tile counts of its three operations.
            const std::string dump = dumpProgram(p);
            const std::string n = std::to_string(c.dwconv);
            CHECK(dump.find("operation 0 (CONV_2D) fused with operation 1 (DEPTHWISE_CONV_2D) "
                            "fused with operation 2 (CONV_2D): " +
                            n + " + " + n + " + " + n + " descriptor(s)") != std::string::npos);
            CHECK(matchesGolden(*device.device, model) == "");
        }
    }
    // A 1x1 convolution that does not widen is bound by the array, not by DRAM: only the pair
    // fuses.
    DwPw narrow = invertedResidual(OperandType::TENSOR_QUANT8_ASYMM);
    narrow.expandFrom = narrow.c;
    const Census c = census(compiled(dwPwModel(narrow)));
    CHECK(c.chainOut == c.dwconv);
    CHECK(matchesGolden(*device.device, dwPwModel(narrow)) == "");
}

// A residual connection: the ADD of a convolution's result and the block's input runs in the
// convolution's drain (RESIDUAL descriptors, no ADD descriptor), after a plain convolution and
// after a fused inverted residual block, both types; bit-exact with the golden. Not where the
// convolution's result has another reader or the convolution clamps (its RELU before the ADD).
Model convAddModel(OperandType type, bool secondReader, int32_t convActivation) {
    ModelBuilder b;
    const bool sgn = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const uint32_t c = 24;
    const uint32_t in = b.addInput(type, {1, 20, 22, c}, 0.5f, sgn ? -3 : 3);
    const uint32_t filter =
        b.addConstant(type, {c, 3, 3, c}, pattern(9 * c * c, 5), 0.05f, sgn ? 0 : 128);
    std::vector<int32_t> bias(c);
    for (uint32_t i = 0; i < c; ++i) bias[i] = static_cast<int32_t>(i * 41 % 500) - 250;
    const uint32_t biasOp = b.addConstant(OperandType::TENSOR_INT32, {c}, bias, 0.025f, 0);
    const uint32_t conv = b.addOperand(type, {1, 20, 22, c}, 1.0f, sgn ? 4 : 130);
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, biasOp, b.addInt32(1), b.addInt32(1), b.addInt32(1),
                    b.addInt32(convActivation)},
                   {conv});
    const uint32_t sum = b.addOutput(type, {1, 20, 22, c}, 1.5f, sgn ? -1 : 127);
    b.addOperation(OperationType::ADD, {in, conv, b.addInt32(0)}, {sum});
    if (secondReader) {
        const uint32_t relu = b.addOutput(type, {1, 20, 22, c}, 1.0f, sgn ? 4 : 130);
        b.addOperation(OperationType::RELU, {conv}, {relu});
    }
    return b.build();
}

size_t residualDescriptors(const Program& p) {
    size_t n = 0;
    for (const auto& d : p.descriptors) {
        n += (d.flags & static_cast<uint32_t>(npu::DescFlag::RESIDUAL)) != 0;
        CHECK(d.opcode != npu::Opcode::ADD);
    }
    return n;
}

TEST_CASE("driver_residual_add_in_the_drain") {
    auto device = makeTestDevice();
    auto rtl = rtlDevice();
    REQUIRE_MESSAGE(rtl.ok(), rtl.status().message);
    for (const auto type :
         {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
        CAPTURE(static_cast<int>(type));
        const Model plain = convAddModel(type, false, 0);
        CHECK(residualDescriptors(compiled(plain)) > 0);
        DwPw block = invertedResidual(type);
        block.stride = 1;
        block.outC = block.expandFrom;
        block.residual = true;
        const Model inverted = dwPwModel(block);
        const Program p = compiled(inverted);
        const auto projections =
            std::count_if(p.descriptors.begin(), p.descriptors.end(), [](const auto& d) {
                return d.opcode == npu::Opcode::CONV && (d.flags & kChainIn) != 0;
            });
        CHECK(projections > 0);
        CHECK(residualDescriptors(p) == static_cast<size_t>(projections));
        for (const Model* m : {&plain, &inverted}) {
            CHECK(matchesGolden(*device.device, *m) == "");
            CHECK(matchesGolden(**rtl, *m) == "");
        }
    }
    for (const auto& [model, what] :
         {std::pair{convAddModel(OperandType::TENSOR_QUANT8_ASYMM, true, 0), "a second reader"},
          std::pair{convAddModel(OperandType::TENSOR_QUANT8_ASYMM, false, 1), "a RELU"}}) {
        CAPTURE(what);
        const Program p = compiled(model);
        CHECK(std::none_of(p.descriptors.begin(), p.descriptors.end(), [](const auto& d) {
            return (d.flags & static_cast<uint32_t>(npu::DescFlag::RESIDUAL)) != 0;
        }));
        CHECK(matchesGolden(*device.device, model) == "");
    }
}

TEST_CASE("driver_depthwise_pointwise_not_fused") {
    auto device = makeTestDevice();
    auto check = [&](const DwPw& o, const char* what) {
        CAPTURE(what);
        const Model model = dwPwModel(o);
        const Census c = census(compiled(model));
        CHECK(c.dwconv > 0);
        CHECK(c.chainOut == 0);
        CHECK(c.chainIn == 0);
        CHECK(matchesGolden(*device.device, model) == "");
    };
    DwPw o;
    o.intermediateIsOutput = true;
    check(o, "the depthwise result is also a model output");
    o = {};
    o.secondReader = true;
    check(o, "the depthwise result feeds two operations");
    o = {};
    o.pointwiseStride = 2;
    check(o, "the 1x1 convolution has stride 2");
    o = {};
    o.nchw = true;
    check(o, "NCHW");
    o = {};
    o.h = o.w = 14;
    o.c = 576;
    o.outC = 160;
    o.stride = 2;
    check(o,
          "MobileNet-v2's 14x14 stride-2 block: each fused tile would stream the 92 kB of "
          "projection weights again (depthwisePointwisePays)");
}

// A layer's tiles wait only for the tiles of earlier layers that wrote what they read: the first
// tiles of a layer load while the previous layer's last ones still run.
DwPw afterExpansion() {
    DwPw o;  // the expansion does not widen: it runs as a layer of its own
    o.h = 96;
    o.w = 40;
    o.expandFrom = o.c = 32;
    return o;
}

TEST_CASE("driver_fences_wait_for_the_tiles_read") {
    // By hand: table lookups of 16 bytes (A, OUT) through a 256-byte table (W).
    const auto lut = [](uint32_t a, uint32_t out, uint32_t table) {
        npu::Descriptor d;
        d.opcode = npu::Opcode::LUT;
        d.flags = static_cast<uint32_t>(npu::DescFlag::FENCE);  // placeFences decides
        d.a = {a, 16, 1, 0, 1, 1, 0, 0};
        d.out = {out, 16, 1, 0, 1, 1, 0, 0};
        d.wAddr = table;
        return d;
    };
    std::vector<npu::Descriptor> chain{
        lut(0x1000, 0x2000, 0x100), lut(0x1000, 0x3000, 0x100),
        lut(0x2008, 0x4000, 0x100),  // reads what [0] wrote
        lut(0x1000, 0x0180, 0x200),  // overwrites the table [0..2] read
        lut(0x5000, 0x6000, 0x100),  // reads that table
        lut(0x5000, 0x7000, 0x200)};
    for (uint32_t k = 0; k < 130; ++k) chain.push_back(lut(0x1000, 0x10000 + 16 * k, 0x200));
    chain.push_back(lut(0x3000, 0x8000, 0x200));  // reads what [1] wrote, 134 back
    npu::placeFences(chain);
    const auto waitsFor = [&](size_t i) -> std::optional<size_t> {
        if (!(chain[i].flags & static_cast<uint32_t>(npu::DescFlag::FENCE))) return std::nullopt;
        return i - 1 - chain[i].fenceSkip;
    };
    CHECK(!waitsFor(0));
    CHECK(!waitsFor(1));
    CHECK(waitsFor(2) == 0u);
    CHECK(waitsFor(3) == 2u);
    CHECK(waitsFor(4) == 3u);
    CHECK(!waitsFor(5));
    CHECK(waitsFor(chain.size() - 1) == chain.size() - 1 - 1 - 127);  // FENCE_SKIP's limit
    checkFences(chain);

    auto device = makeTestDevice();
    for (const bool runtime : {false, true}) {
        CAPTURE(runtime);
        DwPw o = afterExpansion();
        o.runtimeDwWeights = runtime;  // RELU writes the filter, a scatter the weight stream
        const Model model = dwPwModel(o);
        const Program p = compiled(model);  // checkFences
        if (!runtime) {
            // The first depthwise tile waits for an expansion tile before the last one.
            size_t lastExpansion = 0, firstDepthwise = p.descriptors.size();
            for (size_t i = 0; i < p.descriptors.size(); ++i) {
                if (p.descriptors[i].tag == 0) lastExpansion = i;
                if (p.descriptors[i].opcode == npu::Opcode::DWCONV)
                    firstDepthwise = std::min(firstDepthwise, i);
            }
            REQUIRE(firstDepthwise == lastExpansion + 1);
            const npu::Descriptor& first = p.descriptors[firstDepthwise];
            REQUIRE((first.flags & static_cast<uint32_t>(npu::DescFlag::FENCE)) != 0);
            CHECK(first.fenceSkip > 0);
            CHECK(dumpProgram(p).find("FENCE(after [") != std::string::npos);
        }
        CHECK(matchesGolden(*device.device, model) == "");
    }
}

// The same on the Verilated NPU: TAPS and the fused pair, bit-exact with the golden.
TEST_CASE("driver_rtl_depthwise_taps_and_fusion") {
    auto device = rtlDevice();
    REQUIRE_MESSAGE(device.ok(), device.status().message);
    DwPw taps;
    taps.pointwise = false;
    taps.stride = 2;
    CHECK(matchesGolden(**device, dwPwModel(taps)) == "");
    for (const DwPw& o : fusedPairs()) {
        const bool runtime = o.runtimeDwWeights;
        CAPTURE(static_cast<int>(o.type));
        CAPTURE(runtime);
        const Model model = dwPwModel(o);
        REQUIRE(census(compiled(model)).chainIn > 0);
        CHECK(matchesGolden(**device, model) == "");
    }
    CHECK(matchesGolden(**device, dwPwModel(afterExpansion())) == "");
    const Model block = dwPwModel(invertedResidual(OperandType::TENSOR_QUANT8_ASYMM_SIGNED));
    REQUIRE(census(compiled(block)).chainIn > census(compiled(block)).dwconv);
    CHECK(matchesGolden(**device, block) == "");
    // A layer large enough for several tiles per image (and 40 channels: three blocks).
    DwPw big;
    big.h = 40, big.w = 36, big.c = 40, big.outC = 48;
    const Model model = dwPwModel(big);
    const Census c = census(compiled(model));
    CHECK(c.chainOut > 1);
    CHECK(matchesGolden(**device, model) == "");
}
