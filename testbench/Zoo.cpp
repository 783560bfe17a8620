#include "testbench/Zoo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include <Eigen/Core>

#include "model/Builder.h"

namespace nncosim::zoo {
namespace {

constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;
/// Constants larger than this go to shared memory, as the NNAPI runtime does.
constexpr size_t kMaxCopiedConstantBytes = 128;
/// Quantized tensors cover their values' mean ± this many standard deviations.
constexpr double kRangeDeviations = 4.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Act { kNone, kRelu, kRelu6 };

int32_t fuseCode(Act act) {
    switch (act) {
        case Act::kNone:
            return 0;
        case Act::kRelu:
            return 1;
        case Act::kRelu6:
            return 3;
    }
    return 0;
}
double actLow(Act act) {
    return act == Act::kNone ? -kInf : 0.0;
}
double actHigh(Act act) {
    return act == Act::kRelu6 ? 6.0 : kInf;
}

/// Mean and variance of one channel's values (over positions and random inputs).
struct Moments {
    double mean = 0.0;
    double var = 0.0;
};

/// Moments of clamp(X, lo, hi) for X ~ N(mean, sd²).
Moments clampedNormal(double mean, double sd, double lo, double hi) {
    auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
    auto pdf = [](double z) {
        return std::isinf(z) ? 0.0 : std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
    };
    auto zpdf = [&](double z) { return std::isinf(z) ? 0.0 : z * pdf(z); };
    const double a = (lo - mean) / sd, b = (hi - mean) / sd;
    const double pa = cdf(a), pb = cdf(b), inside = pb - pa;
    const double loPart = std::isinf(lo) ? 0.0 : lo * pa;
    const double hiPart = std::isinf(hi) ? 0.0 : hi * (1.0 - pb);
    const double lo2 = std::isinf(lo) ? 0.0 : lo * lo * pa;
    const double hi2 = std::isinf(hi) ? 0.0 : hi * hi * (1.0 - pb);
    const double m1 = loPart + hiPart + mean * inside + sd * (pdf(a) - pdf(b));
    const double m2 = lo2 + hi2 + (mean * mean + sd * sd) * inside +
                      2.0 * mean * sd * (pdf(a) - pdf(b)) + sd * sd * (zpdf(a) - zpdf(b));
    return {m1, std::max(0.0, m2 - m1 * m1)};
}

/// What a weighted layer aims its pre-activations at: each output channel's mean is drawn
/// uniformly from [meanLow, meanHigh], its standard deviation is `sd`.
struct Target {
    double meanLow;
    double meanHigh;
    double sd;
};

// Targets per role: ReLU6 layers mostly in range with some zeros and rare clipping, ReLU
// layers likewise, linear layers (projections, residual branches) centred, logits spread.
constexpr Target kRelu6Target{0.0, 1.5, 1.5};
constexpr Target kReluTarget{0.0, 1.0, 1.0};
constexpr Target kLinearTarget{-0.5, 0.5, 1.0};
constexpr Target kLogitTarget{-1.0, 1.0, 2.0};

/// An activation tensor and what the generator knows about its values.
struct Tensor {
    uint32_t operand = 0;
    std::vector<uint32_t> dims;     ///< NHWC, or [1, C] in the classifier
    std::vector<Moments> channels;  ///< one per channel (last dimension)
    float scale = 0.0f;             ///< quant8 only
    int32_t zeroPoint = 0;
    uint32_t depth() const { return dims.back(); }
};

uint32_t sameOutputSize(uint32_t in, uint32_t stride) {
    return (in + stride - 1) / stride;
}

/// Builds a network layer by layer: draws weights, normalizes them per output channel so the
/// pre-activations hit their Target, and tracks each channel's moments to size quantization.
class NetBuilder {
  public:
    NetBuilder(Precision precision, uint32_t seed, bool converterStyle)
        : mPrecision(precision), mRng(seed), mConverterStyle(converterStyle) {}

    bool converterStyle() const { return mConverterStyle; }

    /// The NHWC input; in converter style an NCHW model input and its TRANSPOSE.
    Tensor input(uint32_t size) {
        Tensor t;
        t.dims = {1, size, size, 3};
        if (quantized()) {
            // Reals (q - 128) / 128, as MobileNet's [-1, 1) preprocessing is quantized.
            t.scale = 1.0f / 128.0f;
            t.zeroPoint = 128;
        }
        t.channels.assign(3, Moments{0.0, 1.0 / 3.0});  // uniform in [-1, 1]
        if (!mConverterStyle) {
            t.operand = mBuilder.addInput(activationType(), t.dims, t.scale, t.zeroPoint);
            return t;
        }
        const uint32_t nchw =
            mBuilder.addInput(activationType(), {1, 3, size, size}, t.scale, t.zeroPoint);
        const std::vector<int32_t> perm = {0, 2, 3, 1};
        const uint32_t permOperand =
            constant(OperandType::TENSOR_INT32, {4}, perm.data(), 16, 0.0f, 0);
        t.operand = mBuilder.addOperand(activationType(), t.dims, t.scale, t.zeroPoint);
        mBuilder.addOperation(OperationType::TRANSPOSE, {nchw, permOperand}, {t.operand});
        return t;
    }

    Tensor conv(Tensor x, uint32_t outChannels, uint32_t kernel, uint32_t stride, Act act,
                Target target, uint32_t dilation = 1) {
        const uint32_t inChannels = x.depth();
        const std::vector<uint32_t> filterDims = {outChannels, kernel, kernel, inChannels};
        // Filter [out, kh, kw, in]: element e feeds output e / (kh*kw*in) from input e % in.
        auto route = [&](size_t e) {
            return std::make_pair(static_cast<uint32_t>(e / (kernel * kernel * inChannels)),
                                  static_cast<uint32_t>(e % inChannels));
        };
        auto layer = weightedLayer(x, filterDims, outChannels, route, target, /*channelDim=*/0);
        const std::vector<uint32_t> dims = {1, sameOutputSize(x.dims[1], stride),
                                            sameOutputSize(x.dims[2], stride), outChannels};
        const uint32_t padding = windowPadding(x, kernel, dilation);
        Tensor out = activation(dims, layer.preActivation, act);
        std::vector<uint32_t> inputs = {
            x.operand,      layer.filter,   layer.bias,           padding,
            scalar(stride), scalar(stride), scalar(fuseCode(act))};
        if (dilation != 1) {
            inputs.insert(inputs.end(),
                          {mBuilder.addBool(false), scalar(dilation), scalar(dilation)});
        }
        mBuilder.addOperation(OperationType::CONV_2D, inputs, {out.operand});
        return out;
    }

    Tensor depthwise(Tensor x, uint32_t kernel, uint32_t stride, Act act, Target target) {
        const uint32_t channels = x.depth();
        const std::vector<uint32_t> filterDims = {1, kernel, kernel, channels};
        auto route = [&](size_t e) {
            const auto c = static_cast<uint32_t>(e % channels);
            return std::make_pair(c, c);
        };
        auto layer = weightedLayer(x, filterDims, channels, route, target, /*channelDim=*/3);
        const std::vector<uint32_t> dims = {1, sameOutputSize(x.dims[1], stride),
                                            sameOutputSize(x.dims[2], stride), channels};
        const uint32_t padding = windowPadding(x, kernel, 1);
        Tensor out = activation(dims, layer.preActivation, act);
        mBuilder.addOperation(OperationType::DEPTHWISE_CONV_2D,
                              {x.operand, layer.filter, layer.bias, padding, scalar(stride),
                               scalar(stride), scalar(1), scalar(fuseCode(act))},
                              {out.operand});
        return out;
    }

    Tensor fullyConnected(const Tensor& x, uint32_t units, Target target) {
        const uint32_t inputs = x.depth();
        auto route = [&](size_t e) {
            return std::make_pair(static_cast<uint32_t>(e / inputs),
                                  static_cast<uint32_t>(e % inputs));
        };
        // NNAPI has no per-channel FULLY_CONNECTED weights: per-tensor in every quant8 variant.
        auto layer = weightedLayer(x, {units, inputs}, units, route, target, std::nullopt);
        Tensor out = activation({1, units}, layer.preActivation, Act::kNone);
        mBuilder.addOperation(OperationType::FULLY_CONNECTED,
                              {x.operand, layer.filter, layer.bias, scalar(fuseCode(Act::kNone))},
                              {out.operand});
        return out;
    }

    /// a + b with the activation fused; the two are taken as independent.
    Tensor add(const Tensor& a, const Tensor& b, Act act) {
        std::vector<Normal> pre(a.depth());
        for (size_t c = 0; c < pre.size(); ++c) {
            pre[c] = {a.channels[c].mean + b.channels[c].mean,
                      std::sqrt(a.channels[c].var + b.channels[c].var)};
        }
        Tensor out = activation(a.dims, pre, act);
        mBuilder.addOperation(OperationType::ADD, {a.operand, b.operand, scalar(fuseCode(act))},
                              {out.operand});
        return out;
    }

    Tensor maxPool(const Tensor& x, uint32_t kernel, uint32_t stride) {
        Tensor out = sameQuantAs(x, {1, sameOutputSize(x.dims[1], stride),
                                     sameOutputSize(x.dims[2], stride), x.depth()});
        // Roughly the maximum of nine normal samples (mean + 1.5 sd, spread 0.7 sd); measured
        // on the generated networks, this keeps the next layer on target.
        for (Moments& m : out.channels) m = {m.mean + 1.5 * std::sqrt(m.var), 0.5 * m.var};
        mBuilder.addOperation(OperationType::MAX_POOL_2D,
                              {x.operand, scalar(kPaddingSame), scalar(stride), scalar(stride),
                               scalar(kernel), scalar(kernel), scalar(fuseCode(Act::kNone))},
                              {out.operand});
        return out;
    }

    /// The average over the whole feature map, [1, 1, 1, C]: AVERAGE_POOL_2D, or in converter
    /// style MEAN keeping the dimensions.
    Tensor averagePoolGlobal(const Tensor& x) {
        if (mConverterStyle) return mean(x, true);
        Tensor out = sameQuantAs(x, {1, 1, 1, x.depth()});
        shrinkForPooling(out, x);
        mBuilder.addOperation(OperationType::AVERAGE_POOL_2D,
                              {x.operand, scalar(kPaddingValid), scalar(1), scalar(1),
                               scalar(x.dims[2]), scalar(x.dims[1]), scalar(fuseCode(Act::kNone))},
                              {out.operand});
        return out;
    }

    /// MEAN over height and width without kept dimensions: [1, C].
    Tensor meanGlobal(const Tensor& x) { return mean(x, false); }

    /// CONCATENATION along `axis`; quant8 takes a range covering every part's.
    Tensor concat(const std::vector<Tensor>& parts, uint32_t axis) {
        Tensor out = parts[0];
        out.dims[axis] = 0;
        out.channels.clear();
        double low = 0.0, high = 0.0;
        std::vector<uint32_t> inputs;
        for (const Tensor& t : parts) {
            out.dims[axis] += t.dims[axis];
            if (axis + 1 == t.dims.size() || out.channels.empty())
                out.channels.insert(out.channels.end(), t.channels.begin(), t.channels.end());
            low = std::min(low, -t.zeroPoint * double{t.scale});
            high = std::max(high, (255 - t.zeroPoint) * double{t.scale});
            inputs.push_back(t.operand);
        }
        if (quantized()) {
            out.scale = static_cast<float>((high - low) / 255.0);
            out.zeroPoint = std::clamp(static_cast<int32_t>(std::lround(-low / out.scale)), 0, 255);
        }
        inputs.push_back(scalar(static_cast<int32_t>(axis)));
        out.operand = mBuilder.addOperand(activationType(), out.dims, out.scale, out.zeroPoint);
        mBuilder.addOperation(OperationType::CONCATENATION, inputs, {out.operand});
        return out;
    }

    /// RESIZE_BILINEAR to height x width (NNAPI's default corners).
    Tensor resizeBilinear(const Tensor& x, uint32_t height, uint32_t width) {
        Tensor out = sameQuantAs(x, {1, height, width, x.depth()});
        mBuilder.addOperation(
            OperationType::RESIZE_BILINEAR,
            {x.operand, scalar(static_cast<int32_t>(width)), scalar(static_cast<int32_t>(height))},
            {out.operand});
        return out;
    }

    /// LOGISTIC into a model output; quant8 probabilities have scale 1/256.
    void logisticOutput(const Tensor& x) {
        const float scale = quantized() ? 1.0f / 256.0f : 0.0f;
        const uint32_t out = mBuilder.addOutput(activationType(), x.dims, scale, 0);
        mBuilder.addOperation(OperationType::LOGISTIC, {x.operand}, {out});
    }

    /// Makes the temporary `x` a model output.
    void markOutput(const Tensor& x) {
        Model& model = mBuilder.model();
        model.main.operands[x.operand].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
        model.main.outputIndexes.push_back(x.operand);
    }

    Tensor reshape(const Tensor& x, const std::vector<uint32_t>& dims) {
        Tensor out = sameQuantAs(x, dims);
        const std::vector<int32_t> shape(dims.begin(), dims.end());
        const uint32_t shapeOperand =
            constant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(dims.size())}, shape.data(),
                     shape.size() * sizeof(int32_t), 0.0f, 0);
        mBuilder.addOperation(OperationType::RESHAPE, {x.operand, shapeOperand}, {out.operand});
        return out;
    }

    /// SOFTMAX (beta 1) into the model's output; quant8 probabilities have scale 1/256.
    void softmaxOutput(const Tensor& x) {
        const float scale = quantized() ? 1.0f / 256.0f : 0.0f;
        const uint32_t out = mBuilder.addOutput(activationType(), x.dims, scale, 0);
        const Eigen::half one(1.0f);
        const uint32_t beta = half() ? mBuilder.addConstantBytes(OperandType::FLOAT16, {}, &one, 2)
                                     : mBuilder.addFloat32(1.0f);
        mBuilder.addOperation(OperationType::SOFTMAX, {x.operand, beta}, {out});
    }

    Model build() { return mBuilder.build(); }

  private:
    struct Normal {
        double mean = 0.0;
        double sd = 1.0;
    };
    struct Layer {
        uint32_t filter = 0;
        uint32_t bias = 0;
        std::vector<Normal> preActivation;  ///< per output channel
    };

    bool quantized() const {
        return mPrecision == Precision::kQuant8 || mPrecision == Precision::kQuant8PerChannel;
    }
    bool half() const { return mPrecision == Precision::kFloat16; }

    /// A float tensor constant of the model's float type.
    uint32_t floatConstant(std::vector<uint32_t> dims, const std::vector<float>& values) {
        if (!half()) {
            return constant(OperandType::TENSOR_FLOAT32, std::move(dims), values.data(),
                            values.size() * 4, 0.0f, 0);
        }
        const std::vector<Eigen::half> halves(values.begin(), values.end());
        return constant(OperandType::TENSOR_FLOAT16, std::move(dims), halves.data(),
                        halves.size() * 2, 0.0f, 0);
    }

    /// The padding input of a window operation with this kernel: SAME, or in converter style
    /// VALID after an explicit PAD of x by the kernel's half extent (what SAME pads for odd
    /// kernels, split evenly as PyTorch pads).
    uint32_t windowPadding(Tensor& x, uint32_t kernel, uint32_t dilation) {
        const uint32_t half = (kernel - 1) / 2 * dilation;
        if (!mConverterStyle || half == 0) return scalar(kPaddingSame);
        Tensor padded = sameQuantAs(x, {1, x.dims[1] + 2 * half, x.dims[2] + 2 * half, x.depth()});
        const auto h = static_cast<int32_t>(half);
        const std::vector<int32_t> paddings = {0, 0, h, h, h, h, 0, 0};
        const uint32_t paddingsOperand =
            constant(OperandType::TENSOR_INT32, {4, 2}, paddings.data(), 32, 0.0f, 0);
        mBuilder.addOperation(OperationType::PAD, {x.operand, paddingsOperand}, {padded.operand});
        x = padded;
        return scalar(kPaddingValid);
    }

    Tensor mean(const Tensor& x, bool keepDims) {
        Tensor out = sameQuantAs(x, keepDims ? std::vector<uint32_t>{1, 1, 1, x.depth()}
                                             : std::vector<uint32_t>{1, x.depth()});
        shrinkForPooling(out, x);
        const std::vector<int32_t> axes = {1, 2};
        const uint32_t axesOperand =
            constant(OperandType::TENSOR_INT32, {2}, axes.data(), 8, 0.0f, 0);
        mBuilder.addOperation(OperationType::MEAN, {x.operand, axesOperand, scalar(keepDims)},
                              {out.operand});
        return out;
    }
    OperandType activationType() const {
        if (quantized()) return OperandType::TENSOR_QUANT8_ASYMM;
        return half() ? OperandType::TENSOR_FLOAT16 : OperandType::TENSOR_FLOAT32;
    }

    /// Uniform in [lo, hi] from the top 24 bits of the generator (the same on every platform).
    double uniform(double lo, double hi) {
        const double u = (static_cast<double>(mRng() >> 8) + 0.5) / 16777216.0;
        return lo + (hi - lo) * u;
    }

    uint32_t scalar(int32_t value) {
        auto it = mScalars.find(value);
        if (it == mScalars.end()) it = mScalars.emplace(value, mBuilder.addInt32(value)).first;
        return it->second;
    }

    uint32_t constant(OperandType type, std::vector<uint32_t> dims, const void* data, size_t length,
                      float scale, int32_t zeroPoint) {
        if (length > kMaxCopiedConstantBytes) {
            return mBuilder.addReferenceBytes(type, std::move(dims), data, length, scale,
                                              zeroPoint);
        }
        return mBuilder.addConstantBytes(type, std::move(dims), data, length, scale, zeroPoint);
    }

    /// Draws a filter whose element e feeds output channel route(e).first from input channel
    /// route(e).second, scales each output channel's weights so its pre-activation has the
    /// target spread, and sets its bias so it has the target mean. Adds filter and bias in the
    /// model's precision; per-channel quant8 along `channelDim` when asked and available.
    template <typename Route>
    Layer weightedLayer(const Tensor& x, const std::vector<uint32_t>& filterDims,
                        uint32_t outChannels, Route route, Target target,
                        std::optional<uint32_t> channelDim) {
        size_t count = 1;
        for (uint32_t d : filterDims) count *= d;
        std::vector<float> weights(count);
        std::vector<double> sumSquares(outChannels, 0.0), sumMeans(outChannels, 0.0);
        for (size_t e = 0; e < count; ++e) {
            const double w = uniform(-1.0, 1.0);
            weights[e] = static_cast<float>(w);
            const auto [k, i] = route(e);
            sumSquares[k] += w * w * x.channels[i].var;
            sumMeans[k] += w * x.channels[i].mean;
        }
        std::vector<double> gain(outChannels), bias(outChannels);
        Layer layer;
        layer.preActivation.resize(outChannels);
        for (uint32_t k = 0; k < outChannels; ++k) {
            gain[k] = sumSquares[k] > 0.0 ? target.sd / std::sqrt(sumSquares[k]) : 1.0;
            const double mean = uniform(target.meanLow, target.meanHigh);
            bias[k] = mean - gain[k] * sumMeans[k];
            layer.preActivation[k] = {mean, sumSquares[k] > 0.0 ? target.sd : 0.0};
        }
        for (size_t e = 0; e < count; ++e)
            weights[e] = static_cast<float>(weights[e] * gain[route(e).first]);

        const std::vector<uint32_t> biasDims = {outChannels};
        if (!quantized()) {
            layer.filter = floatConstant(filterDims, weights);
            layer.bias = floatConstant(biasDims, std::vector<float>(bias.begin(), bias.end()));
            return layer;
        }
        std::vector<int32_t> biasValues(outChannels);
        auto quantizeBias = [](double value, double scale) {
            const double q = std::round(value / scale);
            return static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
        };
        if (mPrecision == Precision::kQuant8PerChannel && channelDim) {
            // Symmetric int8 per output channel; the bias scale of channel k is input × filter k.
            std::vector<float> scales(outChannels);
            for (size_t e = 0; e < count; ++e) {
                const uint32_t k = route(e).first;
                scales[k] = std::max(scales[k], std::abs(weights[e]));
            }
            for (float& s : scales) s = s > 0.0f ? s / 127.0f : 1.0f;
            std::vector<int8_t> q(count);
            for (size_t e = 0; e < count; ++e) {
                const float v = std::round(weights[e] / scales[route(e).first]);
                q[e] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
            }
            for (uint32_t k = 0; k < outChannels; ++k)
                biasValues[k] = quantizeBias(bias[k], x.scale * scales[k]);
            layer.filter = constant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, filterDims,
                                    q.data(), count, 0.0f, 0);
            mBuilder.setPerChannelQuant(layer.filter, std::move(scales), *channelDim);
            layer.bias = constant(OperandType::TENSOR_INT32, biasDims, biasValues.data(),
                                  outChannels * 4, 0.0f, 0);
            return layer;
        }
        // Asymmetric uint8 over the whole tensor, its range holding zero.
        const auto [lowIt, highIt] = std::minmax_element(weights.begin(), weights.end());
        const float low = std::min(*lowIt, 0.0f), high = std::max(*highIt, 0.0f);
        const float scale = high > low ? (high - low) / 255.0f : 1.0f;
        const int32_t zeroPoint =
            std::clamp(static_cast<int32_t>(std::lround(-low / scale)), 0, 255);
        std::vector<uint8_t> q(count);
        for (size_t e = 0; e < count; ++e) {
            const float v = std::round(weights[e] / scale) + static_cast<float>(zeroPoint);
            q[e] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
        }
        const float biasScale = x.scale * scale;
        for (uint32_t k = 0; k < outChannels; ++k) biasValues[k] = quantizeBias(bias[k], biasScale);
        layer.filter = constant(OperandType::TENSOR_QUANT8_ASYMM, filterDims, q.data(), count,
                                scale, zeroPoint);
        layer.bias = constant(OperandType::TENSOR_INT32, biasDims, biasValues.data(),
                              outChannels * 4, biasScale, 0);
        return layer;
    }

    /// A new temporary holding act(pre-activation): its moments, and for quant8 a range
    /// covering every channel's mean ± kRangeDeviations standard deviations (within the
    /// activation's bounds, always holding zero).
    Tensor activation(const std::vector<uint32_t>& dims, const std::vector<Normal>& pre, Act act) {
        Tensor out;
        out.dims = dims;
        double low = 0.0, high = 0.0;
        for (const Normal& n : pre) {
            out.channels.push_back(
                n.sd > 0.0 ? clampedNormal(n.mean, n.sd, actLow(act), actHigh(act))
                           : Moments{std::clamp(n.mean, actLow(act), actHigh(act)), 0.0});
            low = std::min(low, n.mean - kRangeDeviations * n.sd);
            high = std::max(high, n.mean + kRangeDeviations * n.sd);
        }
        if (quantized()) {
            low = std::max(low, actLow(act));
            high = std::min(high, actHigh(act));
            out.scale = static_cast<float>(high > low ? (high - low) / 255.0 : 1.0 / 255.0);
            out.zeroPoint = std::clamp(static_cast<int32_t>(std::lround(-low / out.scale)), 0, 255);
        }
        out.operand = mBuilder.addOperand(activationType(), dims, out.scale, out.zeroPoint);
        return out;
    }

    /// A temporary with x's quantization and moments (pooling and reshapes keep them; NNAPI
    /// requires it of quant8 pooling, MEAN and RESHAPE).
    Tensor sameQuantAs(const Tensor& x, const std::vector<uint32_t>& dims) {
        Tensor out = x;
        out.dims = dims;
        out.operand = mBuilder.addOperand(activationType(), dims, x.scale, x.zeroPoint);
        return out;
    }

    /// Averaging over the map keeps the mean and shrinks the spread; neighbouring positions
    /// are correlated, so count a quarter of them as independent.
    static void shrinkForPooling(Tensor& out, const Tensor& x) {
        const double independent = std::max(1.0, x.dims[1] * x.dims[2] / 4.0);
        for (Moments& m : out.channels) m.var /= independent;
    }

    Precision mPrecision;
    std::mt19937 mRng;
    bool mConverterStyle;
    ModelBuilder mBuilder;
    std::map<int32_t, uint32_t> mScalars;
};

uint32_t mobileNetV1Depth(uint32_t channels, float alpha) {
    return std::max<uint32_t>(8, static_cast<uint32_t>(static_cast<float>(channels) * alpha));
}

/// MobileNet-v2's channel rounding: to a multiple of 8, never below 90% of the request.
uint32_t makeDivisible(float value, uint32_t divisor = 8) {
    uint32_t v = std::max<uint32_t>(
        divisor, static_cast<uint32_t>(value + divisor / 2.0f) / divisor * divisor);
    if (static_cast<float>(v) < 0.9f * value) v += divisor;
    return v;
}

/// The classifier every network ends with: logits by FULLY_CONNECTED, then SOFTMAX.
void classifier(NetBuilder& net, const Tensor& features, uint32_t numClasses) {
    net.softmaxOutput(net.fullyConnected(features, numClasses, kLogitTarget));
}

void buildMobileNetV1(NetBuilder& net, const ZooConfig& config) {
    const float alpha = config.widthMultiplier;
    Tensor x = net.input(config.inputSize);
    x = net.conv(x, mobileNetV1Depth(32, alpha), 3, 2, Act::kRelu6, kRelu6Target);
    // Depthwise-separable blocks: (pointwise channels, depthwise stride).
    static const std::pair<uint32_t, uint32_t> kBlocks[] = {
        {64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
        {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
    for (const auto& [channels, stride] : kBlocks) {
        x = net.depthwise(x, 3, stride, Act::kRelu6, kRelu6Target);
        x = net.conv(x, mobileNetV1Depth(channels, alpha), 1, 1, Act::kRelu6, kRelu6Target);
    }
    x = net.averagePoolGlobal(x);
    x = net.reshape(x, {1, x.depth()});
    classifier(net, x, config.numClasses);
}

void buildMobileNetV2(NetBuilder& net, const ZooConfig& config) {
    const float alpha = config.widthMultiplier;
    Tensor x = net.input(config.inputSize);
    x = net.conv(x, makeDivisible(32 * alpha), 3, 2, Act::kRelu6, kRelu6Target);
    struct Stage {
        uint32_t expansion, channels, repeats, stride;
    };
    static const Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                    {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    for (const Stage& stage : kStages) {
        const uint32_t outChannels = makeDivisible(static_cast<float>(stage.channels) * alpha);
        for (uint32_t r = 0; r < stage.repeats; ++r) {
            const uint32_t stride = r == 0 ? stage.stride : 1;
            Tensor y = x;
            if (stage.expansion != 1) {
                y = net.conv(y, x.depth() * stage.expansion, 1, 1, Act::kRelu6, kRelu6Target);
            }
            y = net.depthwise(y, 3, stride, Act::kRelu6, kRelu6Target);
            y = net.conv(y, outChannels, 1, 1, Act::kNone, kLinearTarget);  // linear bottleneck
            x = stride == 1 && x.depth() == outChannels ? net.add(x, y, Act::kNone) : y;
        }
    }
    x = net.conv(x, alpha > 1.0f ? makeDivisible(1280 * alpha) : 1280, 1, 1, Act::kRelu6,
                 kRelu6Target);
    classifier(net, net.meanGlobal(x), config.numClasses);
}

// The heads' datasets: PASCAL VOC (21 classes) and COCO (91).
constexpr uint32_t kSegmentationClasses = 21;
constexpr uint32_t kDetectionClasses = 91;
constexpr uint32_t kAnchors = 3;

/// Channels scaled by the width multiplier, at least 8.
uint32_t scaledWidth(uint32_t channels, float alpha) {
    return std::max<uint32_t>(8, static_cast<uint32_t>(std::lround(channels * alpha)));
}

void buildDeepLabHead(NetBuilder& net, const ZooConfig& config) {
    const auto width = [&](uint32_t c) { return scaledWidth(c, config.widthMultiplier); };
    Tensor x = net.input(config.inputSize);
    x = net.conv(x, width(32), 3, 2, Act::kRelu6, kRelu6Target);
    x = net.conv(x, width(64), 3, 2, Act::kRelu6, kRelu6Target);
    // Atrous spatial pyramid pooling: 1x1, 3x3 dilated 2 and 4, and the image's average.
    const uint32_t h = x.dims[1], w = x.dims[2];
    const uint32_t c = width(64);
    Tensor pooled = net.conv(net.averagePoolGlobal(x), c, 1, 1, Act::kRelu, kReluTarget);
    const Tensor branches = net.concat(
        {net.conv(x, c, 1, 1, Act::kRelu, kReluTarget),
         net.conv(x, c, 3, 1, Act::kRelu, kReluTarget, 2),
         net.conv(x, c, 3, 1, Act::kRelu, kReluTarget, 4), net.resizeBilinear(pooled, h, w)},
        3);
    Tensor y = net.conv(branches, c, 1, 1, Act::kRelu, kReluTarget);
    y = net.conv(y, kSegmentationClasses, 1, 1, Act::kNone, kLogitTarget);
    net.markOutput(net.resizeBilinear(y, config.inputSize, config.inputSize));
}

void buildSsdHead(NetBuilder& net, const ZooConfig& config) {
    const auto width = [&](uint32_t c) { return scaledWidth(c, config.widthMultiplier); };
    Tensor x = net.input(config.inputSize);
    x = net.conv(x, width(32), 3, 2, Act::kRelu6, kRelu6Target);
    x = net.conv(x, width(64), 3, 2, Act::kRelu6, kRelu6Target);
    const Tensor f1 = net.conv(x, width(128), 3, 2, Act::kRelu6, kRelu6Target);
    const Tensor f2 = net.conv(f1, width(256), 3, 2, Act::kRelu6, kRelu6Target);
    std::vector<Tensor> boxes, classes;
    for (const Tensor& f : {f1, f2}) {
        const uint32_t anchors = f.dims[1] * f.dims[2] * kAnchors;
        boxes.push_back(net.reshape(net.conv(f, kAnchors * 4, 3, 1, Act::kNone, kLinearTarget),
                                    {1, anchors, 4}));
        classes.push_back(
            net.reshape(net.conv(f, kAnchors * kDetectionClasses, 3, 1, Act::kNone, kLogitTarget),
                        {1, anchors, kDetectionClasses}));
    }
    net.markOutput(net.concat(boxes, 1));
    net.logisticOutput(net.concat(classes, 1));
}

void buildResNet18(NetBuilder& net, const ZooConfig& config) {
    auto width = [&](uint32_t channels) {
        return std::max<uint32_t>(
            8, static_cast<uint32_t>(std::lround(channels * config.widthMultiplier)));
    };
    Tensor x = net.input(config.inputSize);
    x = net.conv(x, width(64), 7, 2, Act::kRelu, kReluTarget);
    x = net.maxPool(x, 3, 2);
    static const std::pair<uint32_t, uint32_t> kStages[] = {{64, 1}, {128, 2}, {256, 2}, {512, 2}};
    for (const auto& [channels, firstStride] : kStages) {
        for (uint32_t block = 0; block < 2; ++block) {
            const uint32_t stride = block == 0 ? firstStride : 1;
            const uint32_t outChannels = width(channels);
            Tensor y = net.conv(x, outChannels, 3, stride, Act::kRelu, kReluTarget);
            y = net.conv(y, outChannels, 3, 1, Act::kNone, kLinearTarget);
            // Projection shortcut where the shape changes (ResNet's option B).
            const Tensor shortcut =
                stride != 1 || x.depth() != outChannels
                    ? net.conv(x, outChannels, 1, stride, Act::kNone, kLinearTarget)
                    : x;
            x = net.add(y, shortcut, Act::kRelu);
        }
    }
    classifier(net, net.meanGlobal(x), config.numClasses);
}

}  // namespace

std::string nameOf(Network network) {
    switch (network) {
        case Network::kMobileNetV1:
            return "mobilenet_v1";
        case Network::kMobileNetV2:
            return "mobilenet_v2";
        case Network::kResNet18:
            return "resnet18";
        case Network::kDeepLabHead:
            return "deeplab_head";
        case Network::kSsdHead:
            return "ssd_head";
    }
    return "<unknown>";
}

const std::vector<Network>& allNetworks() {
    static const std::vector<Network> kAll = {Network::kMobileNetV1, Network::kMobileNetV2,
                                              Network::kResNet18, Network::kDeepLabHead,
                                              Network::kSsdHead};
    return kAll;
}

const std::vector<Network>& classifierNetworks() {
    static const std::vector<Network> kClassifiers = {Network::kMobileNetV1, Network::kMobileNetV2,
                                                      Network::kResNet18};
    return kClassifiers;
}

std::optional<Network> networkFromName(std::string_view name) {
    for (Network n : allNetworks()) {
        if (nameOf(n) == name) return n;
    }
    return std::nullopt;
}

std::string nameOf(Precision precision) {
    switch (precision) {
        case Precision::kFloat32:
            return "float32";
        case Precision::kFloat16:
            return "float16";
        case Precision::kRelaxed:
            return "relaxed";
        case Precision::kQuant8:
            return "quant8";
        case Precision::kQuant8PerChannel:
            return "quant8_per_channel";
    }
    return "<unknown>";
}

std::string modelName(const ZooConfig& config) {
    char alpha[32];
    std::snprintf(alpha, sizeof(alpha), "%g", config.widthMultiplier);
    std::string a = alpha;
    if (a.find('.') == std::string::npos) a += ".0";
    return nameOf(config.network) + "_" + a + "_" + std::to_string(config.inputSize) + "_" +
           nameOf(config.precision) + (config.converterStyle ? "_converter" : "");
}

Result<Model> buildZooModel(const ZooConfig& config) {
    if (config.inputSize == 0) return invalidArgument("zoo: input size must be positive");
    if (!(config.widthMultiplier > 0.0f) || !std::isfinite(config.widthMultiplier)) {
        return invalidArgument("zoo: width multiplier must be positive, got ",
                               config.widthMultiplier);
    }
    if (config.numClasses == 0)
        return invalidArgument("zoo: the classifier needs at least one class");
    NetBuilder net(config.precision, config.seed, config.converterStyle);
    switch (config.network) {
        case Network::kMobileNetV1:
            buildMobileNetV1(net, config);
            break;
        case Network::kMobileNetV2:
            buildMobileNetV2(net, config);
            break;
        case Network::kResNet18:
            buildResNet18(net, config);
            break;
        case Network::kDeepLabHead:
            buildDeepLabHead(net, config);
            break;
        case Network::kSsdHead:
            buildSsdHead(net, config);
            break;
    }
    Model model = net.build();
    model.relaxComputationFloat32toFloat16 = config.precision == Precision::kRelaxed;
    return model;
}

uint64_t countMacs(const Model& model) {
    uint64_t macs = 0;
    for (const Operation& op : model.main.operations) {
        if (op.inputs.size() < 2 || op.outputs.empty()) continue;
        const auto& filter = model.main.operands[op.inputs[1]].dimensions;
        const uint64_t outputs = elementCount(model.main.operands[op.outputs[0]].dimensions);
        if (op.type == OperationType::CONV_2D && filter.size() == 4) {
            macs += outputs * filter[1] * filter[2] * filter[3];
        } else if (op.type == OperationType::DEPTHWISE_CONV_2D && filter.size() == 4) {
            macs += outputs * filter[1] * filter[2];
        } else if (op.type == OperationType::FULLY_CONNECTED && filter.size() == 2) {
            macs += outputs * filter[1];
        }
    }
    return macs;
}

Result<std::vector<TensorData>> randomInputs(const Model& model, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<TensorData> inputs;
    for (uint32_t index : model.main.inputIndexes) {
        const Operand& operand = model.main.operands.at(index);
        const uint64_t count = elementCount(operand.dimensions);
        if (count == 0 || operand.dimensions.empty()) {
            return invalidArgument("zoo: input operand ", index, " has unknown dimensions");
        }
        TensorData data{operand.dimensions, {}};
        if (operand.type == OperandType::TENSOR_FLOAT32 ||
            operand.type == OperandType::TENSOR_FLOAT16) {
            std::vector<float> values(count);
            for (float& v : values)
                v = static_cast<float>(static_cast<double>(rng() >> 8) / 8388608.0 - 1.0);
            if (operand.type == OperandType::TENSOR_FLOAT32) {
                data.bytes.resize(count * sizeof(float));
                std::memcpy(data.bytes.data(), values.data(), data.bytes.size());
            } else {
                const std::vector<Eigen::half> halves(values.begin(), values.end());
                data.bytes.resize(count * 2);
                std::memcpy(data.bytes.data(), halves.data(), data.bytes.size());
            }
        } else if (operand.type == OperandType::TENSOR_QUANT8_ASYMM) {
            data.bytes.resize(count);
            for (uint8_t& b : data.bytes) b = static_cast<uint8_t>(rng() >> 24);
        } else {
            return invalidArgument("zoo: cannot draw inputs of type ", nameOf(operand.type));
        }
        inputs.push_back(std::move(data));
    }
    return inputs;
}

}  // namespace nncosim::zoo
