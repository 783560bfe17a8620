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

Status expectPaddingScheme(const OperationContext& ctx, uint32_t input) {
    return expectInt32InRange(ctx, input, 1, 2, "padding scheme, 1 = SAME or 2 = VALID");
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

Status expectTensorRank(const OperationContext& ctx, uint32_t input, uint32_t rank,
                        const char* what) {
    auto r = ctx.inputRank(input);
    if (r && *r != rank)
        return ctx.fail("input ", input, " (", what, ") must have rank ", rank, ", got ", *r);
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

Status expectSameQuant8AsInput(const OperationContext& ctx) {
    if (!isQuant8Asymm(ctx.inputType(0))) return okStatus();
    return ctx.expectSameQuantization(0, 0);
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

}  // namespace nncosim
