#include "model/operations/OperationUtils.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <variant>

namespace nncosim {
namespace {

std::string typeList(std::initializer_list<TypeSince> allowed) {
    std::ostringstream s;
    const char* sep = "";
    for (const TypeSince& t : allowed) s << sep << nameOf(t.type), sep = ", ";
    return s.str();
}

bool extraParamsEqual(const ExtraParams& a, const ExtraParams& b) {
    if (a.index() != b.index()) return false;
    if (const auto* pa = std::get_if<SymmPerChannelQuantParams>(&a)) {
        const auto& pb = std::get<SymmPerChannelQuantParams>(b);
        return pa->channelDim == pb.channelDim && pa->scales == pb.scales;
    }
    if (const auto* pa = std::get_if<std::vector<uint8_t>>(&a))
        return *pa == std::get<std::vector<uint8_t>>(b);
    return true;
}

}  // namespace

bool isQuant8Asymm(OperandType type) {
    return type == OperandType::TENSOR_QUANT8_ASYMM ||
           type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

OperandType floatScalarFor(OperandType tensorType) {
    return tensorType == OperandType::TENSOR_FLOAT16 ? OperandType::FLOAT16 : OperandType::FLOAT32;
}

Status expectTypeSince(OperationContext& ctx, uint32_t input,
                       std::initializer_list<TypeSince> allowed) {
    if (input >= ctx.numInputs()) return ctx.fail("missing input ", input);
    const OperandType type = ctx.inputType(input);
    for (const TypeSince& t : allowed) {
        if (t.type == type) {
            ctx.requireFeatureLevel(t.level);
            return okStatus();
        }
    }
    return ctx.fail("input ", input, " has unsupported type ", nameOf(type), ", expected one of ",
                    typeList(allowed));
}

Status expectFloatOrQuant8(OperationContext& ctx, uint32_t input, FeatureLevel since) {
    return expectTypeSince(ctx, input,
                           {{OperandType::TENSOR_FLOAT32, since},
                            {OperandType::TENSOR_QUANT8_ASYMM, since},
                            {OperandType::TENSOR_FLOAT16, std::max(since, FeatureLevel::kV1_2)},
                            {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}});
}

Status expectOutputType(const OperationContext& ctx, uint32_t output, OperandType type) {
    if (output >= ctx.numOutputs()) return ctx.fail("missing output ", output);
    if (ctx.outputType(output) != type)
        return ctx.fail("output ", output, " has type ", nameOf(ctx.outputType(output)),
                        ", expected ", nameOf(type));
    return okStatus();
}

std::optional<int32_t> constantInt32(const OperationContext& ctx, uint32_t input) {
    if (ctx.inputType(input) != OperandType::INT32) return std::nullopt;
    return ctx.constantScalar<int32_t>(input);
}

std::optional<bool> constantBool(const OperationContext& ctx, uint32_t input) {
    if (ctx.inputType(input) != OperandType::BOOL) return std::nullopt;
    auto byte = ctx.constantScalar<uint8_t>(input);
    if (!byte) return std::nullopt;
    return *byte != 0;
}

std::optional<float> constantFloat(const OperationContext& ctx, uint32_t input) {
    if (ctx.inputType(input) == OperandType::FLOAT32) return ctx.constantScalar<float>(input);
    if (ctx.inputType(input) == OperandType::FLOAT16) {
        auto bits = ctx.constantScalar<uint16_t>(input);
        if (!bits) return std::nullopt;
        return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(*bits));
    }
    return std::nullopt;
}

std::optional<std::vector<int32_t>> constantInt32Tensor(const OperationContext& ctx,
                                                        uint32_t input) {
    if (ctx.inputType(input) != OperandType::TENSOR_INT32) return std::nullopt;
    const uint8_t* data = ctx.constantData(input);
    if (!data) return std::nullopt;
    std::vector<int32_t> values(ctx.input(input).location.length / sizeof(int32_t));
    std::memcpy(values.data(), data, values.size() * sizeof(int32_t));
    return values;
}

Status expectInt32InRange(const OperationContext& ctx, uint32_t input, int32_t min, int32_t max,
                          const char* what) {
    auto v = constantInt32(ctx, input);
    if (v && (*v < min || *v > max)) {
        if (max == std::numeric_limits<int32_t>::max())
            return ctx.fail("input ", input, " (", what, ") must be >= ", min, ", got ", *v);
        return ctx.fail("input ", input, " (", what, ") must be in [", min, ", ", max, "], got ",
                        *v);
    }
    return okStatus();
}

Status expectPositiveInt32(const OperationContext& ctx, uint32_t input, const char* what) {
    return expectInt32InRange(ctx, input, 1, std::numeric_limits<int32_t>::max(), what);
}

Status expectNonNegativeInt32(const OperationContext& ctx, uint32_t input, const char* what) {
    return expectInt32InRange(ctx, input, 0, std::numeric_limits<int32_t>::max(), what);
}

Status expectFusedActivation(const OperationContext& ctx, uint32_t input) {
    return expectInt32InRange(ctx, input, static_cast<int32_t>(FusedActivation::NONE),
                              static_cast<int32_t>(FusedActivation::RELU6),
                              "fused activation code");
}

Status expectPadding(const OperationContext& ctx, uint32_t first, bool explicitPadding) {
    if (!explicitPadding)
        return expectInt32InRange(ctx, first, 1, 2, "padding scheme, 1 = SAME or 2 = VALID");
    static const char* const kNames[] = {"padding left", "padding right", "padding top",
                                         "padding bottom"};
    for (uint32_t i = 0; i < 4; ++i)
        NN_RETURN_IF_ERROR(expectNonNegativeInt32(ctx, first + i, kNames[i]));
    return okStatus();
}

Status expectStrides(const OperationContext& ctx, uint32_t first) {
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, first, "stride width"));
    return expectPositiveInt32(ctx, first + 1, "stride height");
}

Status expectPositiveFloat(const OperationContext& ctx, uint32_t input, const char* what) {
    auto v = constantFloat(ctx, input);
    if (v && !(*v > 0.0f)) return ctx.fail("input ", input, " (", what, ") must be > 0, got ", *v);
    return okStatus();
}

Status expectAxis(const OperationContext& ctx, uint32_t axisInput, uint32_t tensor) {
    auto axis = constantInt32(ctx, axisInput);
    auto rank = ctx.inputRank(tensor);
    if (!axis || !rank) return okStatus();
    const int32_t n = static_cast<int32_t>(*rank);
    if (*axis < -n || *axis >= n)
        return ctx.fail("input ", axisInput, " (axis) must be in [", -n, ", ", n, ") for input ",
                        tensor, " of rank ", n, ", got ", *axis);
    return okStatus();
}

Status expectAxesTensor(const OperationContext& ctx, uint32_t axesInput, uint32_t tensor) {
    auto axes = constantInt32Tensor(ctx, axesInput);
    auto rank = ctx.inputRank(tensor);
    if (!axes || !rank) return okStatus();
    const int32_t n = static_cast<int32_t>(*rank);
    for (int32_t axis : *axes) {
        if (axis < -n || axis >= n)
            return ctx.fail("input ", axesInput, " (axes) must hold values in [", -n, ", ", n,
                            ") for input ", tensor, " of rank ", n, ", got ", axis);
    }
    return okStatus();
}

Status expectRequiredInputs(const OperationContext& ctx, const std::vector<uint32_t>& optional) {
    for (uint32_t i = 0; i < ctx.numInputs(); ++i) {
        if (ctx.isOmitted(i) && std::find(optional.begin(), optional.end(), i) == optional.end())
            return ctx.fail("input ", i, " is required but has no value (NO_VALUE)");
    }
    return okStatus();
}

Status expectPresent(const OperationContext& ctx, uint32_t input, const char* what) {
    if (ctx.isOmitted(input))
        return ctx.fail("input ", input, " (", what, ") is required but has no value (NO_VALUE)");
    return okStatus();
}

Status expectTensorRank(const OperationContext& ctx, uint32_t input, uint32_t rank,
                        const char* what) {
    auto r = ctx.inputRank(input);
    if (r && *r != rank)
        return ctx.fail("input ", input, " (", what, ") must have rank ", rank, ", got ", *r);
    return okStatus();
}

Status expectInputRanks(const OperationContext& ctx,
                        std::initializer_list<std::pair<uint32_t, uint32_t>> inputRanks,
                        const std::vector<uint32_t>& optional) {
    for (const auto& [input, rank] : inputRanks) {
        if (ctx.isOmitted(input)) continue;
        const auto& dims = ctx.input(input).dimensions;
        const bool placeholder =
            std::all_of(dims.begin(), dims.end(), [](uint32_t d) { return d == 0; });
        if (placeholder && std::find(optional.begin(), optional.end(), input) != optional.end())
            continue;
        auto r = ctx.inputRank(input);
        if (r && *r != rank)
            return ctx.fail("input ", input, " must have rank ", rank, ", got ", *r);
    }
    return okStatus();
}

Status expectInputRankAtLeast(const OperationContext& ctx, uint32_t input, uint32_t minRank,
                              const char* what) {
    auto rank = ctx.inputRank(input);
    if (rank && *rank < minRank)
        return ctx.fail("input ", input, " (", what, ") must have rank >= ", minRank, ", got ",
                        *rank);
    return okStatus();
}

Status expectInputDim(const OperationContext& ctx, uint32_t input, uint32_t dim, uint32_t size,
                      const char* what) {
    const auto& dims = ctx.input(input).dimensions;
    if (dim < dims.size() && dims[dim] != 0 && dims[dim] != size)
        return ctx.fail("input ", input, " (", what, ") must have ", size,
                        " elements along dimension ", dim, ", got shape ", toString(dims));
    return okStatus();
}

Status expectOnePerDimension(const OperationContext& ctx, uint32_t input, const char* what) {
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, input, 1, what));
    const auto& dims = ctx.input(input).dimensions;
    auto rank = ctx.inputRank(0);
    if (rank && dims.size() == 1 && dims[0] != 0 && dims[0] != *rank)
        return ctx.fail("input ", input, " (", what, ") must have ", *rank,
                        " elements, one per dimension of input 0, got ", dims[0]);
    return okStatus();
}

Status expectOutputQuantization(const OperationContext& ctx, uint32_t output, float scale,
                                int32_t zeroPoint) {
    const Operand& out = ctx.output(output);
    if (out.scale != scale || out.zeroPoint != zeroPoint)
        return ctx.fail("output ", output, " of type ", nameOf(out.type), " must have scale ",
                        scale, " and zero point ", zeroPoint, ", got scale ", out.scale,
                        " and zero point ", out.zeroPoint);
    return okStatus();
}

Status expectSameQuantization(const OperationContext& ctx, uint32_t input, uint32_t output) {
    const Operand& a = ctx.input(input);
    const Operand& b = ctx.output(output);
    if (a.scale != b.scale || a.zeroPoint != b.zeroPoint)
        return ctx.fail("output ", output, " quantization (scale ", b.scale, ", zero point ",
                        b.zeroPoint, ") must equal input ", input, "'s (scale ", a.scale,
                        ", zero point ", a.zeroPoint, ")");
    return okStatus();
}

Status expectSameQuant8(const OperationContext& ctx, uint32_t input, uint32_t output) {
    if (!isQuant8Asymm(ctx.outputType(output))) return okStatus();
    return expectSameQuantization(ctx, input, output);
}

Status expectBoxQuantization(const OperationContext& ctx, const Operand& operand,
                             const char* what) {
    if (operand.type != OperandType::TENSOR_QUANT16_ASYMM) return okStatus();
    if (operand.scale != 0.125f || operand.zeroPoint != 0)
        return ctx.fail(what,
                        " of type TENSOR_QUANT16_ASYMM must have scale 0.125 and zero "
                        "point 0, got scale ",
                        operand.scale, " and zero point ", operand.zeroPoint);
    return okStatus();
}

Status expectBroadcastable(const OperationContext& ctx, uint32_t a, uint32_t b) {
    const auto& da = ctx.input(a).dimensions;
    const auto& db = ctx.input(b).dimensions;
    const size_t n = std::min(da.size(), db.size());
    for (size_t i = 1; i <= n; ++i) {
        const uint32_t x = da[da.size() - i];
        const uint32_t y = db[db.size() - i];
        // 0 is an unknown dimension in a model; it is checked at execution.
        if (x != 0 && y != 0 && x != y && x != 1 && y != 1)
            return ctx.fail("inputs ", a, " ", toString(da), " and ", b, " ", toString(db),
                            " are not broadcast-compatible");
    }
    return okStatus();
}

Status expectPerChannelFilter(const OperationContext& ctx, uint32_t filter, uint32_t channelDim) {
    const Operand& f = ctx.input(filter);
    const auto* params = std::get_if<SymmPerChannelQuantParams>(&f.extraParams);
    if (!params)
        return ctx.fail("input ", filter, " (filter) of type ", nameOf(f.type),
                        " has no per-channel quantization parameters");
    if (params->channelDim != channelDim)
        return ctx.fail("input ", filter, " (filter) must be quantized along dimension ",
                        channelDim, ", got channelDim ", params->channelDim);
    if (channelDim < f.dimensions.size() && f.dimensions[channelDim] != 0 &&
        params->scales.size() != f.dimensions[channelDim])
        return ctx.fail("input ", filter, " (filter) has ", params->scales.size(),
                        " per-channel scales for ", f.dimensions[channelDim], " channels");
    return okStatus();
}

Status expectConvBias(const OperationContext& ctx, uint32_t input, uint32_t filter, uint32_t bias) {
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, bias, 1, "bias"));
    const Operand& in = ctx.input(input);
    const Operand& f = ctx.input(filter);
    const Operand& b = ctx.input(bias);
    if (!isQuant8Asymm(in.type) || f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL)
        return okStatus();
    // The tolerance Android's reference (GetQuantizedConvolutionMultiplier) allows.
    const float product = in.scale * f.scale;
    if (std::abs(product - b.scale) > 1e-6 * std::min(product, b.scale))
        return ctx.fail("input ", bias, " (bias) scale ", b.scale, " must equal input scale ",
                        in.scale, " * filter scale ", f.scale);
    return okStatus();
}

void requireLevelForOutputScale(OperationContext& ctx, uint32_t input, uint32_t filter) {
    if (ctx.inputType(input) != OperandType::TENSOR_QUANT8_ASYMM) return;
    const float product = ctx.input(input).scale * ctx.input(filter).scale;
    if (!(ctx.output(0).scale > product)) ctx.requireFeatureLevel(FeatureLevel::kV1_2);
}

bool dimensionsCompatible(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    if (a.empty() || b.empty()) return true;
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != 0 && b[i] != 0 && a[i] != b[i]) return false;
    }
    return true;
}

bool operandsCompatible(const Operand& a, const Operand& b) {
    return a.type == b.type && dimensionsCompatible(a.dimensions, b.dimensions) &&
           a.scale == b.scale && a.zeroPoint == b.zeroPoint &&
           extraParamsEqual(a.extraParams, b.extraParams);
}

}  // namespace nncosim
