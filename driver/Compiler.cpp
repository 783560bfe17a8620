#include "driver/Compiler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "driver/ChainBuilder.h"
#include "driver/CostModel.h"
#include "model/FixedPoint.h"
#include "model/NpuExtension.h"

namespace nncosim::driver {
namespace {

using fixedpoint::ActivationRange;
using fixedpoint::QuantizedMultiplier;

constexpr uint32_t kAlign = npu::kDramBusBytes;
constexpr uint32_t kLanes = npu::kArrayCols;
// Scratchpad words one element-wise or lookup descriptor may load per operand.
constexpr uint32_t kElementwiseWords = npu::kSpadWords / 2;
constexpr uint32_t kMaxCount = 0xffff;    // 16-bit INNER and COUNT fields
constexpr uint32_t kMaxByteField = 0xff;  // kernel, stride, dilation and padding fields

uint32_t alignUp(uint64_t v, uint32_t a) {
    return static_cast<uint32_t>((v + a - 1) / a * a);
}
// The most device memory one program may use (its addresses are 32 bits with room to relocate).
constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 31;
// Where a tensor of `bytes` placed at `at` ends, aligned; past kMaxArenaBytes it only says so.
uint64_t placeEnd(uint64_t at, uint64_t bytes) {
    if (at > kMaxArenaBytes || bytes > kMaxArenaBytes) return kMaxArenaBytes + 1;
    return (at + bytes + kAlign - 1) / kAlign * kAlign;
}
uint32_t ceilDiv(uint64_t a, uint64_t b) {
    return static_cast<uint32_t>((a + b - 1) / b);
}

bool isQuant8(OperandType t) {
    return t == OperandType::TENSOR_QUANT8_ASYMM || t == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}
bool isSigned(OperandType t) {
    return t == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}
int32_t typeMin(OperandType t) {
    return isSigned(t) ? -128 : 0;
}
int32_t typeMax(OperandType t) {
    return isSigned(t) ? 127 : 255;
}

// Reads constant scalars and tensors of the main graph.
class Constants {
  public:
    explicit Constants(const Model& model, const InputValues* inputValues = nullptr)
        : mModel(model), mInputValues(inputValues) {}
    const Operand& operand(uint32_t index) const { return mModel.main.operands[index]; }
    bool isConstant(uint32_t index) const {
        const auto lt = operand(index).lifetime;
        return lt == OperandLifeTime::CONSTANT_COPY || lt == OperandLifeTime::CONSTANT_REFERENCE ||
               (mInputValues && mInputValues->count(index));
    }
    /// A constant, or a model input whose value is known at compile time (weights given as inputs).
    bool isConstantOrInput(uint32_t index) const {
        return isConstant(index) || operand(index).lifetime == OperandLifeTime::SUBGRAPH_INPUT;
    }
    const uint8_t* data(uint32_t index) const {
        if (mInputValues) {
            auto it = mInputValues->find(index);
            if (it != mInputValues->end()) return it->second.data();
        }
        return isConstant(index) ? constantData(mModel, operand(index)) : nullptr;
    }
    template <typename T>
    std::optional<T> scalar(uint32_t index) const {
        const uint8_t* p = data(index);
        if (!p || operand(index).location.length < sizeof(T)) return std::nullopt;
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }

  private:
    const Model& mModel;
    const InputValues* mInputValues;
};

struct Padding {
    uint32_t head = 0, tail = 0;
};

// Parameters of CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D.
struct WindowParams {
    bool explicitPadding = true;
    int32_t scheme = 0;  // implicit padding: 1 SAME, 2 VALID
    Padding padW, padH;
    uint32_t strideW = 1, strideH = 1, dilationW = 1, dilationH = 1;
    uint32_t filterW = 1, filterH = 1;  // pooling only
    uint32_t depthMultiplier = 1;
    uint32_t groups = 1;
    int32_t activation = 0;
    bool nchw = false;
};

// Reads a window operation's scalar inputs; nullopt when one is not a constant.
std::optional<WindowParams> readWindowParams(const Constants& c, const Operation& op) {
    const auto n = static_cast<uint32_t>(op.inputs.size());
    auto i32 = [&](uint32_t i) { return c.scalar<int32_t>(op.inputs[i]); };
    auto b8 = [&](uint32_t i) -> std::optional<bool> {
        if (i >= n) return false;
        auto v = c.scalar<uint8_t>(op.inputs[i]);
        if (!v) return std::nullopt;
        return *v != 0;
    };
    auto isBool = [&](uint32_t i) {
        return i < n && c.operand(op.inputs[i]).type == OperandType::BOOL;
    };
    WindowParams p;
    std::vector<std::optional<int32_t>> v;
    auto take = [&](std::initializer_list<uint32_t> idx) {
        v.clear();
        for (uint32_t i : idx) v.push_back(i32(i));
        return std::all_of(v.begin(), v.end(),
                           [](const auto& x) { return x.has_value() && *x >= 0; });
    };
    uint32_t next = 0;  // index of the layout input
    switch (op.type) {
        case OperationType::CONV_2D:
            p.explicitPadding = n >= 10 && !isBool(7);
            if (p.explicitPadding) {
                if (!take({3, 4, 5, 6, 7, 8, 9})) return std::nullopt;
                p.padW = {uint32_t(*v[0]), uint32_t(*v[1])};
                p.padH = {uint32_t(*v[2]), uint32_t(*v[3])};
                p.strideW = *v[4], p.strideH = *v[5], p.activation = *v[6];
                next = 10;
            } else {
                if (!take({3, 4, 5, 6})) return std::nullopt;
                p.scheme = *v[0], p.strideW = *v[1], p.strideH = *v[2], p.activation = *v[3];
                next = 7;
            }
            break;
        case OperationType::DEPTHWISE_CONV_2D:
            p.explicitPadding = n >= 11 && !isBool(8);
            if (p.explicitPadding) {
                if (!take({3, 4, 5, 6, 7, 8, 9, 10})) return std::nullopt;
                p.padW = {uint32_t(*v[0]), uint32_t(*v[1])};
                p.padH = {uint32_t(*v[2]), uint32_t(*v[3])};
                p.strideW = *v[4], p.strideH = *v[5], p.depthMultiplier = *v[6],
                p.activation = *v[7];
                next = 11;
            } else {
                if (!take({3, 4, 5, 6, 7})) return std::nullopt;
                p.scheme = *v[0], p.strideW = *v[1], p.strideH = *v[2], p.depthMultiplier = *v[3];
                p.activation = *v[4];
                next = 8;
            }
            break;
        case OperationType::GROUPED_CONV_2D:
            p.explicitPadding = n == 12;
            if (p.explicitPadding) {
                if (!take({3, 4, 5, 6, 7, 8, 9, 10})) return std::nullopt;
                p.padW = {uint32_t(*v[0]), uint32_t(*v[1])};
                p.padH = {uint32_t(*v[2]), uint32_t(*v[3])};
                p.strideW = *v[4], p.strideH = *v[5], p.groups = *v[6], p.activation = *v[7];
                next = 11;
            } else {
                if (!take({3, 4, 5, 6, 7})) return std::nullopt;
                p.scheme = *v[0], p.strideW = *v[1], p.strideH = *v[2], p.groups = *v[3],
                p.activation = *v[4];
                next = 8;
            }
            if (p.groups == 0) return std::nullopt;
            break;
        case OperationType::AVERAGE_POOL_2D:
        case OperationType::MAX_POOL_2D:
            p.explicitPadding = n >= 10;
            if (p.explicitPadding) {
                if (!take({1, 2, 3, 4, 5, 6, 7, 8, 9})) return std::nullopt;
                p.padW = {uint32_t(*v[0]), uint32_t(*v[1])};
                p.padH = {uint32_t(*v[2]), uint32_t(*v[3])};
                p.strideW = *v[4], p.strideH = *v[5], p.filterW = *v[6], p.filterH = *v[7],
                p.activation = *v[8];
                next = 10;
            } else {
                if (!take({1, 2, 3, 4, 5, 6})) return std::nullopt;
                p.scheme = *v[0], p.strideW = *v[1], p.strideH = *v[2], p.filterW = *v[3],
                p.filterH = *v[4];
                p.activation = *v[5];
                next = 7;
            }
            break;
        default:
            return std::nullopt;
    }
    auto layout = b8(next);
    if (!layout) return std::nullopt;
    p.nchw = *layout;
    const bool pooling =
        op.type == OperationType::AVERAGE_POOL_2D || op.type == OperationType::MAX_POOL_2D;
    if (!pooling && op.type != OperationType::GROUPED_CONV_2D && next + 2 < n) {
        auto dw = i32(next + 1), dh = i32(next + 2);
        if (!dw || !dh || *dw < 1 || *dh < 1) return std::nullopt;
        p.dilationW = *dw, p.dilationH = *dh;
    }
    return p;
}

// NNAPI's implicit padding: SAME pads to ceil(in / stride) outputs, VALID pads nothing.
Padding implicitPadding(int32_t scheme, uint32_t in, uint32_t stride, uint32_t filter,
                        uint32_t dilation) {
    if (scheme != 1) return {};
    const uint32_t effective = (filter - 1) * dilation + 1;
    const uint32_t out = (in + stride - 1) / stride;
    const int64_t needed = int64_t{out - 1} * stride + effective;
    const auto total = static_cast<uint32_t>(std::max<int64_t>(0, needed - in));
    return {total / 2, total - total / 2};
}

// Output size of a window, 0 when the window does not fit.
uint32_t windowOutput(uint32_t in, uint32_t filter, uint32_t stride, uint32_t dilation,
                      Padding pad) {
    const int64_t effective = int64_t{filter - 1} * dilation + 1;
    const int64_t span = int64_t{in} + pad.head + pad.tail - effective;
    if (span < 0 || stride == 0) return 0;
    return static_cast<uint32_t>(span / stride + 1);
}

std::optional<ActivationRange> activationRange(int32_t activation, const Operand& out) {
    if (activation < 0 || activation > 3) return std::nullopt;
    return fixedpoint::calculateActivationRange(static_cast<FusedActivation>(activation), out.scale,
                                                out.zeroPoint, typeMin(out.type),
                                                typeMax(out.type));
}

bool shiftFits(const QuantizedMultiplier& m) {
    return m.shift >= -31 && m.shift <= 31;
}

// Per-output-channel requantization of a convolution or fully-connected layer, as the golden
// derives it.
std::optional<std::vector<QuantizedMultiplier>> channelMultipliers(const Operand& in,
                                                                   const Operand& filter,
                                                                   const Operand& bias,
                                                                   const Operand& out,
                                                                   uint32_t channels) {
    std::vector<float> filterScales(channels, filter.scale);
    std::vector<float> biasScales(channels, bias.scale);
    if (filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        const auto* pc = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
        if (!pc || pc->scales.size() != channels) return std::nullopt;
        filterScales = pc->scales;
        for (uint32_t c = 0; c < channels; ++c) biasScales[c] = filterScales[c] * in.scale;
    }
    std::vector<QuantizedMultiplier> result;
    for (uint32_t c = 0; c < channels; ++c) {
        const auto real = fixedpoint::getQuantizedConvolutionMultiplier(in.scale, filterScales[c],
                                                                        biasScales[c], out.scale);
        if (!real) return std::nullopt;
        const auto m = fixedpoint::quantizeMultiplier(*real);
        if (!m || !shiftFits(*m)) return std::nullopt;
        result.push_back(*m);
    }
    return result;
}

// Lookup tables for the unary operations the LUT unit serves: entry i is the output for the
// input whose stored byte is i (the NPU indexes tables by the raw input byte).
using Table = std::array<uint8_t, 256>;

template <typename F>
Table tableOf(OperandType type, F f) {
    Table t{};
    for (int b = 0; b < 256; ++b) {
        const int32_t value = isSigned(type) ? static_cast<int8_t>(b) : b;
        t[b] = static_cast<uint8_t>(f(value));
    }
    return t;
}

std::optional<Table> reluTable(OperationType opType, const Operand& in) {
    const auto act = opType == OperationType::RELU    ? FusedActivation::RELU
                     : opType == OperationType::RELU1 ? FusedActivation::RELU1
                                                      : FusedActivation::RELU6;
    const auto range = fixedpoint::calculateActivationRange(act, in.scale, in.zeroPoint,
                                                            typeMin(in.type), typeMax(in.type));
    if (!range) return std::nullopt;
    return tableOf(in.type, [&](int32_t v) { return std::clamp(v, range->min, range->max); });
}

// LOGISTIC and TANH with the output quantization NNAPI fixes, as the golden computes them.
std::optional<Table> sigmoidTable(OperationType opType, const Operand& in, const Operand& out) {
    const bool logistic = opType == OperationType::LOGISTIC;
    const bool sgn = isSigned(in.type);
    const float expectedScale = logistic ? 1.0f / 256 : 1.0f / 128;
    const int32_t expectedZero = logistic ? (sgn ? -128 : 0) : (sgn ? 0 : 128);
    if (out.scale != expectedScale || out.zeroPoint != expectedZero) return std::nullopt;
    const auto params = fixedpoint::computeSigmoidParams(in.scale);
    if (!params) return std::nullopt;
    using F4 = fixedpoint::FixedPoint<int32_t, fixedpoint::SigmoidParams::kInputIntegerBits>;
    const int32_t lo = typeMin(in.type), hi = typeMax(in.type);
    return tableOf(in.type, [&](int32_t v) {
        const int32_t centred = v - in.zeroPoint;
        if (centred <= -params->inputRangeRadius) return lo;
        if (centred >= params->inputRangeRadius) return hi;
        const F4 x = F4::fromRaw(fixedpoint::multiplyByQuantizedMultiplier(
            centred, params->input.multiplier, params->input.shift));
        const int32_t r = logistic
                              ? fixedpoint::roundingDivideByPOT(fixedpoint::logistic(x).raw(), 23)
                              : fixedpoint::roundingDivideByPOT(fixedpoint::tanh(x).raw(), 24);
        return std::clamp(r + expectedZero, lo, hi);
    });
}

// CONCATENATION of an input whose quantization differs from the output's (Android's
// concatenation with scaling: float rescale, round, clamp); identity otherwise.
Table requantTable(const Operand& in, const Operand& out) {
    if (in.scale == out.scale && in.zeroPoint == out.zeroPoint)
        return tableOf(in.type, [](int32_t v) { return v; });
    const float scale = in.scale * (1.0f / out.scale);
    const float bias = -in.zeroPoint * scale;
    return tableOf(in.type, [&](int32_t v) {
        const int32_t r = static_cast<int32_t>(std::round(v * scale + bias)) + out.zeroPoint;
        return std::clamp(r, typeMin(out.type), typeMax(out.type));
    });
}

// The extension's table is indexed by value - lowest value; the NPU's by the raw byte.
Table lut8Table(const Operand& in, const uint8_t* table) {
    return tableOf(in.type, [&](int32_t v) { return table[npu_extension::lutIndex(in.type, v)]; });
}

bool fullyKnown(const std::vector<uint32_t>& dims) {
    return !dims.empty() &&
           std::none_of(dims.begin(), dims.end(), [](uint32_t d) { return d == 0; });
}

// The RESHAPE target shape with -1 resolved, or nullopt.
std::optional<std::vector<uint32_t>> reshapeTarget(const Constants& c, const Operation& op,
                                                   const std::vector<uint32_t>& inDims) {
    const Operand& shape = c.operand(op.inputs[1]);
    const uint8_t* p = c.data(op.inputs[1]);
    if (!p || shape.dimensions.size() != 1) return std::nullopt;
    const uint32_t rank = shape.dimensions[0];
    std::vector<int32_t> target(rank);
    std::memcpy(target.data(), p, rank * sizeof(int32_t));
    uint64_t known = 1;
    int unknown = -1;
    for (uint32_t i = 0; i < rank; ++i) {
        if (target[i] == -1) {
            if (unknown >= 0) return std::nullopt;
            unknown = static_cast<int>(i);
        } else if (target[i] <= 0) {
            return std::nullopt;
        } else {
            known *= static_cast<uint64_t>(target[i]);
        }
    }
    const uint64_t total = elementCount(inDims);
    std::vector<uint32_t> dims(rank);
    for (uint32_t i = 0; i < rank; ++i) dims[i] = static_cast<uint32_t>(target[i]);
    if (unknown >= 0) {
        if (known == 0 || total % known != 0) return std::nullopt;
        dims[static_cast<size_t>(unknown)] = static_cast<uint32_t>(total / known);
    } else if (known != total) {
        return std::nullopt;
    }
    return dims;
}

// Broadcast of two shapes (right-aligned); nullopt when incompatible.
std::optional<std::vector<uint32_t>> broadcastShape(const std::vector<uint32_t>& a,
                                                    const std::vector<uint32_t>& b) {
    const size_t rank = std::max(a.size(), b.size());
    std::vector<uint32_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const uint32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const uint32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1) return std::nullopt;
        out[i] = std::max(da, db);
    }
    return out;
}

// Cycles a window descriptor takes: the cost model shared with the functional model.
uint64_t windowCycles(const npu::Descriptor& d) {
    return estimateWindowCycles(d);
}

// ---------------------------------------------------------------------------------------------
// Support checks (static: types, constant parameters, descriptor field ranges for known sizes).

bool isWindowOp(OperationType t) {
    return t == OperationType::CONV_2D || t == OperationType::DEPTHWISE_CONV_2D ||
           t == OperationType::GROUPED_CONV_2D || t == OperationType::AVERAGE_POOL_2D ||
           t == OperationType::MAX_POOL_2D;
}

Status unsupported(const Operation& op, const std::string& why) {
    return fail(ErrorStatus::GENERAL_FAILURE, nameOf(op.type), ": ", why);
}

Status checkWindowOp(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& out = c.operand(op.outputs[0]);
    if (!isQuant8(in.type) || out.type != in.type)
        return unsupported(op, "only 8-bit quantized tensors");
    auto p = readWindowParams(c, op);
    if (!p) return unsupported(op, "scalar parameters must be constants");
    if (!activationRange(p->activation, out)) return unsupported(op, "activation");
    if (p->strideW > kMaxByteField || p->strideH > kMaxByteField || p->dilationW > kMaxByteField ||
        p->dilationH > kMaxByteField || p->strideW == 0 || p->strideH == 0)
        return unsupported(op, "stride or dilation beyond the descriptor's 8 bits");
    if (p->explicitPadding && (p->padW.head > kMaxByteField || p->padH.head > kMaxByteField))
        return unsupported(op, "leading padding beyond the descriptor's 8 bits");
    const bool pooling =
        op.type == OperationType::AVERAGE_POOL_2D || op.type == OperationType::MAX_POOL_2D;
    if (pooling) {
        if (p->filterW > kMaxByteField || p->filterH > kMaxByteField || p->filterW == 0 ||
            p->filterH == 0)
            return unsupported(op, "filter size beyond the descriptor's 8 bits");
        return okStatus();
    }
    const Operand& filter = c.operand(op.inputs[1]);
    const Operand& bias = c.operand(op.inputs[2]);
    if (!c.isConstantOrInput(op.inputs[2]))
        return unsupported(op,
                           "the bias must be a constant or a model input (packed at compile time)");
    const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    if (filter.type != in.type && !perChannel) return unsupported(op, "filter type");
    if (perChannel) {
        const auto* pc = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
        if (!pc || pc->channelDim != (op.type == OperationType::DEPTHWISE_CONV_2D ? 3u : 0u))
            return unsupported(op, "per-channel quantization must be along the output channels");
    }
    if (bias.type != OperandType::TENSOR_INT32) return unsupported(op, "bias type");
    if (filter.dimensions.size() != 4) return unsupported(op, "filter rank");
    if (op.type == OperationType::DEPTHWISE_CONV_2D && filter.dimensions[0] != 1)
        return unsupported(op, "depthwise filter must be [1, height, width, channels]");
    const uint32_t outC =
        op.type == OperationType::DEPTHWISE_CONV_2D ? filter.dimensions[3] : filter.dimensions[0];
    if (filter.dimensions[1] > kMaxByteField || filter.dimensions[2] > kMaxByteField)
        return unsupported(op, "kernel beyond the descriptor's 8 bits");
    if (outC > kMaxCount) return unsupported(op, "too many output channels");
    if (op.type == OperationType::CONV_2D && in.dimensions.size() == 4) {
        const uint32_t inC = in.dimensions[p->nchw ? 1 : 3];
        if (inC != 0 && filter.dimensions[3] != inC)
            return unsupported(op, "filter depth differs from the input's");
    }
    if (!channelMultipliers(in, filter, bias, out, outC))
        return unsupported(
            op, "requantization multiplier outside the NPU's range or bias scale mismatch");
    return okStatus();
}

Status checkFullyConnected(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& w = c.operand(op.inputs[1]);
    const Operand& bias = c.operand(op.inputs[2]);
    const Operand& out = c.operand(op.outputs[0]);
    if (!isQuant8(in.type) || out.type != in.type || w.type != in.type)
        return unsupported(op, "only 8-bit quantized tensors");
    if (!c.isConstantOrInput(op.inputs[2]))
        return unsupported(op,
                           "the bias must be a constant or a model input (packed at compile time)");
    auto act = c.scalar<int32_t>(op.inputs[3]);
    if (!act || !activationRange(*act, out))
        return unsupported(op, "activation must be a constant");
    if (w.dimensions.size() != 2 || w.dimensions[0] > kMaxCount || w.dimensions[1] > kMaxCount)
        return unsupported(op, "weights shape beyond the descriptor fields");
    if (ceilDiv(w.dimensions[1], kLanes) > npu::kSpadWords)
        return unsupported(op, "input size beyond the scratchpad");
    if (!channelMultipliers(in, w, bias, out, w.dimensions[0]))
        return unsupported(op, "requantization multiplier");
    return okStatus();
}

Status checkElementwise(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& a = c.operand(op.inputs[0]);
    const Operand& b = c.operand(op.inputs[1]);
    const Operand& out = c.operand(op.outputs[0]);
    if (!isQuant8(a.type) || b.type != a.type || out.type != a.type)
        return unsupported(op, "only 8-bit quantized tensors");
    auto act = c.scalar<int32_t>(op.inputs[2]);
    if (!act) return unsupported(op, "activation must be a constant");
    auto range = activationRange(*act, out);
    if (!range) return unsupported(op, "activation");
    if (a.dimensions.size() > 4 || b.dimensions.size() > 4) return unsupported(op, "rank above 4");
    const fixedpoint::QuantInfo qa{a.scale, a.zeroPoint}, qb{b.scale, b.zeroPoint},
        qo{out.scale, out.zeroPoint};
    if (op.type == OperationType::ADD || op.type == OperationType::SUB) {
        if (!fixedpoint::computeAddSubParams(qa, qb, qo, *range, op.type == OperationType::SUB))
            return unsupported(op, "multipliers");
    } else if (!fixedpoint::computeMulParams(qa, qb, qo, *range)) {
        return unsupported(op, "input scale product must be below the output scale");
    }
    return okStatus();
}

}  // namespace

std::vector<uint32_t> compileTimeInputs(const Model& model) {
    const auto& g = model.main;
    std::vector<uint32_t> positions;
    for (const Operation& op : g.operations) {
        // Weights and biases are packed, RESHAPE's shape sets the output shape.
        const bool packed = (isWindowOp(op.type) && op.type != OperationType::AVERAGE_POOL_2D &&
                             op.type != OperationType::MAX_POOL_2D) ||
                            op.type == OperationType::FULLY_CONNECTED;
        if (!packed && op.type != OperationType::RESHAPE) continue;
        for (uint32_t i = 1; i <= (packed ? 2u : 1u); ++i) {
            if (i >= op.inputs.size() ||
                g.operands[op.inputs[i]].lifetime != OperandLifeTime::SUBGRAPH_INPUT)
                continue;
            const auto it = std::find(g.inputIndexes.begin(), g.inputIndexes.end(), op.inputs[i]);
            const auto pos = static_cast<uint32_t>(it - g.inputIndexes.begin());
            if (it != g.inputIndexes.end() &&
                std::find(positions.begin(), positions.end(), pos) == positions.end())
                positions.push_back(pos);
        }
    }
    return positions;
}

Status checkOperationSupported(const Model& model, uint32_t index) {
    const Operation& op = model.main.operations[index];
    const Constants c(model);
    if (npu_extension::isLut8(model, op.type))
        return okStatus();  // validated by the device already
    if (isExtension(op.type)) return unsupported(op, "unknown extension operation");
    for (uint32_t o : op.outputs) {
        if (!isQuant8(c.operand(o).type)) return unsupported(op, "only 8-bit quantized outputs");
    }
    switch (op.type) {
        case OperationType::CONV_2D:
        case OperationType::DEPTHWISE_CONV_2D:
        case OperationType::GROUPED_CONV_2D:
        case OperationType::AVERAGE_POOL_2D:
        case OperationType::MAX_POOL_2D:
            return checkWindowOp(model, op);
        case OperationType::FULLY_CONNECTED:
            return checkFullyConnected(model, op);
        case OperationType::ADD:
        case OperationType::SUB:
        case OperationType::MUL:
            return checkElementwise(model, op);
        case OperationType::RELU:
        case OperationType::RELU1:
        case OperationType::RELU6: {
            const Operand& in = c.operand(op.inputs[0]);
            if (!isQuant8(in.type) || !reluTable(op.type, in))
                return unsupported(op, "only 8-bit quantized tensors");
            return okStatus();
        }
        case OperationType::LOGISTIC:
        case OperationType::TANH: {
            const Operand& in = c.operand(op.inputs[0]);
            if (!isQuant8(in.type) || !sigmoidTable(op.type, in, c.operand(op.outputs[0])))
                return unsupported(op,
                                   "only 8-bit quantized tensors with NNAPI's output quantization");
            return okStatus();
        }
        case OperationType::RESHAPE: {
            const Operand& in = c.operand(op.inputs[0]);
            if (!isQuant8(in.type)) return unsupported(op, "only 8-bit quantized tensors");
            if (!c.isConstantOrInput(op.inputs[1]))
                return unsupported(op, "the shape must be a constant or a model input");
            return okStatus();
        }
        case OperationType::CONCATENATION: {
            const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
            if (!c.isConstant(op.inputs[n])) return unsupported(op, "the axis must be a constant");
            const Operand& out = c.operand(op.outputs[0]);
            for (uint32_t i = 0; i < n; ++i) {
                if (c.operand(op.inputs[i]).type != out.type) return unsupported(op, "input types");
            }
            if (out.dimensions.size() > 4) return unsupported(op, "rank above 4");
            return okStatus();
        }
        default:
            return unsupported(op, "not an NPU operation");
    }
}

namespace {

// ---------------------------------------------------------------------------------------------
// Lowering.

struct Placement {
    uint32_t offset = 0;
    bool placed = false;
};

class Lowering {
  public:
    Lowering(const Model& model, const std::vector<std::vector<uint32_t>>& inputShapes,
             const InputValues& values)
        : mModel(model), mConstants(model, &values), mInputShapes(inputShapes) {}

    Result<Program> run() {
        const auto& g = mModel.main;
        mDims.resize(g.operands.size());
        mPlace.resize(g.operands.size());
        for (size_t k = 0; k < g.operands.size(); ++k) mDims[k] = g.operands[k].dimensions;
        for (size_t i = 0; i < g.inputIndexes.size(); ++i) {
            if (i < mInputShapes.size() && !mInputShapes[i].empty())
                mDims[g.inputIndexes[i]] = mInputShapes[i];
        }
        for (size_t i = 0; i < g.operations.size(); ++i)
            NN_RETURN_IF_ERROR(inferShape(g.operations[i], i));
        planFusion();
        NN_RETURN_IF_ERROR(planTensors());
        mProgram.constantsOffset = mTensorEnd;
        for (size_t i = 0; i < g.operations.size(); ++i) {
            mOpIndex = static_cast<uint32_t>(i);
            mFenceNext = true;
            mProgram.operationNames.push_back(npu_extension::isLut8(mModel, g.operations[i].type)
                                                  ? "com.nncosim.npu:LUT8"
                                                  : nameOf(g.operations[i].type));
            NN_RETURN_IF_ERROR(lower(g.operations[i]));
        }
        if (mProgram.descriptors.empty()) {  // e.g. a lone RESHAPE: the data is already in place
            npu::Descriptor nop;
            mProgram.descriptors.push_back(nop);
        }
        mProgram.descriptors.back().flags |= static_cast<uint32_t>(npu::DescFlag::LAST);
        for (uint32_t k : g.inputIndexes) mProgram.inputs.push_back(io(k));
        for (uint32_t k : g.outputIndexes) mProgram.outputs.push_back(io(k));
        mProgram.descriptorOffset =
            alignUp(uint64_t{mProgram.constantsOffset} + mProgram.constants.size(), kAlign);
        mProgram.completionOffset =
            alignUp(uint64_t{mProgram.descriptorOffset} +
                        mProgram.descriptors.size() * npu::kDescriptorWords * 4,
                    kAlign);
        const uint64_t arena = uint64_t{mProgram.completionOffset} + npu::kCompletionWords * 4;
        if (arena > kMaxArenaBytes)
            return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the program needs ",
                        byteSizeText(arena), " of device memory, more than ",
                        byteSizeText(kMaxArenaBytes));
        mProgram.arenaSize = alignUp(arena, kAlign);
        mProgram.estimatedCycles += 200;  // doorbell, first fetch and completion record
        return std::move(mProgram);
    }

  private:
    const Operand& operand(uint32_t k) const { return mModel.main.operands[k]; }
    uint32_t bytes(uint32_t k) const {
        return static_cast<uint32_t>(byteSize(operand(k).type, mDims[k]));
    }

    ProgramIo io(uint32_t k) {
        ProgramIo r;
        placeConstantIfNeeded(k);
        r.offset = mPlace[k].offset;
        r.size = bytes(k);
        r.dimensions = mDims[k];
        return r;
    }

    Status failShape(const Operation& op, const std::string& why) const {
        return fail(ErrorStatus::GENERAL_FAILURE, "operation ", mOpIndex, " (", nameOf(op.type),
                    "): ", why);
    }

    Status inferShape(const Operation& op, size_t index) {
        mOpIndex = static_cast<uint32_t>(index);
        std::vector<uint32_t> out;
        for (uint32_t k : op.inputs) {
            if (isTensorType(operand(k).type) && !fullyKnown(mDims[k]))
                return failShape(op, "input shape unknown at compile time");
        }
        const auto& in = mDims[op.inputs[0]];
        if (npu_extension::isLut8(mModel, op.type)) {
            out = in;
        } else {
            switch (op.type) {
                case OperationType::CONV_2D:
                case OperationType::DEPTHWISE_CONV_2D:
                case OperationType::GROUPED_CONV_2D:
                case OperationType::AVERAGE_POOL_2D:
                case OperationType::MAX_POOL_2D: {
                    if (in.size() != 4) return failShape(op, "input must be 4-D");
                    auto p = window(op);
                    if (!p) return failShape(op, "parameters");
                    const auto nhwc = toNhwc(in, p->nchw);
                    uint32_t outC = nhwc[3];
                    if (op.type == OperationType::CONV_2D ||
                        op.type == OperationType::GROUPED_CONV_2D)
                        outC = mDims[op.inputs[1]][0];
                    if (op.type == OperationType::DEPTHWISE_CONV_2D) outC = mDims[op.inputs[1]][3];
                    const uint32_t oh =
                        windowOutput(nhwc[1], p->filterH, p->strideH, p->dilationH, p->padH);
                    const uint32_t ow =
                        windowOutput(nhwc[2], p->filterW, p->strideW, p->dilationW, p->padW);
                    if (oh == 0 || ow == 0)
                        return failShape(op, "window larger than the padded input");
                    out = p->nchw ? std::vector<uint32_t>{nhwc[0], outC, oh, ow}
                                  : std::vector<uint32_t>{nhwc[0], oh, ow, outC};
                    break;
                }
                case OperationType::FULLY_CONNECTED: {
                    const auto& w = mDims[op.inputs[1]];
                    const uint64_t total = elementCount(in);
                    if (w[1] == 0 || total % w[1] != 0) return failShape(op, "input size");
                    out = {static_cast<uint32_t>(total / w[1]), w[0]};
                    break;
                }
                case OperationType::ADD:
                case OperationType::SUB:
                case OperationType::MUL: {
                    auto b = broadcastShape(in, mDims[op.inputs[1]]);
                    if (!b) return failShape(op, "shapes do not broadcast");
                    out = *b;
                    break;
                }
                case OperationType::RESHAPE: {
                    auto t = reshapeTarget(mConstants, op, in);
                    if (!t) return failShape(op, "shape");
                    out = *t;
                    break;
                }
                case OperationType::CONCATENATION: {
                    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
                    auto axis = mConstants.scalar<int32_t>(op.inputs[n]);
                    const auto rank = static_cast<int32_t>(in.size());
                    if (!axis || *axis < -rank || *axis >= rank) return failShape(op, "axis");
                    const auto a = static_cast<size_t>(*axis < 0 ? *axis + rank : *axis);
                    out = in;
                    out[a] = 0;
                    for (uint32_t i = 0; i < n; ++i) {
                        const auto& d = mDims[op.inputs[i]];
                        if (d.size() != in.size()) return failShape(op, "input ranks differ");
                        out[a] += d[a];
                    }
                    break;
                }
                default:  // RELU*, LOGISTIC, TANH
                    out = in;
                    break;
            }
        }
        auto combined = combineDims(operand(op.outputs[0]).dimensions, out);
        if (!combined)
            return failShape(op,
                             "computed output shape " + toString(out) + " contradicts the model");
        mDims[op.outputs[0]] = out;
        return okStatus();
    }

    static std::optional<std::vector<uint32_t>> combineDims(const std::vector<uint32_t>& declared,
                                                            const std::vector<uint32_t>& actual) {
        if (declared.empty()) return actual;
        if (declared.size() != actual.size()) return std::nullopt;
        for (size_t i = 0; i < declared.size(); ++i) {
            if (declared[i] != 0 && declared[i] != actual[i]) return std::nullopt;
        }
        return actual;
    }

    static std::array<uint32_t, 4> toNhwc(const std::vector<uint32_t>& d, bool nchw) {
        return nchw ? std::array<uint32_t, 4>{d[0], d[2], d[3], d[1]}
                    : std::array<uint32_t, 4>{d[0], d[1], d[2], d[3]};
    }

    std::optional<WindowParams> window(const Operation& op) const {
        auto p = readWindowParams(mConstants, op);
        if (!p) return std::nullopt;
        const auto in = toNhwc(mDims[op.inputs[0]], p->nchw);
        if (op.type == OperationType::CONV_2D || op.type == OperationType::DEPTHWISE_CONV_2D ||
            op.type == OperationType::GROUPED_CONV_2D) {
            const auto& f = mDims[op.inputs[1]];
            p->filterH = f[1];
            p->filterW = f[2];
        }
        if (!p->explicitPadding) {
            p->padH = implicitPadding(p->scheme, in[1], p->strideH, p->filterH, p->dilationH);
            p->padW = implicitPadding(p->scheme, in[2], p->strideW, p->filterW, p->dilationW);
        }
        return p;
    }

    // Device memory of every tensor: inputs, outputs and intermediates in the tensor region;
    // RESHAPE outputs share their input's bytes; constants are placed on first use.
    Status planTensors() {
        const auto& g = mModel.main;
        // 64-bit sums: the tensors together may pass 4 GiB although each fits 32 bits.
        uint64_t next = 0;
        auto allocate = [&](uint32_t k) {
            mPlace[k] = {static_cast<uint32_t>(next), true};
            next = placeEnd(next, std::max<uint64_t>(1, byteSize(operand(k).type, mDims[k])));
        };
        for (uint32_t k : g.inputIndexes) allocate(k);
        for (size_t i = 0; i < g.operations.size(); ++i) {
            const Operation& op = g.operations[i];
            const uint32_t out = op.outputs[0];
            // NCHW window operations run on NHWC copies of their input and output.
            if (auto p = isWindowOp(op.type) ? readWindowParams(mConstants, op) : std::nullopt;
                p && p->nchw) {
                const uint64_t inStart = next;
                const uint64_t outStart =
                    placeEnd(inStart, byteSize(operand(op.inputs[0]).type, mDims[op.inputs[0]]));
                next = placeEnd(outStart, byteSize(operand(out).type, mDims[out]));
                if (next > kMaxArenaBytes) break;
                mScratch[static_cast<uint32_t>(i)] = {static_cast<uint32_t>(inStart),
                                                      static_cast<uint32_t>(outStart)};
            }
            if (op.type == OperationType::RESHAPE) {
                // Shares its input's bytes; a RESHAPE of a constant is placed with the constants.
                if (!mConstants.isConstant(op.inputs[0])) mAlias[out] = op.inputs[0];
                continue;
            }
            for (uint32_t k : op.outputs) {
                if (!mOnChip.count(k)) allocate(k);
            }
            if (next > kMaxArenaBytes) break;
        }
        if (next > kMaxArenaBytes)
            return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                        "the model's tensors need more than ", byteSizeText(kMaxArenaBytes),
                        " of device memory");
        mTensorEnd = static_cast<uint32_t>(next);
        return okStatus();
    }

    void placeConstantIfNeeded(uint32_t k) {
        if (auto it = mAlias.find(k); it != mAlias.end()) {
            placeConstantIfNeeded(it->second);
            mPlace[k] = mPlace[it->second];
            return;
        }
        if (mPlace[k].placed) return;
        // A constant used as data (or a RESHAPE of one): copy its bytes into the constants.
        const Operation* producer = nullptr;
        for (const Operation& op : mModel.main.operations) {
            if (op.outputs[0] == k && op.type == OperationType::RESHAPE) producer = &op;
        }
        const uint32_t source = producer ? producer->inputs[0] : k;
        const uint8_t* data = mConstants.data(source);
        mPlace[k] = {addConstant(data, bytes(source)), true};
    }

    uint32_t addConstant(const uint8_t* data, size_t size) {
        auto& c = mProgram.constants;
        c.resize(alignUp(c.size(), kAlign));
        const auto offset = static_cast<uint32_t>(mProgram.constantsOffset + c.size());
        if (data)
            c.insert(c.end(), data, data + size);
        else
            c.resize(c.size() + size);
        return offset;
    }

    uint32_t address(uint32_t k) {
        placeConstantIfNeeded(k);
        return mPlace[k].offset;
    }

    // Appends a descriptor of operation `tag` (default: the current one); the first one after
    // fenceNext() waits for every earlier store.
    void emit(npu::Descriptor d) { emit(d, mOpIndex); }
    void emit(npu::Descriptor d, uint32_t tag) {
        d.tag = tag;
        if (mFenceNext && !mProgram.descriptors.empty())
            d.flags |= static_cast<uint32_t>(npu::DescFlag::FENCE);
        mFenceNext = false;
        mProgram.descriptors.push_back(d);
    }
    void fenceNext() { mFenceNext = true; }

    static void setTypes(npu::Descriptor& d, OperandType a, OperandType b, OperandType out) {
        d.aSigned = isSigned(a);
        d.bSigned = b == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL || isSigned(b);
        d.outSigned = isSigned(out);
    }

    Status lower(const Operation& op) {
        if (npu_extension::isLut8(mModel, op.type)) {
            const uint8_t* table = mConstants.data(op.inputs[1]);
            if (!table) return failShape(op, "table");
            return lowerLut(op, op.inputs[0], lut8Table(operand(op.inputs[0]), table));
        }
        switch (op.type) {
            case OperationType::CONV_2D:
            case OperationType::DEPTHWISE_CONV_2D:
            case OperationType::GROUPED_CONV_2D:
                if (mFusedInto.count(mOpIndex)) return okStatus();  // with its pointwise layer
                if (auto it = mFusedFrom.find(mOpIndex); it != mFusedFrom.end())
                    return lowerFused(it->second, op);
                return lowerConv(op);
            case OperationType::FULLY_CONNECTED:
                return lowerFullyConnected(op);
            case OperationType::AVERAGE_POOL_2D:
            case OperationType::MAX_POOL_2D:
                return lowerPool(op);
            case OperationType::ADD:
            case OperationType::SUB:
            case OperationType::MUL:
                return lowerElementwise(op);
            case OperationType::RELU:
            case OperationType::RELU1:
            case OperationType::RELU6: {
                auto t = reluTable(op.type, operand(op.inputs[0]));
                if (!t) return failShape(op, "activation");
                return lowerLut(op, op.inputs[0], *t);
            }
            case OperationType::LOGISTIC:
            case OperationType::TANH: {
                auto t = sigmoidTable(op.type, operand(op.inputs[0]), operand(op.outputs[0]));
                if (!t) return failShape(op, "quantization");
                return lowerLut(op, op.inputs[0], *t);
            }
            case OperationType::RESHAPE:
                if (mConstants.isConstant(op.inputs[0])) placeConstantIfNeeded(op.outputs[0]);
                return okStatus();  // the output shares the input's bytes
            case OperationType::CONCATENATION:
                return lowerConcatenation(op);
            default:
                return failShape(op, "not an NPU operation");
        }
    }

    // A LUT descriptor with the identity table: the NPU's byte copy (tensors and addresses to
    // be filled in).
    npu::Descriptor identityCopy() {
        npu::Descriptor d;
        d.opcode = npu::Opcode::LUT;
        const Table identity =
            tableOf(OperandType::TENSOR_QUANT8_ASYMM, [](int32_t v) { return v; });
        d.wAddr = addConstant(identity.data(), identity.size());
        d.actMin = 0, d.actMax = 255;
        return d;
    }

    // Fills the weight slots of a stream packed with placeholders from weights the device
    // computes at run time (OHWI bytes at `filter`, `filterC` input channels per filter row,
    // output channels from `firstOut`): one LUT identity copy per block and K step, reading
    // input channels along k and output channels along n.
    void scatterWeights(uint32_t filter, uint32_t stream, uint32_t outC, uint32_t inC, uint32_t kh,
                        uint32_t kw, bool depthwise, uint32_t filterC, uint32_t firstOut) {
        npu::Descriptor d = identityCopy();
        const uint32_t cBlocks = depthwise ? 1 : ceilDiv(inC, npu::kArrayRows);
        const uint32_t blockBytes = npu::kArrayRows * kLanes;
        const uint32_t streamBlock =
            npu::kWeightQuantWords * kAlign + kh * kw * cBlocks * blockBytes;
        const uint32_t rowStride = kh * kw * filterC;  // between output channels of the filter
        for (uint32_t ob = 0; ob < ceilDiv(outC, kLanes); ++ob) {
            const uint32_t nc = std::min(kLanes, outC - ob * kLanes);
            for (uint32_t y = 0; y < kh; ++y) {
                for (uint32_t x = 0; x < kw; ++x) {
                    for (uint32_t cb = 0; cb < cBlocks; ++cb) {
                        const uint32_t block = stream + ob * streamBlock +
                                               npu::kWeightQuantWords * kAlign +
                                               ((y * kw + x) * cBlocks + cb) * blockBytes;
                        npu::Descriptor t = d;
                        if (depthwise) {  // [1, kh, kw, C]: lane n on the block's diagonal
                            t.a = {filter + (y * kw + x) * filterC + ob * kLanes,
                                   1,
                                   nc,
                                   1,
                                   1,
                                   1,
                                   0,
                                   0};
                            t.out = {block, 1, nc, kLanes + 1, 1, 1, 0, 0};
                        } else {
                            const uint32_t kc =
                                std::min(npu::kArrayRows, inC - cb * npu::kArrayRows);
                            const uint32_t o0 = firstOut + ob * kLanes;
                            t.a = {
                                filter + ((o0 * kh + y) * kw + x) * filterC + cb * npu::kArrayRows,
                                1,
                                kc,
                                1,
                                nc,
                                1,
                                rowStride,
                                0};
                            t.out = {block, 1, kc, kLanes, nc, 1, 1, 0};
                        }
                        emit(t);
                        mProgram.estimatedCycles += 2 * blockBytes / kAlign + 30;
                    }
                }
            }
        }
    }

    // scatterWeights for a TAPS depthwise stream (filter [1, kh, kw, C]): row t of a block is
    // tap t's 16 channels, which lie together in the filter, so one LUT identity copy of `taps`
    // rows per block of kLanes channels.
    void scatterTaps(uint32_t filter, uint32_t stream, uint32_t channels, uint32_t taps) {
        npu::Descriptor d = identityCopy();
        const uint32_t streamBlock = npu::kWeightQuantWords * kAlign + npu::kArrayRows * kLanes;
        for (uint32_t ob = 0; ob < ceilDiv(channels, kLanes); ++ob) {
            const uint32_t nc = std::min(kLanes, channels - ob * kLanes);
            npu::Descriptor t = d;
            t.a = {filter + ob * kLanes, nc, taps, channels, 1, 1, 0, 0};
            t.out = {stream + ob * streamBlock + npu::kWeightQuantWords * kAlign,
                     nc,
                     taps,
                     kLanes,
                     1,
                     1,
                     0,
                     0};
            emit(t);
            mProgram.estimatedCycles += 2 * taps + 30;
        }
    }

    // scatterWeights for a depthwise filter [1, kh, kw, C * m] run as a dense convolution: output
    // channel o takes input channel o / m, so within a block the lanes n = r, r + m, ... of one
    // residue r step one input channel each (a diagonal of slope m), one copy per residue.
    void scatterExpandedDepthwise(uint32_t filter, uint32_t stream, uint32_t outC, uint32_t inC,
                                  uint32_t kh, uint32_t kw, uint32_t m) {
        npu::Descriptor d = identityCopy();
        const uint32_t cBlocks = ceilDiv(inC, npu::kArrayRows);
        const uint32_t blockBytes = npu::kArrayRows * kLanes;
        const uint32_t streamBlock =
            npu::kWeightQuantWords * kAlign + kh * kw * cBlocks * blockBytes;
        for (uint32_t ob = 0; ob < ceilDiv(outC, kLanes); ++ob) {
            for (uint32_t y = 0; y < kh; ++y) {
                for (uint32_t x = 0; x < kw; ++x) {
                    for (uint32_t n0 = 0; n0 < kLanes; ++n0) {
                        // Lanes n0, n0 + m, ... that stay in one input-channel block.
                        const uint32_t o0 = ob * kLanes + n0;
                        if (o0 >= outC ||
                            (n0 >= m && (o0 - m) / m / npu::kArrayRows == o0 / m / npu::kArrayRows))
                            continue;  // part of the run of lane n0 - m
                        const uint32_t c0 = o0 / m, cb = c0 / npu::kArrayRows;
                        uint32_t count = 0;
                        for (uint32_t n = n0; n < kLanes && ob * kLanes + n < outC &&
                                              (ob * kLanes + n) / m / npu::kArrayRows == cb;
                             n += m)
                            ++count;
                        const uint32_t block = stream + ob * streamBlock +
                                               npu::kWeightQuantWords * kAlign +
                                               ((y * kw + x) * cBlocks + cb) * blockBytes;
                        npu::Descriptor t = d;
                        t.a = {filter + (y * kw + x) * outC + o0, 1, count, m, 1, 1, 0, 0};
                        t.out = {block + (c0 - cb * npu::kArrayRows) * kLanes + n0,
                                 1,
                                 count,
                                 kLanes + m,
                                 1,
                                 1,
                                 0,
                                 0};
                        emit(t);
                        mProgram.estimatedCycles += 2 * count + 30;
                    }
                }
            }
        }
    }

    // Where a window operation reads and writes, in NHWC: the operands themselves, or for an
    // NCHW operation the scratch copies that transposes fill and drain around it.
    struct WindowIo {
        uint32_t inBase = 0, outBase = 0;
        std::array<uint32_t, 4> in{}, out{};  // NHWC
    };

    WindowIo windowIo(const Operation& op, const WindowParams& p) {
        WindowIo io;
        io.in = toNhwc(mDims[op.inputs[0]], p.nchw);
        io.out = toNhwc(mDims[op.outputs[0]], p.nchw);
        if (p.nchw) {
            std::tie(io.inBase, io.outBase) = mScratch.at(mOpIndex);
        } else {
            io.inBase = address(op.inputs[0]);
            io.outBase = address(op.outputs[0]);
        }
        return io;
    }

    // Copies a [N, A, B] byte tensor to [N, B, A] through the LUT unit with an identity table:
    // rows of one element, read with the source's strides and written with the destination's.
    Status transpose(const Operation& op, uint32_t src, uint32_t dst, uint32_t n, uint32_t a,
                     uint32_t b) {
        npu::Descriptor d = identityCopy();
        if (a > kMaxCount || b > kMaxCount)
            return failShape(op, "layout transpose beyond the descriptor's 16 bits");
        // count1 runs over a chunk of a (the destination's inner dimension), count2 over b.
        const uint32_t aChunk = std::min(a, kElementwiseWords);
        const uint32_t bChunk = std::max(1u, kElementwiseWords / aChunk);
        fenceNext();
        const uint32_t plane = a * b;
        for (uint32_t i = 0; i < n; ++i) {
            for (uint32_t a0 = 0; a0 < a; a0 += aChunk) {
                for (uint32_t b0 = 0; b0 < b; b0 += bChunk) {
                    const uint32_t as = std::min(aChunk, a - a0), bs = std::min(bChunk, b - b0);
                    npu::Descriptor t = d;
                    t.a = {src + i * plane + a0 * b + b0, 1, as, b, bs, 1, 1, 0};
                    t.out = {dst + i * plane + b0 * a + a0, 1, as, 1, bs, 1, a, 0};
                    emit(t);
                    mProgram.estimatedCycles += uint64_t{as} * bs * 2 + 30;
                }
            }
        }
        return okStatus();
    }

    Status transposeIn(const Operation& op, const WindowParams& p, const WindowIo& io) {
        if (!p.nchw) return okStatus();
        return transpose(op, address(op.inputs[0]), io.inBase, io.in[0], io.in[3],
                         io.in[1] * io.in[2]);
    }
    Status transposeOut(const Operation& op, const WindowParams& p, const WindowIo& io) {
        if (!p.nchw) return okStatus();
        return transpose(op, io.outBase, address(op.outputs[0]), io.out[0], io.out[1] * io.out[2],
                         io.out[3]);
    }

    // What lowering a CONV_2D, GROUPED_CONV_2D or DEPTHWISE_CONV_2D needs, from the operands
    // and shapes alone (nothing placed in device memory), so that planFusion can try a lowering
    // before the tensors are laid out.
    struct ConvInfo {
        WindowParams p;
        bool dw = false;                      // DEPTHWISE_CONV_2D
        bool useDw = false;                   // depth multiplier 1: DWCONV descriptors
        bool taps = false;                    // in the array's TAPS mode (npu::depthwiseUsesTaps)
        std::array<uint32_t, 4> in{}, out{};  // NHWC
        uint32_t kh = 1, kw = 1, groups = 1, groupIn = 0, groupOut = 0;
        npu::ConvGeometry geometry;
        npu::OutputStage stage;
        std::vector<QuantizedMultiplier> multipliers;  // per output channel
        int32_t weightZero = 0;
        bool weightsSigned = false;
        const uint8_t* weights = nullptr;  // null: computed by the device at run time
        const uint8_t* bias = nullptr;
    };

    Result<ConvInfo> convInfo(const Operation& op) const {
        const Operand& in = operand(op.inputs[0]);
        const Operand& filter = operand(op.inputs[1]);
        const Operand& out = operand(op.outputs[0]);
        const auto& fD = mDims[op.inputs[1]];
        auto p = window(op);
        if (!p) return failShape(op, "parameters");
        ConvInfo c;
        c.p = *p;
        c.dw = op.type == OperationType::DEPTHWISE_CONV_2D;
        c.in = toNhwc(mDims[op.inputs[0]], p->nchw);
        c.out = toNhwc(mDims[op.outputs[0]], p->nchw);
        const uint32_t inC = c.in[3], outC = c.out[3];
        c.kh = fD[1], c.kw = fD[2];
        c.groups = c.dw ? 1 : p->groups;
        if (c.dw && outC != inC * p->depthMultiplier) return failShape(op, "depth multiplier");
        if (!c.dw && (inC % c.groups || outC % c.groups || fD[3] != inC / c.groups))
            return failShape(op, "filter depth");
        c.groupIn = c.dw ? inC : inC / c.groups;
        c.groupOut = outC / c.groups;
        auto multipliers = channelMultipliers(in, filter, operand(op.inputs[2]), out, outC);
        auto range = activationRange(p->activation, out);
        if (!multipliers || !range) return failShape(op, "quantization");
        c.multipliers = std::move(*multipliers);
        const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
        c.weightZero = perChannel ? 0 : filter.zeroPoint;
        c.weightsSigned = perChannel || isSigned(filter.type);
        c.weights = mConstants.data(op.inputs[1]);
        c.bias = mConstants.data(op.inputs[2]);
        if (!c.bias) return failShape(op, "the bias must be known at compile time");
        c.geometry = {c.kh,         c.kw,         p->strideH,   p->strideW,
                      p->dilationH, p->dilationW, p->padH.head, p->padW.head};
        c.stage = {out.zeroPoint, range->min, range->max};
        // Depthwise with multiplier 1 runs on DWCONV (TAPS when the kernel allows); other
        // multipliers as a dense convolution whose filter holds the weight zero point off the
        // multiplier's channels. Grouped convolution is one convolution per group.
        c.useDw = c.dw && p->depthMultiplier == 1;
        c.taps = c.useDw && npu::depthwiseUsesTaps(c.geometry);
        return c;
    }

    // The weight stream of group g (npu::packConvWeights / packDepthwiseWeights). Weights the
    // device computes at run time are scattered into a stream of placeholders (the weight zero
    // point) by LUT copies emitted here.
    uint32_t convWeights(const Operation& op, const ConvInfo& c, uint32_t g) {
        const uint32_t inC = c.in[3], outC = c.out[3], kh = c.kh, kw = c.kw;
        std::vector<npu::ChannelQuant> quant(c.groupOut);
        for (uint32_t o = 0; o < c.groupOut; ++o) {
            const size_t channel = size_t{g} * c.groupOut + o;
            std::memcpy(&quant[o].bias, c.bias + channel * sizeof(int32_t), sizeof(int32_t));
            quant[o].multiplier = c.multipliers[channel].multiplier;
            quant[o].shift = c.multipliers[channel].shift;
        }
        const auto zero = static_cast<uint8_t>(c.weightZero);
        std::vector<uint8_t> placeholders, stream;
        if (c.useDw) {
            if (!c.weights) placeholders.assign(size_t{kh} * kw * outC, zero);
            stream = npu::packDepthwiseWeights(c.weights ? c.weights : placeholders.data(), outC,
                                               kh, kw, c.weightZero, quant, c.taps);
        } else if (c.dw) {
            // Output channel o of depth multiplier m reads input channel o / m only.
            const uint32_t m = c.p.depthMultiplier;
            std::vector<uint8_t> dense(size_t{outC} * kh * kw * inC, zero);
            for (uint32_t o = 0; c.weights && o < outC; ++o) {
                for (uint32_t t = 0; t < kh * kw; ++t)
                    dense[(size_t{o} * kh * kw + t) * inC + o / m] =
                        c.weights[size_t{t} * outC + o];
            }
            stream = npu::packConvWeights(dense.data(), outC, kh, kw, inC, c.weightZero, quant);
        } else {
            const size_t groupBytes = size_t{c.groupOut} * kh * kw * c.groupIn;
            if (!c.weights) placeholders.assign(groupBytes, zero);
            stream =
                npu::packConvWeights(c.weights ? c.weights + g * groupBytes : placeholders.data(),
                                     c.groupOut, kh, kw, c.groupIn, c.weightZero, quant);
        }
        const uint32_t wAddr = addConstant(stream.data(), stream.size());
        if (!c.weights) {
            const uint32_t filter = address(op.inputs[1]);
            if (c.taps)
                scatterTaps(filter, wAddr, outC, kh * kw);
            else if (!c.useDw && c.dw)
                scatterExpandedDepthwise(filter, wAddr, outC, inC, kh, kw, c.p.depthMultiplier);
            else
                scatterWeights(filter, wAddr, c.groupOut, c.groupIn, kh, kw, c.useDw,
                               c.dw ? outC : c.groupIn, g * c.groupOut);
        }
        return wAddr;
    }

    // Image n of a window operation's NHWC input or output, or its channel slice
    // [first, first + channels).
    static npu::DeviceTensor imageOf(uint32_t base, const std::array<uint32_t, 4>& dims, uint32_t n,
                                     uint32_t first, uint32_t channels, const Operand& operand) {
        npu::DeviceTensor t;
        t.addr = base + first + n * dims[1] * dims[2] * dims[3];
        t.h = dims[1];
        t.w = dims[2];
        t.c = channels;
        t.pixelStride = channels == dims[3] ? 0 : dims[3];
        t.isSigned = isSigned(operand.type);
        t.zeroPoint = operand.zeroPoint;
        return t;
    }

    // Appends what a program builder tiled as this operation's descriptors (descriptors with
    // CHAIN_OUT as operation `chainOutTag`'s), with their estimated cycles.
    void emitAll(const npu::ChainBuilder& program,
                 std::optional<uint32_t> chainOutTag = std::nullopt) {
        for (const npu::Descriptor& d : program.descriptors()) {
            const bool chainOut = d.flags & static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT);
            emit(d, chainOut && chainOutTag ? *chainOutTag : mOpIndex);
            mProgram.estimatedCycles += windowCycles(d);
        }
    }

    Status lowerConv(const Operation& op) {
        auto info = convInfo(op);
        NN_RETURN_IF_ERROR(info.status());
        const ConvInfo& c = *info;
        const Operand& in = operand(op.inputs[0]);
        const Operand& out = operand(op.outputs[0]);
        const WindowIo io = windowIo(op, c.p);
        NN_RETURN_IF_ERROR(transposeIn(op, c.p, io));
        for (uint32_t g = 0; g < c.groups; ++g) {
            const uint32_t weights = convWeights(op, c, g);
            fenceNext();
            for (uint32_t n = 0; n < io.in[0]; ++n) {
                const auto input =
                    imageOf(io.inBase, io.in, n, c.dw ? 0 : g * c.groupIn, c.groupIn, in);
                const auto output = imageOf(io.outBase, io.out, n, g * c.groupOut, c.groupOut, out);
                npu::ChainBuilder program;
                const Status st = c.useDw
                                      ? program.depthwise(input, output, weights, c.weightsSigned,
                                                          c.weightZero, c.geometry, c.stage, c.taps)
                                      : program.conv(input, output, weights, c.weightsSigned,
                                                     c.weightZero, c.geometry, c.stage);
                if (!st.ok()) return failShape(op, st.message);
                emitAll(program);
            }
        }
        return transposeOut(op, c.p, io);
    }

    // The fused pair's shapes: the depthwise layer's input, its result (on chip only) and the
    // pointwise layer's output, image n (addresses 0 for the dry run of planFusion).
    struct FusedTensors {
        npu::DeviceTensor input, intermediate, output;
    };
    FusedTensors fusedTensors(const Operation& dw, const ConvInfo& a, const Operation& pw,
                              const ConvInfo& b, uint32_t n, uint32_t inBase, uint32_t outBase) {
        FusedTensors t;
        t.input = imageOf(inBase, a.in, n, 0, a.in[3], operand(dw.inputs[0]));
        t.intermediate = imageOf(0, a.out, 0, 0, a.out[3], operand(dw.outputs[0]));
        t.output = imageOf(outBase, b.out, n, 0, b.out[3], operand(pw.outputs[0]));
        return t;
    }
    static npu::ConvLayer layerOf(const ConvInfo& c, uint32_t weights) {
        npu::ConvLayer layer{weights, c.weightsSigned, c.weightZero, c.geometry, c.stage};
        // A 1x1 kernel's dilation changes nothing; the chained CONV takes the plain geometry.
        if (c.kh == 1 && c.kw == 1) layer.geometry.dilationH = layer.geometry.dilationW = 1;
        return layer;
    }

    // Depthwise layers (multiplier 1, TAPS, NHWC) whose result only a 1x1 convolution (stride
    // 1, no padding, NHWC) reads and which is not a model output run fused with it
    // (npu::ChainBuilder::depthwisePointwise) where that pays (npu::depthwisePointwisePays): the
    // intermediate tensor never goes to DRAM. Decided before the tensors are laid out, so that
    // the intermediate gets no memory.
    void planFusion() {
        const auto& g = mModel.main;
        std::vector<uint32_t> uses(g.operands.size(), 0);
        for (const Operation& op : g.operations) {
            for (uint32_t k : op.inputs) ++uses[k];
        }
        for (uint32_t k : g.outputIndexes) ++uses[k];  // a model output is read by the host
        for (uint32_t i = 0; i < g.operations.size(); ++i) {
            const Operation& dw = g.operations[i];
            if (dw.type != OperationType::DEPTHWISE_CONV_2D || uses[dw.outputs[0]] != 1) continue;
            uint32_t j = i + 1;
            while (j < g.operations.size() && g.operations[j].inputs[0] != dw.outputs[0]) ++j;
            if (j == g.operations.size() || g.operations[j].type != OperationType::CONV_2D)
                continue;
            const Operation& pw = g.operations[j];
            mOpIndex = i;
            auto a = convInfo(dw);
            mOpIndex = j;
            auto b = convInfo(pw);
            if (!a || !b || !a->taps || a->p.nchw || b->p.nchw || b->kh != 1 || b->kw != 1 ||
                b->p.strideH != 1 || b->p.strideW != 1 || b->p.padH.head || b->p.padH.tail ||
                b->p.padW.head || b->p.padW.tail || a->out != b->in || a->out[1] != b->out[1] ||
                a->out[2] != b->out[2])
                continue;
            // Fused only where it pays (tiles large enough to hide the pointwise weights that
            // stream again per tile) and where the builder accepts the pair (a dry run).
            const FusedTensors t = fusedTensors(dw, *a, pw, *b, 0, 0, 0);
            if (!npu::depthwisePointwisePays(t.input, a->geometry, t.intermediate)) continue;
            npu::ChainBuilder program;
            if (!program
                     .depthwisePointwise(t.input, layerOf(*a, 0), t.intermediate, layerOf(*b, 0),
                                         t.output)
                     .ok())
                continue;
            mFusedInto[i] = j;
            mFusedFrom[j] = i;
            mOnChip.insert(dw.outputs[0]);
        }
    }

    // The depthwise operation `dwIndex` fused with the pointwise `pw` (the current operation):
    // weight streams of both, then per image and tile a DWCONV (TAPS, CHAIN_OUT) tagged with
    // the depthwise operation and a CONV (CHAIN_IN) tagged with the pointwise one.
    Status lowerFused(uint32_t dwIndex, const Operation& pw) {
        const Operation& dw = mModel.main.operations[dwIndex];
        const uint32_t pwIndex = mOpIndex;
        mOpIndex = dwIndex;
        auto a = convInfo(dw);
        NN_RETURN_IF_ERROR(a.status());
        const uint32_t dwWeights = convWeights(dw, *a, 0);  // run-time weights: dw's copies
        mOpIndex = pwIndex;
        auto b = convInfo(pw);
        NN_RETURN_IF_ERROR(b.status());
        const uint32_t pwWeights = convWeights(pw, *b, 0);
        fenceNext();
        const uint32_t inBase = address(dw.inputs[0]), outBase = address(pw.outputs[0]);
        for (uint32_t n = 0; n < a->in[0]; ++n) {
            const FusedTensors t = fusedTensors(dw, *a, pw, *b, n, inBase, outBase);
            npu::ChainBuilder program;
            const Status st = program.depthwisePointwise(
                t.input, layerOf(*a, dwWeights), t.intermediate, layerOf(*b, pwWeights), t.output);
            if (!st.ok()) return failShape(pw, st.message);
            emitAll(program, dwIndex);
        }
        return okStatus();
    }

    Status lowerPool(const Operation& op) {
        const Operand& in = operand(op.inputs[0]);
        const Operand& out = operand(op.outputs[0]);
        auto p = window(op);
        if (!p) return failShape(op, "parameters");
        auto range = activationRange(p->activation, out);
        if (!range) return failShape(op, "activation");
        const WindowIo io = windowIo(op, *p);
        NN_RETURN_IF_ERROR(transposeIn(op, *p, io));
        fenceNext();
        const npu::ConvGeometry geometry{p->filterH, p->filterW, p->strideH,   p->strideW,
                                         1,          1,          p->padH.head, p->padW.head};
        for (uint32_t n = 0; n < io.in[0]; ++n) {
            npu::ChainBuilder program;
            const Status st = program.pool(op.type == OperationType::AVERAGE_POOL_2D,
                                           imageOf(io.inBase, io.in, n, 0, io.in[3], in),
                                           imageOf(io.outBase, io.out, n, 0, io.out[3], out),
                                           geometry, range->min, range->max);
            if (!st.ok()) return failShape(op, st.message);
            emitAll(program);
        }
        return transposeOut(op, *p, io);
    }

    Status lowerFullyConnected(const Operation& op) {
        const Operand& in = operand(op.inputs[0]);
        const Operand& wOp = operand(op.inputs[1]);
        const Operand& out = operand(op.outputs[0]);
        const uint32_t units = mDims[op.inputs[1]][0], inSize = mDims[op.inputs[1]][1];
        const uint32_t batches = mDims[op.outputs[0]][0];
        auto multipliers = channelMultipliers(in, wOp, operand(op.inputs[2]), out, units);
        auto act = mConstants.scalar<int32_t>(op.inputs[3]);
        if (!multipliers || !act) return failShape(op, "quantization");
        auto range = activationRange(*act, out);
        const uint8_t* w = mConstants.data(op.inputs[1]);
        const uint8_t* b = mConstants.data(op.inputs[2]);
        if (!range || !b) return failShape(op, "the bias must be known at compile time");
        std::vector<npu::ChannelQuant> quant(units);
        for (uint32_t o = 0; o < units; ++o) {
            std::memcpy(&quant[o].bias, b + size_t{o} * sizeof(int32_t), sizeof(int32_t));
            quant[o].multiplier = (*multipliers)[o].multiplier;
            quant[o].shift = (*multipliers)[o].shift;
        }
        // Packed as a 1x1 convolution; weights computed at run time are scattered in.
        std::vector<uint8_t> placeholders;
        if (!w) placeholders.assign(size_t{units} * inSize, static_cast<uint8_t>(wOp.zeroPoint));
        const auto stream = npu::packConvWeights(w ? w : placeholders.data(), units, 1, 1, inSize,
                                                 wOp.zeroPoint, quant);
        const uint32_t wAddr = addConstant(stream.data(), stream.size());
        if (!w) {
            scatterWeights(address(op.inputs[1]), wAddr, units, inSize, 1, 1, false, inSize, 0);
            fenceNext();
        }
        npu::DeviceTensor input, output;
        input.addr = address(op.inputs[0]);
        input.n = batches, input.c = inSize;
        input.isSigned = isSigned(in.type), input.zeroPoint = in.zeroPoint;
        output.addr = address(op.outputs[0]);
        output.n = batches, output.c = units;
        output.isSigned = isSigned(out.type), output.zeroPoint = out.zeroPoint;
        npu::ChainBuilder program;
        const Status st =
            program.fullyConnected(input, output, wAddr, isSigned(wOp.type), wOp.zeroPoint,
                                   {out.zeroPoint, range->min, range->max});
        if (!st.ok()) return failShape(op, st.message);
        emitAll(program);
        return okStatus();
    }

    struct Strided {
        uint32_t base;
        std::array<uint32_t, 4> strides;  // per output dimension, in bytes (elements of 1 byte)
    };

    // Rows of an element-wise operand over a 4-D output: per dimension its byte stride in the
    // operand, 0 where the operand is broadcast.
    static std::array<uint32_t, 4> broadcastStrides(const std::vector<uint32_t>& dims,
                                                    const std::array<uint32_t, 4>& out) {
        std::array<uint32_t, 4> d4{1, 1, 1, 1};
        for (size_t i = 0; i < dims.size(); ++i) d4[4 - dims.size() + i] = dims[i];
        std::array<uint32_t, 4> strides{};
        uint32_t s = 1;
        for (int i = 3; i >= 0; --i) {
            strides[i] = (d4[i] == 1 && out[i] != 1) ? 0 : s;
            s *= d4[i];
        }
        return strides;
    }

    Status lowerElementwise(const Operation& op) {
        const Operand& a = operand(op.inputs[0]);
        const Operand& b = operand(op.inputs[1]);
        const Operand& out = operand(op.outputs[0]);
        auto act = mConstants.scalar<int32_t>(op.inputs[2]);
        if (!act) return failShape(op, "activation");
        auto range = activationRange(*act, out);
        if (!range) return failShape(op, "activation");
        npu::Descriptor d;
        setTypes(d, a.type, b.type, out.type);
        d.aZeroPoint = a.zeroPoint, d.bZeroPoint = b.zeroPoint, d.outZeroPoint = out.zeroPoint;
        const fixedpoint::QuantInfo qa{a.scale, a.zeroPoint}, qb{b.scale, b.zeroPoint},
            qo{out.scale, out.zeroPoint};
        if (op.type == OperationType::ADD || op.type == OperationType::SUB) {
            auto params =
                fixedpoint::computeAddSubParams(qa, qb, qo, *range, op.type == OperationType::SUB);
            if (!params) return failShape(op, "multipliers");
            d.opcode = npu::Opcode::ADD;
            d.leftShift = fixedpoint::AddSubParams::kLeftShift;
            d.aMultiplier = params->input1.multiplier, d.aShift = params->input1.shift;
            d.bMultiplier = params->input2.multiplier, d.bShift = params->input2.shift;
            d.outMultiplier = params->output.multiplier, d.outShift = params->output.shift;
            d.actMin = params->range.min, d.actMax = params->range.max;
        } else {
            auto params = fixedpoint::computeMulParams(qa, qb, qo, *range);
            if (!params) return failShape(op, "multiplier");
            d.opcode = npu::Opcode::MUL;
            d.outMultiplier = params->output.multiplier, d.outShift = params->output.shift;
            d.actMin = params->range.min, d.actMax = params->range.max;
        }
        const auto& outD = mDims[op.outputs[0]];
        std::array<uint32_t, 4> o4{1, 1, 1, 1};
        for (size_t i = 0; i < outD.size(); ++i) o4[4 - outD.size() + i] = outD[i];
        return emitRows(op, d, operandRows(op.inputs[0], o4), operandRows(op.inputs[1], o4),
                        address(op.outputs[0]), o4);
    }

    // An element-wise operand over the 4-D output. A broadcast constant is expanded to the
    // output's shape at compile time (a layout change, as weight packing is), so that the
    // operation streams contiguous rows.
    Strided operandRows(uint32_t k, const std::array<uint32_t, 4>& o4) {
        const auto strides = broadcastStrides(mDims[k], o4);
        const uint8_t* data = mConstants.data(k);
        const std::array<uint32_t, 4> dense{o4[1] * o4[2] * o4[3], o4[2] * o4[3], o4[3], 1};
        if (!data || strides == dense) return {address(k), strides};
        std::vector<uint8_t> expanded;
        expanded.reserve(size_t{o4[0]} * dense[0]);
        for (uint32_t n = 0; n < o4[0]; ++n)
            for (uint32_t h = 0; h < o4[1]; ++h)
                for (uint32_t w = 0; w < o4[2]; ++w)
                    for (uint32_t c = 0; c < o4[3]; ++c)
                        expanded.push_back(data[n * strides[0] + h * strides[1] + w * strides[2] +
                                                c * strides[3]]);
        return {addConstant(expanded.data(), expanded.size()), dense};
    }

    // Emits element-wise or lookup descriptors over a 4-D output laid out contiguously. Fully
    // contiguous operands are streamed as rows of kAlign * 16 bytes; broadcasts keep the
    // innermost dimension as the row when both operands have it, else rows of one element.
    Status emitRows(const Operation& op, const npu::Descriptor& d, Strided a,
                    std::optional<Strided> b, uint32_t outBase, const std::array<uint32_t, 4>& o4) {
        const uint64_t total = uint64_t{o4[0]} * o4[1] * o4[2] * o4[3];
        auto contiguous = [&](const Strided& s) {
            uint32_t expect = 1;
            for (int i = 3; i >= 0; --i) {
                if (o4[i] != 1 && s.strides[i] != expect) return false;
                expect *= o4[i];
            }
            return true;
        };
        if (contiguous(a) && (!b || contiguous(*b))) {
            const uint32_t inner = static_cast<uint32_t>(std::min<uint64_t>(total, 256));
            const uint32_t maxRows =
                std::max(1u, kElementwiseWords / ceilDiv(inner, npu::kDramBusBytes));
            uint64_t done = 0;
            while (done < total) {
                const uint64_t left = total - done;
                const uint32_t rowBytes = static_cast<uint32_t>(std::min<uint64_t>(inner, left));
                const uint32_t rows =
                    static_cast<uint32_t>(std::min<uint64_t>(maxRows, left / rowBytes));
                npu::Descriptor t = d;
                const auto off = static_cast<uint32_t>(done);
                t.a = {a.base + off, rowBytes, rows, rowBytes, 1, 1, 0, 0};
                if (b) t.b = {b->base + off, rowBytes, rows, rowBytes, 1, 1, 0, 0};
                t.out = {outBase + off, rowBytes, rows, rowBytes, 1, 1, 0, 0};
                emit(t);
                mProgram.estimatedCycles +=
                    uint64_t{rows} * ceilDiv(rowBytes, npu::kDramBusBytes) * (b ? 3 : 2) + 30;
                done += uint64_t{rows} * rowBytes;
            }
            return okStatus();
        }
        // Broadcast: rows over dimensions 1..3 (or 2..3 with rows of one element).
        const bool innerShared = a.strides[3] != 0 && (!b || b->strides[3] != 0);
        const uint32_t inner = innerShared ? o4[3] : 1;
        if (inner > kMaxCount || o4[1] > kMaxCount || o4[2] > kMaxCount || o4[3] > kMaxCount)
            return failShape(op, "dimensions beyond the descriptor's 16 bits");
        const uint32_t outStride3 = o4[3], outStride2 = o4[2] * o4[3],
                       outStride1 = o4[1] * o4[2] * o4[3];
        // Rows per descriptor: whole rows of w (shared inner) or single elements over c, then w.
        const uint32_t wordsPerRow = ceilDiv(inner, npu::kDramBusBytes);
        const uint32_t perW = innerShared ? 1 : o4[3];
        if (uint64_t{perW} * wordsPerRow > kElementwiseWords)
            return failShape(op, "broadcast rows beyond the scratchpad");
        const uint32_t wChunk = std::max(1u, kElementwiseWords / (perW * wordsPerRow));
        for (uint32_t n = 0; n < o4[0]; ++n) {
            for (uint32_t h = 0; h < o4[1]; ++h) {
                for (uint32_t w0 = 0; w0 < o4[2]; w0 += wChunk) {
                    const uint32_t ws = std::min(wChunk, o4[2] - w0);
                    npu::Descriptor t = d;
                    auto tensor = [&](const Strided& s) {
                        npu::TensorDesc r;
                        r.addr = s.base + n * s.strides[0] + h * s.strides[1] + w0 * s.strides[2];
                        r.inner = inner;
                        if (innerShared) {
                            r.count1 = ws, r.stride1 = s.strides[2];
                        } else {
                            r.count1 = o4[3], r.stride1 = s.strides[3];
                            r.count2 = ws, r.stride2 = s.strides[2];
                        }
                        return r;
                    };
                    t.a = tensor(a);
                    if (b) t.b = tensor(*b);
                    t.out = tensor(Strided{outBase, {outStride1, outStride2, outStride3, 1}});
                    emit(t);
                    mProgram.estimatedCycles +=
                        uint64_t{ws} * perW * wordsPerRow * (b ? 3 : 2) + 30;
                }
            }
        }
        return okStatus();
    }

    Status lowerLut(const Operation& op, uint32_t input, const Table& table) {
        const Operand& in = operand(input);
        const Operand& out = operand(op.outputs[0]);
        npu::Descriptor d;
        d.opcode = npu::Opcode::LUT;
        setTypes(d, in.type, in.type, out.type);
        d.wAddr = addConstant(table.data(), table.size());
        d.actMin = typeMin(out.type), d.actMax = typeMax(out.type);
        const uint32_t total = static_cast<uint32_t>(elementCount(mDims[input]));
        const std::array<uint32_t, 4> o4{1, 1, 1, total};
        return emitRows(op, d, {address(input), {0, 0, 0, 1}}, std::nullopt, address(op.outputs[0]),
                        o4);
    }

    // Each input is copied through the LUT unit (identity, or Android's requantization when its
    // quantization differs) into its slab of the output.
    Status lowerConcatenation(const Operation& op) {
        const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
        const Operand& out = operand(op.outputs[0]);
        const auto& outD = mDims[op.outputs[0]];
        const auto rank = static_cast<int32_t>(outD.size());
        int32_t axis = *mConstants.scalar<int32_t>(op.inputs[n]);
        if (axis < 0) axis += rank;
        uint64_t outer = 1, outInner = 1;
        for (int32_t i = 0; i < axis; ++i) outer *= outD[i];
        for (int32_t i = axis; i < rank; ++i) outInner *= outD[i];
        const uint32_t outBase = address(op.outputs[0]);
        uint64_t offset = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t k = op.inputs[i];
            const uint64_t inner = elementCount(mDims[k]) / std::max<uint64_t>(1, outer);
            if (inner == 0) continue;
            npu::Descriptor d;
            d.opcode = npu::Opcode::LUT;
            setTypes(d, operand(k).type, operand(k).type, out.type);
            const Table table = requantTable(operand(k), out);
            d.wAddr = addConstant(table.data(), table.size());
            d.actMin = typeMin(out.type), d.actMax = typeMax(out.type);
            if (inner > kMaxCount || outer > kMaxCount)
                return failShape(op, "slabs beyond the descriptor's 16 bits");
            const uint32_t maxRows =
                std::max(1u, kElementwiseWords / ceilDiv(inner, npu::kDramBusBytes));
            const uint32_t inBase = address(k);
            for (uint64_t r0 = 0; r0 < outer; r0 += maxRows) {
                const auto rows = static_cast<uint32_t>(std::min<uint64_t>(maxRows, outer - r0));
                npu::Descriptor t = d;
                const auto in32 = static_cast<uint32_t>(inner);
                t.a = {inBase + static_cast<uint32_t>(r0 * inner), in32, rows, in32, 1, 1, 0, 0};
                t.out = {outBase + static_cast<uint32_t>(r0 * outInner + offset),
                         in32,
                         rows,
                         static_cast<uint32_t>(outInner),
                         1,
                         1,
                         0,
                         0};
                emit(t);
                mProgram.estimatedCycles +=
                    uint64_t{rows} * ceilDiv(inner, npu::kDramBusBytes) * 2 + 30;
            }
            offset += inner;
        }
        return okStatus();
    }

    const Model& mModel;
    const Constants mConstants;
    const std::vector<std::vector<uint32_t>>& mInputShapes;
    std::vector<std::vector<uint32_t>> mDims;
    std::vector<Placement> mPlace;
    std::map<uint32_t, uint32_t> mAlias;  // RESHAPE output -> its input
    uint32_t mTensorEnd = 0;
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> mScratch;  // NCHW op -> NHWC input, output
    // Fused depthwise -> pointwise pairs (planFusion): by depthwise and by pointwise operation,
    // and the intermediate tensors that stay on chip.
    std::map<uint32_t, uint32_t> mFusedInto, mFusedFrom;
    std::set<uint32_t> mOnChip;
    uint32_t mOpIndex = 0;
    bool mFenceNext = true;
    Program mProgram;
};

}  // namespace

Result<Program> compileModel(const Model& model,
                             const std::vector<std::vector<uint32_t>>& inputShapes,
                             const InputValues& inputValues) {
    for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
        Status st = checkOperationSupported(model, i);
        if (!st.ok()) return fail(ErrorStatus::GENERAL_FAILURE, "operation ", i, ": ", st.message);
    }
    return Lowering(model, inputShapes, inputValues).run();
}

}  // namespace nncosim::driver
