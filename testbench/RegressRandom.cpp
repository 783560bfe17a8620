#include "testbench/RegressRandom.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "model/Builder.h"

namespace nncosim {
namespace {

constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;
// Constants above this size go to the shared-memory pool, as the NNAPI runtime sends them.
constexpr size_t kMaxCopiedConstantBytes = 128;

/// SplitMix64: fully specified, so a seed draws the same test on every platform (the standard
/// library's distributions are implementation-defined).
class Rng {
  public:
    explicit Rng(uint64_t seed) : mState(seed) {}

    uint64_t next() {
        uint64_t z = (mState += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    /// Uniform in [lo, hi].
    int32_t range(int32_t lo, int32_t hi) {
        return lo + static_cast<int32_t>(next() % static_cast<uint64_t>(hi - lo + 1));
    }
    uint32_t urange(uint32_t lo, uint32_t hi) { return static_cast<uint32_t>(range(lo, hi)); }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    bool chance(double p) { return uniform() < p; }
    /// Log-uniform in [lo, hi]: scales spread evenly over their decades.
    float logUniform(double lo, double hi) {
        return static_cast<float>(lo * std::exp(std::log(hi / lo) * uniform()));
    }

  private:
    uint64_t mState;
};

struct Quant {
    float scale = 0.0f;
    int32_t zeroPoint = 0;
};

/// Explicit or implicit padding, strides and dilation of a window operation along one axis
/// pair, with the output size they give.
struct Window {
    uint32_t kernelH = 1, kernelW = 1;
    uint32_t strideH = 1, strideW = 1;
    uint32_t dilationH = 1, dilationW = 1;
    bool explicitPadding = false;
    int32_t scheme = kPaddingSame;
    uint32_t padLeft = 0, padRight = 0, padTop = 0, padBottom = 0;

    static uint32_t outSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t dilation,
                            bool explicitPad, int32_t scheme, uint32_t head, uint32_t tail) {
        const uint32_t effective = (kernel - 1) * dilation + 1;
        if (explicitPad) return (in + head + tail - effective) / stride + 1;
        if (scheme == kPaddingSame) return (in + stride - 1) / stride;
        return (in - effective + stride) / stride;
    }
    uint32_t outH(uint32_t inH) const {
        return outSize(inH, kernelH, strideH, dilationH, explicitPadding, scheme, padTop,
                       padBottom);
    }
    uint32_t outW(uint32_t inW) const {
        return outSize(inW, kernelW, strideW, dilationW, explicitPadding, scheme, padLeft,
                       padRight);
    }
};

/// The operations a random test chains. Each lowers to the NPU opcode the coverage points are
/// named after (FULLY_CONNECTED to CONV; LOGISTIC, TANH and HARD_SWISH to LUT).
enum class Kind { Conv, Dwconv, Maxpool, Avgpool, Add, Mul, Lookup, FullyConnected };

bool isWindow(Kind k) {
    return k == Kind::Conv || k == Kind::Dwconv || k == Kind::Maxpool || k == Kind::Avgpool;
}

enum class KernelAim { Any, OneByOne, ThreeByThree, Large };

/// What a directed test forces (randomTestTargets); what it leaves unset is drawn as in a
/// uniform test.
struct Aim {
    std::vector<Kind> kinds;  ///< the chain, in order; empty: drawn
    std::optional<bool> isSigned;
    KernelAim kernel = KernelAim::Any;
    bool strided = false, dilated = false, padded = false;
    bool broadcast = false;  ///< ADD's second operand one row, broadcast over every row
    bool taps = false;       ///< a depthwise 3x3 the array runs in TAPS mode
    bool fused = false;  ///< depthwise 3x3 -> pointwise, which the compiler fuses (CHAIN_OUT/IN)
};

/// The aims by coverage point name (the `cover property` labels of rtl/npu_cmd.sv).
const std::map<std::string, Aim>& aims() {
    static const std::map<std::string, Aim> table = [] {
        const std::pair<std::string, Kind> opcodes[] = {
            {"conv", Kind::Conv},       {"dwconv", Kind::Dwconv}, {"maxpool", Kind::Maxpool},
            {"avgpool", Kind::Avgpool}, {"add", Kind::Add},       {"mul", Kind::Mul},
            {"lut", Kind::Lookup}};
        const auto chain = [](std::vector<Kind> kinds, std::optional<bool> isSigned = {}) {
            Aim a;
            a.kinds = std::move(kinds);
            a.isSigned = isSigned;
            return a;
        };
        std::map<std::string, Aim> t;
        for (const auto& [name, kind] : opcodes) {
            t[name + "_accepted"] = chain({kind});
            t[name + "_unsigned"] = chain({kind}, false);
            t[name + "_signed"] = chain({kind}, true);
            for (const auto& [next, nextKind] : opcodes)
                t[name + "_then_" + next] = chain({kind, nextKind});
        }
        const auto aim = [&](Kind kind, bool Aim::*flag, KernelAim kernel = KernelAim::Any) {
            Aim a = chain({kind});
            if (flag) a.*flag = true;
            a.kernel = kernel;
            return a;
        };
        t["conv_1x1"] = aim(Kind::Conv, nullptr, KernelAim::OneByOne);
        t["conv_3x3"] = aim(Kind::Conv, nullptr, KernelAim::ThreeByThree);
        t["conv_large_kernel"] = aim(Kind::Conv, nullptr, KernelAim::Large);
        t["conv_strided"] = aim(Kind::Conv, &Aim::strided);
        t["conv_dilated"] = aim(Kind::Conv, &Aim::dilated);
        t["conv_padded"] = aim(Kind::Conv, &Aim::padded);
        t["dwconv_taps"] = aim(Kind::Dwconv, &Aim::taps);
        t["dwconv_diagonal"] = aim(Kind::Dwconv, &Aim::dilated);
        t["dwconv_strided"] = aim(Kind::Dwconv, &Aim::strided);
        t["dwconv_dilated"] = aim(Kind::Dwconv, &Aim::dilated);
        t["maxpool_strided"] = aim(Kind::Maxpool, &Aim::strided);
        t["maxpool_padded"] = aim(Kind::Maxpool, &Aim::padded);
        t["avgpool_strided"] = aim(Kind::Avgpool, &Aim::strided);
        t["avgpool_padded"] = aim(Kind::Avgpool, &Aim::padded);
        t["add_broadcast"] = aim(Kind::Add, &Aim::broadcast);
        Aim fused = chain({Kind::Dwconv, Kind::Conv});
        fused.fused = true;
        t["dwconv_chain_out"] = fused;
        t["conv_chain_in"] = fused;
        return t;
    }();
    return table;
}

/// A tensor flowing from one operation of the chain into the next.
struct Tensor {
    uint32_t operand = 0;
    std::vector<uint32_t> dims;
    Quant q;
};

class Generator {
  public:
    Generator(uint32_t seed, Aim aim) : mRng(seed), mAim(std::move(aim)) {
        const bool isSigned = mAim.isSigned.value_or(mRng.chance(0.5));
        mType =
            isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
        mLow = isSigned ? -128 : 0;
    }

    RandomTest build(uint32_t seed) {
        const std::vector<Kind> kinds = mAim.kinds.empty() ? drawChain() : mAim.kinds;
        // NCHW operations run on the CPU: a chain or an aimed test stays NHWC so that it reaches
        // the NPU in one job.
        mNchwAllowed = mAim.kinds.empty() && kinds.size() == 1;
        RandomTest test;
        test.seed = seed;
        mDescription << (mLow == 0 ? "quant8 " : "quant8_signed ");
        std::optional<Tensor> flowing;
        for (size_t i = 0; i < kinds.size(); ++i) {
            if (i) mDescription << " -> ";
            mLast = i + 1 == kinds.size();
            // Window operations and FULLY_CONNECTED take what the previous one gives them.
            mNeedRank4 = !mLast && (isWindow(kinds[i + 1]) || kinds[i + 1] == Kind::FullyConnected);
            flowing = operation(kinds[i], flowing, test.operations);
        }
        test.description = mDescription.str();
        test.model = mBuilder.build();
        test.inputs = std::move(mInputs);
        return test;
    }

  private:
    /// One operation, or 30 % of the time two (FULLY_CONNECTED's rank-2 output feeds no window).
    std::vector<Kind> drawChain() {
        static const Kind kKinds[] = {Kind::Conv,    Kind::Dwconv,        Kind::Maxpool,
                                      Kind::Avgpool, Kind::Add,           Kind::Mul,
                                      Kind::Lookup,  Kind::FullyConnected};
        std::vector<Kind> kinds = {kKinds[mRng.urange(0, std::size(kKinds) - 1)]};
        if (mRng.chance(0.3)) {
            Kind next = kKinds[mRng.urange(0, std::size(kKinds) - 1)];
            if (kinds[0] == Kind::FullyConnected && isWindow(next)) next = Kind::Add;
            kinds.push_back(next);
        }
        return kinds;
    }

    Tensor operation(Kind kind, const std::optional<Tensor>& in,
                     std::vector<OperationType>& operations) {
        // By Kind, in its order; a lookup draws which one.
        static const OperationType kTypes[] = {
            OperationType::CONV_2D,     OperationType::DEPTHWISE_CONV_2D,
            OperationType::MAX_POOL_2D, OperationType::AVERAGE_POOL_2D,
            OperationType::ADD,         OperationType::MUL,
            OperationType::LOGISTIC,    OperationType::FULLY_CONNECTED};
        static const OperationType kLookups[] = {OperationType::LOGISTIC, OperationType::TANH,
                                                 OperationType::HARD_SWISH};
        const OperationType type = kind == Kind::Lookup
                                       ? kLookups[mRng.urange(0, std::size(kLookups) - 1)]
                                       : kTypes[static_cast<size_t>(kind)];
        operations.push_back(type);
        switch (kind) {
            case Kind::Conv:
            case Kind::Dwconv:
                return convolution(type, in);
            case Kind::Maxpool:
            case Kind::Avgpool:
                return pooling(type, in);
            case Kind::Add:
            case Kind::Mul:
                return elementwise(type, in);
            case Kind::Lookup:
                return lookup(type, in);
            case Kind::FullyConnected:
                break;
        }
        return fullyConnected(in);
    }

    int32_t high() const { return mLow + 255; }

    /// Activation quantization: any scale of a plausible range, any zero point of the type.
    Quant activationQuant() { return {mRng.logUniform(0.004, 0.2), mRng.range(mLow, high())}; }

    std::vector<uint8_t> randomBytes(size_t count) {
        std::vector<uint8_t> bytes(count);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(mRng.next() >> 56);
        return bytes;
    }

    /// A main-graph input with random values.
    Tensor source(const std::vector<uint32_t>& dims, Quant q) {
        mInputs.push_back({dims, randomBytes(elementCount(dims))});
        return {mBuilder.addInput(mType, dims, q.scale, q.zeroPoint), dims, q};
    }

    /// The operation's output: the model's output if it is the last of the chain.
    Tensor result(const std::vector<uint32_t>& dims, Quant q) {
        const uint32_t operand = mLast ? mBuilder.addOutput(mType, dims, q.scale, q.zeroPoint)
                                       : mBuilder.addOperand(mType, dims, q.scale, q.zeroPoint);
        return {operand, dims, q};
    }

    /// A tensor shape of rank 1 to 4 (4 when the next operation needs it), sizes 1 to 8.
    std::vector<uint32_t> tensorDims() {
        std::vector<uint32_t> dims(mNeedRank4 ? 4 : mRng.urange(1, 4));
        for (uint32_t& d : dims) d = mRng.urange(1, 8);
        return dims;
    }

    uint32_t constant(OperandType type, const std::vector<uint32_t>& dims, const void* data,
                      size_t length, Quant q = {}) {
        if (length > kMaxCopiedConstantBytes)
            return mBuilder.addReferenceBytes(type, dims, data, length, q.scale, q.zeroPoint);
        return mBuilder.addConstantBytes(type, dims, data, length, q.scale, q.zeroPoint);
    }

    uint32_t int32(int32_t value) { return mBuilder.addInt32(value); }

    int32_t activation() {
        static const char* const kNames[] = {"NONE", "RELU", "RELU1", "RELU6"};
        const int32_t fuse = mRng.range(0, 3);
        mDescription << " " << kNames[fuse];
        return fuse;
    }

    bool nchw() { return mNchwAllowed && mRng.chance(0.3) && mRng.chance(0.2); }

    /// Kernel, strides, dilation and padding as the aim asks, drawn otherwise. A test's input
    /// is drawn after its window so that the window always fits.
    Window window(uint32_t maxKernel, bool withDilation) {
        Window w;
        switch (mAim.kernel) {
            case KernelAim::OneByOne:
                break;
            case KernelAim::ThreeByThree:
                w.kernelH = w.kernelW = 3;
                break;
            case KernelAim::Large:
                w.kernelH = mRng.urange(1, 5);
                w.kernelW = mRng.urange(4, 5);
                break;
            case KernelAim::Any:
                w.kernelH = mRng.urange(1, maxKernel);
                w.kernelW = mRng.urange(1, maxKernel);
                break;
        }
        if (mAim.padded) {  // padding needs a window wider than one element
            w.kernelH = std::max(w.kernelH, 2u);
            w.kernelW = std::max(w.kernelW, 2u);
        }
        w.strideH = mRng.urange(1, 3);
        w.strideW = mRng.urange(mAim.strided ? 2 : 1, 3);
        if (withDilation) {
            w.dilationH = mRng.urange(1, 3);
            w.dilationW = mRng.urange(mAim.dilated ? 2 : 1, 3);
        }
        w.explicitPadding = mAim.padded || mRng.chance(0.5);
        if (w.explicitPadding) {
            const uint32_t effH = (w.kernelH - 1) * w.dilationH + 1,
                           effW = (w.kernelW - 1) * w.dilationW + 1;
            const uint32_t least = mAim.padded ? 1 : 0;
            w.padTop = mRng.urange(least, effH - 1);
            w.padBottom = mRng.urange(0, effH - 1);
            w.padLeft = mRng.urange(least, effW - 1);
            w.padRight = mRng.urange(0, effW - 1);
        } else {
            w.scheme = mRng.chance(0.5) ? kPaddingSame : kPaddingValid;
        }
        return w;
    }

    /// A 3x3, stride-1, SAME window: TAPS mode for a depthwise convolution.
    static Window tapsWindow() {
        Window w;
        w.kernelH = w.kernelW = 3;
        return w;
    }

    /// An input size along one axis for which the window yields at least one output.
    uint32_t spatialSize(uint32_t kernel, uint32_t dilation, uint32_t padding, const Window& w) {
        const uint32_t effective = (kernel - 1) * dilation + 1;
        if (!w.explicitPadding && w.scheme == kPaddingSame) return mRng.urange(1, 14);
        const uint32_t least = effective > padding ? effective - padding : 1;
        return least + mRng.urange(0, 10);
    }

    /// The window operation's input: `in` when the chain gives one (the window falls back to
    /// SAME padding if it does not fit), else a new input [N, H, W, C] or [N, C, H, W]. Sets the
    /// spatial sizes and the channel count (`channels`, when nonzero, for a new input).
    Tensor windowInput(const std::optional<Tensor>& in, Window& w, bool nchw, uint32_t* h,
                       uint32_t* wi, uint32_t* channels) {
        if (in) {
            const std::vector<uint32_t>& d = in->dims;
            *h = nchw ? d[2] : d[1];
            *wi = nchw ? d[3] : d[2];
            *channels = nchw ? d[1] : d[3];
            const auto fits = [&](uint32_t size, uint32_t kernel, uint32_t dilation,
                                  uint32_t padding) {
                return size + padding >= (kernel - 1) * dilation + 1;
            };
            if (!(w.scheme == kPaddingSame && !w.explicitPadding) &&
                !(fits(*h, w.kernelH, w.dilationH, w.padTop + w.padBottom) &&
                  fits(*wi, w.kernelW, w.dilationW, w.padLeft + w.padRight))) {
                w.explicitPadding = false;
                w.scheme = kPaddingSame;
            }
            return *in;
        }
        const uint32_t batches = mRng.urange(1, 2);
        if (mAim.taps || mAim.fused) {
            // Large enough for the compiler's fusion rule (tiles of at least 16 pixels).
            *h = mRng.urange(8, 14);
            *wi = mRng.urange(8, 14);
        } else {
            *h = spatialSize(w.kernelH, w.dilationH, w.padTop + w.padBottom, w);
            *wi = spatialSize(w.kernelW, w.dilationW, w.padLeft + w.padRight, w);
        }
        const std::vector<uint32_t> dims = nchw
                                               ? std::vector<uint32_t>{batches, *channels, *h, *wi}
                                               : std::vector<uint32_t>{batches, *h, *wi, *channels};
        return source(dims, activationQuant());
    }

    /// The window operands in NNAPI order: padding (4 explicit or the scheme), then strides.
    void addPaddingAndStrides(std::vector<uint32_t>& inputs, const Window& w) {
        if (w.explicitPadding) {
            for (uint32_t p : {w.padLeft, w.padRight, w.padTop, w.padBottom})
                inputs.push_back(int32(static_cast<int32_t>(p)));
            mDescription << " explicit padding " << w.padLeft << "," << w.padRight << ","
                         << w.padTop << "," << w.padBottom;
        } else {
            inputs.push_back(int32(w.scheme));
            mDescription << (w.scheme == kPaddingSame ? " SAME" : " VALID");
        }
        inputs.push_back(int32(static_cast<int32_t>(w.strideW)));
        inputs.push_back(int32(static_cast<int32_t>(w.strideH)));
        mDescription << " stride " << w.strideW << "x" << w.strideH;
    }

    static std::vector<uint32_t> windowOutputDims(const std::vector<uint32_t>& in, const Window& w,
                                                  uint32_t channels, bool nchw, uint32_t h,
                                                  uint32_t wi) {
        return nchw ? std::vector<uint32_t>{in[0], channels, w.outH(h), w.outW(wi)}
                    : std::vector<uint32_t>{in[0], w.outH(h), w.outW(wi), channels};
    }

    Tensor convolution(OperationType type, const std::optional<Tensor>& in) {
        const bool depthwise = type == OperationType::DEPTHWISE_CONV_2D;
        const bool fixedWindow = (mAim.taps && depthwise) || mAim.fused;
        // Optional trailing parameters: the layout flag, then the dilation pair after it.
        const bool dilation = !fixedWindow && (mAim.dilated || mRng.chance(0.3));
        const bool layout = dilation || mRng.chance(0.3);
        const bool isNchw = layout && nchw();
        Window w = window(4, dilation);
        if (fixedWindow) w = depthwise ? tapsWindow() : Window{};  // the pointwise half: 1x1
        uint32_t inChannels = mRng.urange(1, 16);
        uint32_t h = 0, wi = 0;
        const Tensor x = windowInput(in, w, isNchw, &h, &wi, &inChannels);
        // A depth multiplier above 1 runs as CONV: an aimed test keeps DWCONV.
        const uint32_t multiplier = depthwise && mAim.kinds.empty() ? mRng.urange(1, 3) : 1;
        const uint32_t outChannels = depthwise ? inChannels * multiplier : mRng.urange(1, 24);

        // Filter [out, kh, kw, in] or [1, kh, kw, out]; per-channel along the output channels.
        const std::vector<uint32_t> filterDims =
            depthwise ? std::vector<uint32_t>{1, w.kernelH, w.kernelW, outChannels}
                      : std::vector<uint32_t>{outChannels, w.kernelH, w.kernelW, inChannels};
        const bool perChannel = mRng.chance(0.4);
        const size_t filterCount = elementCount(filterDims);
        uint32_t filter;
        std::vector<float> filterScales(outChannels);
        if (perChannel) {
            std::vector<uint8_t> values = randomBytes(filterCount);
            for (uint8_t& v : values) v = v == 0x80 ? 0x81 : v;  // symmetric: -127..127
            for (float& s : filterScales) s = mRng.logUniform(0.002, 0.05);
            filter = constant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, filterDims,
                              values.data(), values.size());
            mBuilder.setPerChannelQuant(filter, filterScales, depthwise ? 3 : 0);
        } else {
            const Quant q{mRng.logUniform(0.002, 0.05), mRng.range(mLow, high())};
            std::fill(filterScales.begin(), filterScales.end(), q.scale);
            const std::vector<uint8_t> values = randomBytes(filterCount);
            filter = constant(mType, filterDims, values.data(), values.size(), q);
        }
        std::vector<int32_t> biasValues(outChannels);
        for (int32_t& b : biasValues) b = mRng.range(-20000, 20000);
        const Quant biasQ{perChannel ? 0.0f : x.q.scale * filterScales[0], 0};
        const uint32_t bias = constant(OperandType::TENSOR_INT32, {outChannels}, biasValues.data(),
                                       biasValues.size() * 4, biasQ);

        mDescription << nameOf(type) << " input " << toString(x.dims) << " filter "
                     << toString(filterDims) << (perChannel ? " per-channel" : " per-tensor");
        std::vector<uint32_t> inputs = {x.operand, filter, bias};
        addPaddingAndStrides(inputs, w);
        if (depthwise) {
            inputs.push_back(int32(static_cast<int32_t>(multiplier)));
            mDescription << " multiplier " << multiplier;
        }
        inputs.push_back(int32(activation()));
        if (layout) {
            inputs.push_back(mBuilder.addBool(isNchw));
            mDescription << (isNchw ? " NCHW" : " NHWC");
        }
        if (dilation) {
            inputs.push_back(int32(static_cast<int32_t>(w.dilationW)));
            inputs.push_back(int32(static_cast<int32_t>(w.dilationH)));
            mDescription << " dilation " << w.dilationW << "x" << w.dilationH;
        }

        // An output scale that keeps typical sums of products in range (about 3 sigma of
        // uniform 8-bit operands), sometimes tighter to exercise saturation.
        const uint32_t terms = w.kernelH * w.kernelW * (depthwise ? 1 : inChannels);
        const float maxFilterScale = *std::max_element(filterScales.begin(), filterScales.end());
        const Quant outQ{static_cast<float>(x.q.scale * maxFilterScale * std::sqrt(double(terms)) *
                                            85.0 * mRng.logUniform(0.3, 2.0)),
                         mRng.range(mLow, high())};
        const Tensor out = result(windowOutputDims(x.dims, w, outChannels, isNchw, h, wi), outQ);
        mBuilder.addOperation(type, inputs, {out.operand});
        return out;
    }

    Tensor pooling(OperationType type, const std::optional<Tensor>& in) {
        const bool layout = mRng.chance(0.3);
        const bool isNchw = layout && nchw();
        Window w = window(4, false);
        uint32_t channels = mRng.urange(1, 24);
        uint32_t h = 0, wi = 0;
        // Pooling keeps its input's quantization.
        const Tensor x = windowInput(in, w, isNchw, &h, &wi, &channels);
        std::vector<uint32_t> inputs = {x.operand};
        mDescription << nameOf(type) << " input " << toString(x.dims) << " filter " << w.kernelW
                     << "x" << w.kernelH;
        addPaddingAndStrides(inputs, w);
        inputs.push_back(int32(static_cast<int32_t>(w.kernelW)));
        inputs.push_back(int32(static_cast<int32_t>(w.kernelH)));
        inputs.push_back(int32(activation()));
        if (layout) {
            inputs.push_back(mBuilder.addBool(isNchw));
            mDescription << (isNchw ? " NCHW" : " NHWC");
        }
        const Tensor out = result(windowOutputDims(x.dims, w, channels, isNchw, h, wi), x.q);
        mBuilder.addOperation(type, inputs, {out.operand});
        return out;
    }

    Tensor elementwise(OperationType type, const std::optional<Tensor>& in) {
        const Tensor x = in ? *in : source(tensorDims(), activationQuant());
        const std::vector<uint32_t>& a = x.dims;
        // The other operand: the same shape, some dimensions broadcast, or a lower rank (the
        // innermost dimension alone when the aim is a broadcast row).
        std::vector<uint32_t> b = a;
        const uint32_t shape = mAim.broadcast ? 3 : mRng.urange(0, 2);
        if (shape == 1) {
            for (uint32_t& d : b) d = mRng.chance(0.4) ? 1 : d;
        } else if (shape == 2) {
            b.erase(b.begin(), b.begin() + mRng.urange(0, static_cast<uint32_t>(a.size()) - 1));
        } else if (shape == 3) {
            b = {a.back()};
        }
        const Quant qb = activationQuant();
        const bool constantB = !mAim.broadcast && mRng.chance(0.3);
        uint32_t other;
        if (constantB) {
            const std::vector<uint8_t> values = randomBytes(elementCount(b));
            other = constant(mType, b, values.data(), values.size(), qb);
        } else {
            other = source(b, qb).operand;
        }
        const bool swapped = !mAim.broadcast && mRng.chance(0.5);
        mDescription << nameOf(type) << " " << toString(swapped ? b : a) << " and "
                     << toString(swapped ? a : b) << (constantB ? " (constant)" : "");
        const int32_t fuse = activation();
        // ADD: a range covering either input; MUL: well above the product of the input scales
        // (NNAPI requires it to be greater). The output has the first operand's shape, since
        // the second broadcasts into it.
        const float outScale =
            type == OperationType::ADD
                ? std::max(x.q.scale, qb.scale) * mRng.logUniform(0.7, 3.0)
                : static_cast<float>(x.q.scale * qb.scale * 85.0 * mRng.logUniform(0.3, 2.0));
        const Tensor out = result(a, {outScale, mRng.range(mLow, high())});
        std::vector<uint32_t> inputs = {x.operand, other, int32(fuse)};
        if (swapped) std::swap(inputs[0], inputs[1]);
        mBuilder.addOperation(type, inputs, {out.operand});
        return out;
    }

    /// LOGISTIC, TANH (output quantization fixed by NNAPI) or HARD_SWISH: the NPU's lookup table.
    Tensor lookup(OperationType type, const std::optional<Tensor>& in) {
        const Tensor x = in ? *in : source(tensorDims(), activationQuant());
        mDescription << nameOf(type) << " " << toString(x.dims);
        const bool isSigned = mLow != 0;
        const Quant outQ = type == OperationType::LOGISTIC ? Quant{1.0f / 256, isSigned ? -128 : 0}
                           : type == OperationType::TANH   ? Quant{1.0f / 128, isSigned ? 0 : 128}
                                                           : activationQuant();
        const Tensor out = result(x.dims, outQ);
        mBuilder.addOperation(type, {x.operand}, {out.operand});
        return out;
    }

    Tensor fullyConnected(const std::optional<Tensor>& in) {
        Tensor x;
        if (in) {
            x = *in;
        } else if (mRng.chance(0.25)) {
            // Rank 4, flattened to [batches, h * w * c] by the operation.
            x = source({mRng.urange(1, 4), mRng.urange(1, 4), mRng.urange(1, 4), mRng.urange(1, 8)},
                       activationQuant());
        } else {
            x = source({mRng.urange(1, 4), mRng.urange(1, 64)}, activationQuant());
        }
        const uint32_t batches = x.dims[0];
        const uint32_t inputSize = static_cast<uint32_t>(elementCount(x.dims) / batches);
        const uint32_t units = mRng.urange(1, 32);
        const Quant wQ{mRng.logUniform(0.002, 0.05), mRng.range(mLow, high())};
        const std::vector<uint8_t> weights = randomBytes(size_t{units} * inputSize);
        const uint32_t w = constant(mType, {units, inputSize}, weights.data(), weights.size(), wQ);
        std::vector<int32_t> biasValues(units);
        for (int32_t& v : biasValues) v = mRng.range(-20000, 20000);
        const uint32_t bias = constant(OperandType::TENSOR_INT32, {units}, biasValues.data(),
                                       biasValues.size() * 4, {x.q.scale * wQ.scale, 0});
        mDescription << "FULLY_CONNECTED input " << toString(x.dims) << " weights [" << units << ","
                     << inputSize << "]";
        const int32_t fuse = activation();
        const Quant outQ{static_cast<float>(x.q.scale * wQ.scale * std::sqrt(double(inputSize)) *
                                            85.0 * mRng.logUniform(0.3, 2.0)),
                         mRng.range(mLow, high())};
        const Tensor out = result({batches, units}, outQ);
        mBuilder.addOperation(OperationType::FULLY_CONNECTED, {x.operand, w, bias, int32(fuse)},
                              {out.operand});
        return out;
    }

    Rng mRng;
    Aim mAim;
    OperandType mType;
    int32_t mLow = 0;
    bool mNchwAllowed = true;
    bool mLast = true;
    bool mNeedRank4 = false;
    ModelBuilder mBuilder;
    std::vector<TensorData> mInputs;
    std::ostringstream mDescription;
};

}  // namespace

std::vector<std::string> randomTestTargets() {
    std::vector<std::string> names;
    for (const auto& entry : aims()) names.push_back(entry.first);
    return names;
}

bool isRandomTestTarget(const std::string& name) {
    return aims().count(name) != 0;
}

RandomTest makeRandomTest(uint32_t seed, const std::string& target) {
    auto it = aims().find(target);
    RandomTest test = Generator(seed, it == aims().end() ? Aim{} : it->second).build(seed);
    test.target = target;
    return test;
}

uint32_t randomTestSeed(uint32_t runSeed, uint32_t index) {
    Rng rng((uint64_t{runSeed} << 32) | index);
    return static_cast<uint32_t>(rng.next() >> 32);
}

}  // namespace nncosim
