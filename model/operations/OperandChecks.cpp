#include "model/operations/OperandChecks.h"

#include <algorithm>
#include <variant>

#include "model/operations/OperationUtils.h"

namespace nncosim {
namespace {

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

Status expectSameQuant8(const OperationContext& ctx, uint32_t input, uint32_t output) {
    if (!isQuant8Asymm(ctx.outputType(output))) return okStatus();
    return ctx.expectSameQuantization(input, output);
}

Status expectInputRankAtLeast(const OperationContext& ctx, uint32_t input, uint32_t minRank,
                              const char* what) {
    auto rank = ctx.inputRank(input);
    if (rank && *rank < minRank)
        return ctx.fail("input ", input, " (", what, ") must have rank >= ", minRank, ", got ",
                        *rank);
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

Status expectInputDim(const OperationContext& ctx, uint32_t input, uint32_t dim, uint32_t size,
                      const char* what) {
    const auto& dims = ctx.input(input).dimensions;
    if (dim < dims.size() && dims[dim] != 0 && dims[dim] != size)
        return ctx.fail("input ", input, " (", what, ") must have ", size,
                        " elements along dimension ", dim, ", got shape ", toString(dims));
    return okStatus();
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
