#include "testbench/RegressRandom.h"

#include <algorithm>
#include <cmath>
#include <iterator>
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

class Generator {
  public:
    explicit Generator(uint32_t seed) : mRng(seed) {
        mType = mRng.chance(0.5) ? OperandType::TENSOR_QUANT8_ASYMM
                                 : OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
        mLow = mType == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
    }

    RandomTest build(uint32_t seed) {
        static const OperationType kOperations[] = {OperationType::CONV_2D,
                                                    OperationType::DEPTHWISE_CONV_2D,
                                                    OperationType::AVERAGE_POOL_2D,
                                                    OperationType::MAX_POOL_2D,
                                                    OperationType::ADD,
                                                    OperationType::MUL,
                                                    OperationType::FULLY_CONNECTED};
        RandomTest test;
        test.seed = seed;
        test.operation = kOperations[mRng.urange(0, std::size(kOperations) - 1)];
        mDescription << nameOf(test.operation) << " "
                     << (mType == OperandType::TENSOR_QUANT8_ASYMM ? "quant8" : "quant8_signed");
        switch (test.operation) {
            case OperationType::CONV_2D:
            case OperationType::DEPTHWISE_CONV_2D:
                convolution(test.operation == OperationType::DEPTHWISE_CONV_2D);
                break;
            case OperationType::AVERAGE_POOL_2D:
            case OperationType::MAX_POOL_2D:
                pooling(test.operation);
                break;
            case OperationType::ADD:
            case OperationType::MUL:
                elementwise(test.operation);
                break;
            default:
                fullyConnected();
                break;
        }
        test.description = mDescription.str();
        test.model = mBuilder.build();
        test.inputs = std::move(mInputs);
        return test;
    }

  private:
    int32_t high() const { return mLow + 255; }

    /// Activation quantization: any scale of a plausible range, any zero point of the type.
    Quant activationQuant() { return {mRng.logUniform(0.004, 0.2), mRng.range(mLow, high())}; }

    std::vector<uint8_t> randomBytes(size_t count) {
        std::vector<uint8_t> bytes(count);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(mRng.next() >> 56);
        return bytes;
    }

    uint32_t input(const std::vector<uint32_t>& dims, Quant q) {
        mInputs.push_back({dims, randomBytes(elementCount(dims))});
        return mBuilder.addInput(mType, dims, q.scale, q.zeroPoint);
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

    /// Kernel, strides, dilation and padding; the input size along each axis is drawn after
    /// them so that the window always fits.
    Window window(uint32_t maxKernel, bool withDilation) {
        Window w;
        w.kernelH = mRng.urange(1, maxKernel);
        w.kernelW = mRng.urange(1, maxKernel);
        w.strideH = mRng.urange(1, 3);
        w.strideW = mRng.urange(1, 3);
        if (withDilation) {
            w.dilationH = mRng.urange(1, 3);
            w.dilationW = mRng.urange(1, 3);
        }
        w.explicitPadding = mRng.chance(0.5);
        if (w.explicitPadding) {
            const uint32_t effH = (w.kernelH - 1) * w.dilationH + 1,
                           effW = (w.kernelW - 1) * w.dilationW + 1;
            w.padTop = mRng.urange(0, effH - 1);
            w.padBottom = mRng.urange(0, effH - 1);
            w.padLeft = mRng.urange(0, effW - 1);
            w.padRight = mRng.urange(0, effW - 1);
        } else {
            w.scheme = mRng.chance(0.5) ? kPaddingSame : kPaddingValid;
        }
        return w;
    }

    /// An input size along one axis for which the window yields at least one output.
    uint32_t spatialSize(uint32_t kernel, uint32_t dilation, uint32_t padding, const Window& w) {
        const uint32_t effective = (kernel - 1) * dilation + 1;
        if (!w.explicitPadding && w.scheme == kPaddingSame) return mRng.urange(1, 14);
        const uint32_t least = effective > padding ? effective - padding : 1;
        return least + mRng.urange(0, 10);
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

    /// Input [N, H, W, C] or [N, C, H, W] for a window operation.
    std::vector<uint32_t> windowInputDims(const Window& w, uint32_t channels, bool nchw,
                                          uint32_t* h, uint32_t* wi) {
        const uint32_t batches = mRng.urange(1, 2);
        *h = spatialSize(w.kernelH, w.dilationH, w.padTop + w.padBottom, w);
        *wi = spatialSize(w.kernelW, w.dilationW, w.padLeft + w.padRight, w);
        return nchw ? std::vector<uint32_t>{batches, channels, *h, *wi}
                    : std::vector<uint32_t>{batches, *h, *wi, channels};
    }

    static std::vector<uint32_t> windowOutputDims(const std::vector<uint32_t>& in, const Window& w,
                                                  uint32_t channels, bool nchw, uint32_t h,
                                                  uint32_t wi) {
        return nchw ? std::vector<uint32_t>{in[0], channels, w.outH(h), w.outW(wi)}
                    : std::vector<uint32_t>{in[0], w.outH(h), w.outW(wi), channels};
    }

    void convolution(bool depthwise) {
        // Optional trailing parameters: the layout flag, then the dilation pair after it.
        const bool dilation = mRng.chance(0.3);
        const bool layout = dilation || mRng.chance(0.3);
        const bool nchw = layout && mRng.chance(0.2);
        const Window w = window(4, dilation);
        const uint32_t inChannels = mRng.urange(1, 16);
        const uint32_t multiplier = depthwise ? mRng.urange(1, 3) : 1;
        const uint32_t outChannels = depthwise ? inChannels * multiplier : mRng.urange(1, 24);
        uint32_t h = 0, wi = 0;
        const std::vector<uint32_t> inDims = windowInputDims(w, inChannels, nchw, &h, &wi);
        const Quant inQ = activationQuant();
        const uint32_t in = input(inDims, inQ);

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
        const Quant biasQ{perChannel ? 0.0f : inQ.scale * filterScales[0], 0};
        const uint32_t bias = constant(OperandType::TENSOR_INT32, {outChannels}, biasValues.data(),
                                       biasValues.size() * 4, biasQ);

        mDescription << " input " << toString(inDims) << " filter " << toString(filterDims)
                     << (perChannel ? " per-channel" : " per-tensor");
        std::vector<uint32_t> inputs = {in, filter, bias};
        addPaddingAndStrides(inputs, w);
        if (depthwise) {
            inputs.push_back(int32(static_cast<int32_t>(multiplier)));
            mDescription << " multiplier " << multiplier;
        }
        inputs.push_back(int32(activation()));
        if (layout) {
            inputs.push_back(mBuilder.addBool(nchw));
            mDescription << (nchw ? " NCHW" : " NHWC");
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
        const Quant outQ{static_cast<float>(inQ.scale * maxFilterScale * std::sqrt(double(terms)) *
                                            85.0 * mRng.logUniform(0.3, 2.0)),
                         mRng.range(mLow, high())};
        const uint32_t out =
            mBuilder.addOutput(mType, windowOutputDims(inDims, w, outChannels, nchw, h, wi),
                               outQ.scale, outQ.zeroPoint);
        mBuilder.addOperation(depthwise ? OperationType::DEPTHWISE_CONV_2D : OperationType::CONV_2D,
                              inputs, {out});
    }

    void pooling(OperationType type) {
        const bool layout = mRng.chance(0.3);
        const bool nchw = layout && mRng.chance(0.2);
        const Window w = window(4, false);
        const uint32_t channels = mRng.urange(1, 24);
        uint32_t h = 0, wi = 0;
        const std::vector<uint32_t> inDims = windowInputDims(w, channels, nchw, &h, &wi);
        // Pooling keeps its input's quantization.
        const Quant q = activationQuant();
        std::vector<uint32_t> inputs = {input(inDims, q)};
        mDescription << " input " << toString(inDims) << " filter " << w.kernelW << "x"
                     << w.kernelH;
        addPaddingAndStrides(inputs, w);
        inputs.push_back(int32(static_cast<int32_t>(w.kernelW)));
        inputs.push_back(int32(static_cast<int32_t>(w.kernelH)));
        inputs.push_back(int32(activation()));
        if (layout) {
            inputs.push_back(mBuilder.addBool(nchw));
            mDescription << (nchw ? " NCHW" : " NHWC");
        }
        const uint32_t out = mBuilder.addOutput(
            mType, windowOutputDims(inDims, w, channels, nchw, h, wi), q.scale, q.zeroPoint);
        mBuilder.addOperation(type, inputs, {out});
    }

    void elementwise(OperationType type) {
        const uint32_t rank = mRng.urange(1, 4);
        std::vector<uint32_t> a(rank);
        for (uint32_t& d : a) d = mRng.urange(1, 8);
        // The other operand: the same shape, some dimensions broadcast, or a lower rank.
        std::vector<uint32_t> b = a;
        const uint32_t shape = mRng.urange(0, 2);
        if (shape == 1) {
            for (uint32_t& d : b) d = mRng.chance(0.4) ? 1 : d;
        } else if (shape == 2) {
            b.erase(b.begin(), b.begin() + mRng.urange(0, rank - 1));
        }
        if (mRng.chance(0.5)) std::swap(a, b);
        std::vector<uint32_t> outDims(std::max(a.size(), b.size()));
        for (size_t i = 0; i < outDims.size(); ++i) {
            const size_t fromEnd = outDims.size() - 1 - i;
            const uint32_t da = fromEnd < a.size() ? a[a.size() - 1 - fromEnd] : 1;
            const uint32_t db = fromEnd < b.size() ? b[b.size() - 1 - fromEnd] : 1;
            outDims[i] = std::max(da, db);
        }
        const Quant qa = activationQuant(), qb = activationQuant();
        const uint32_t inA = input(a, qa);
        uint32_t inB;
        const bool constantB = mRng.chance(0.3);
        if (constantB) {
            const std::vector<uint8_t> values = randomBytes(elementCount(b));
            inB = constant(mType, b, values.data(), values.size(), qb);
        } else {
            inB = input(b, qb);
        }
        mDescription << " " << toString(a) << " and " << toString(b)
                     << (constantB ? " (constant)" : "");
        const int32_t fuse = activation();
        // ADD: a range covering either input; MUL: well above the product of the input scales
        // (NNAPI requires it to be greater).
        const float outScale =
            type == OperationType::ADD
                ? std::max(qa.scale, qb.scale) * mRng.logUniform(0.7, 3.0)
                : static_cast<float>(qa.scale * qb.scale * 85.0 * mRng.logUniform(0.3, 2.0));
        const uint32_t out = mBuilder.addOutput(mType, outDims, outScale, mRng.range(mLow, high()));
        mBuilder.addOperation(type, {inA, inB, int32(fuse)}, {out});
    }

    void fullyConnected() {
        const uint32_t batches = mRng.urange(1, 4);
        const uint32_t units = mRng.urange(1, 32);
        std::vector<uint32_t> inDims;
        uint32_t inputSize;
        if (mRng.chance(0.25)) {
            // Rank 4, flattened to [batches, h * w * c] by the operation.
            inDims = {batches, mRng.urange(1, 4), mRng.urange(1, 4), mRng.urange(1, 8)};
            inputSize = inDims[1] * inDims[2] * inDims[3];
        } else {
            inputSize = mRng.urange(1, 64);
            inDims = {batches, inputSize};
        }
        const Quant inQ = activationQuant();
        const uint32_t in = input(inDims, inQ);
        const Quant wQ{mRng.logUniform(0.002, 0.05), mRng.range(mLow, high())};
        const std::vector<uint8_t> weights = randomBytes(size_t{units} * inputSize);
        const uint32_t w = constant(mType, {units, inputSize}, weights.data(), weights.size(), wQ);
        std::vector<int32_t> biasValues(units);
        for (int32_t& v : biasValues) v = mRng.range(-20000, 20000);
        const uint32_t bias = constant(OperandType::TENSOR_INT32, {units}, biasValues.data(),
                                       biasValues.size() * 4, {inQ.scale * wQ.scale, 0});
        mDescription << " input " << toString(inDims) << " weights [" << units << "," << inputSize
                     << "]";
        const int32_t fuse = activation();
        const Quant outQ{static_cast<float>(inQ.scale * wQ.scale * std::sqrt(double(inputSize)) *
                                            85.0 * mRng.logUniform(0.3, 2.0)),
                         mRng.range(mLow, high())};
        const uint32_t out =
            mBuilder.addOutput(mType, {batches, units}, outQ.scale, outQ.zeroPoint);
        mBuilder.addOperation(OperationType::FULLY_CONNECTED, {in, w, bias, int32(fuse)}, {out});
    }

    Rng mRng;
    OperandType mType;
    int32_t mLow = 0;
    ModelBuilder mBuilder;
    std::vector<TensorData> mInputs;
    std::ostringstream mDescription;
};

}  // namespace

RandomTest makeRandomTest(uint32_t seed) {
    return Generator(seed).build(seed);
}

uint32_t randomTestSeed(uint32_t runSeed, uint32_t index) {
    Rng rng((uint64_t{runSeed} << 32) | index);
    return static_cast<uint32_t>(rng.next() >> 32);
}

}  // namespace nncosim
