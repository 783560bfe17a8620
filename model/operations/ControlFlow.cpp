// Validators of the control-flow operations of NNAPI 1.3, IF and WHILE: operand counts and
// types, and the agreement between the outer operands and the referenced subgraphs' inputs and
// outputs (same type, compatible dimensions, same quantization and extra parameters).
#include <string>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

/// The subgraph a SUBGRAPH input refers to; null (with `status` set) when it is not one.
const Subgraph* referencedSubgraph(const OperationContext& ctx, uint32_t input, const char* what,
                                   Status* status) {
    const Operand& operand = ctx.input(input);
    if (operand.type != OperandType::SUBGRAPH || operand.lifetime != OperandLifeTime::SUBGRAPH) {
        *status = ctx.fail("input ", input, " (", what, ") must be a SUBGRAPH operand, got ",
                           nameOf(operand.type), " of lifetime ", nameOf(operand.lifetime));
        return nullptr;
    }
    const auto& referenced = ctx.model().referenced;
    if (operand.location.offset >= referenced.size()) {
        *status = ctx.fail("input ", input, " (", what, ") refers to subgraph ",
                           operand.location.offset, " of ", referenced.size());
        return nullptr;
    }
    const Subgraph& subgraph = referenced[operand.location.offset];
    // Subgraphs are validated one after another; this one may not have been yet.
    for (const auto* list : {&subgraph.inputIndexes, &subgraph.outputIndexes}) {
        for (uint32_t k : *list) {
            if (k >= subgraph.operands.size()) {
                *status = ctx.fail("input ", input, " (", what, ") refers to subgraph ",
                                   operand.location.offset, " whose input or output ", k,
                                   " is not one of its ", subgraph.operands.size(), " operands");
                return nullptr;
            }
        }
    }
    return &subgraph;
}

const Operand& subgraphInput(const Subgraph& subgraph, uint32_t i) {
    return subgraph.operands[subgraph.inputIndexes[i]];
}

const Operand& subgraphOutput(const Subgraph& subgraph, uint32_t i) {
    return subgraph.operands[subgraph.outputIndexes[i]];
}

std::string describe(const Operand& operand) {
    std::string s = nameOf(operand.type) + " " + toString(operand.dimensions);
    if (operand.scale != 0.0f || operand.zeroPoint != 0)
        s += " scale " + std::to_string(operand.scale) + " zero point " +
             std::to_string(operand.zeroPoint);
    return s;
}

/// `inner` (an operand of a referenced subgraph) agrees with `outer`; `where` names both.
Status expectCompatible(const OperationContext& ctx, const Operand& inner, const Operand& outer,
                        const std::string& where) {
    if (operandsCompatible(inner, outer)) return okStatus();
    return ctx.fail(where, " are incompatible: ", describe(inner), " vs ", describe(outer));
}

/// A TENSOR_BOOL8 with exactly one element (the IF condition, a WHILE condition's output).
bool isBoolScalarTensor(const Operand& operand) {
    return operand.type == OperandType::TENSOR_BOOL8 && operand.dimensions.size() == 1 &&
           operand.dimensions[0] == 1;
}

constexpr uint32_t kIfCondition = 0;
constexpr uint32_t kIfThen = 1;
constexpr uint32_t kIfElse = 2;
constexpr uint32_t kIfFirstInput = 3;

Status validateBranch(const OperationContext& ctx, uint32_t input, const char* what) {
    Status status;
    const Subgraph* branch = referencedSubgraph(ctx, input, what, &status);
    if (!branch) return status;
    const uint32_t numInputs = static_cast<uint32_t>(branch->inputIndexes.size());
    const uint32_t numOutputs = static_cast<uint32_t>(branch->outputIndexes.size());
    if (ctx.numInputs() != kIfFirstInput + numInputs)
        return ctx.fail("the ", what, " subgraph has ", numInputs,
                        " inputs, so the operation needs ", kIfFirstInput + numInputs,
                        " inputs, got ", ctx.numInputs());
    if (ctx.numOutputs() != numOutputs)
        return ctx.fail("the ", what, " subgraph has ", numOutputs,
                        " outputs but the operation has ", ctx.numOutputs());
    for (uint32_t i = 0; i < numInputs; ++i) {
        NN_RETURN_IF_ERROR(
            expectCompatible(ctx, subgraphInput(*branch, i), ctx.input(kIfFirstInput + i),
                             std::string(what) + " subgraph input " + std::to_string(i) +
                                 " and input " + std::to_string(kIfFirstInput + i)));
    }
    for (uint32_t i = 0; i < numOutputs; ++i) {
        NN_RETURN_IF_ERROR(expectCompatible(ctx, subgraphOutput(*branch, i), ctx.output(i),
                                            std::string(what) + " subgraph output " +
                                                std::to_string(i) + " and output " +
                                                std::to_string(i)));
    }
    return okStatus();
}

constexpr uint32_t kWhileCondition = 0;
constexpr uint32_t kWhileBody = 1;
constexpr uint32_t kWhileFirstInput = 2;

/// The condition subgraph reads all loop operands and produces one boolean.
Status validateWhileCondition(const OperationContext& ctx) {
    Status status;
    const Subgraph* cond = referencedSubgraph(ctx, kWhileCondition, "condition", &status);
    if (!cond) return status;
    const uint32_t numInputs = static_cast<uint32_t>(cond->inputIndexes.size());
    if (ctx.numInputs() != kWhileFirstInput + numInputs)
        return ctx.fail("the condition subgraph has ", numInputs,
                        " inputs, so the operation needs ", kWhileFirstInput + numInputs,
                        " inputs, got ", ctx.numInputs());
    for (uint32_t i = 0; i < numInputs; ++i) {
        NN_RETURN_IF_ERROR(
            expectCompatible(ctx, subgraphInput(*cond, i), ctx.input(kWhileFirstInput + i),
                             "condition subgraph input " + std::to_string(i) + " and input " +
                                 std::to_string(kWhileFirstInput + i)));
    }
    if (cond->outputIndexes.size() != 1)
        return ctx.fail("the condition subgraph must have 1 output, got ",
                        cond->outputIndexes.size());
    if (!isBoolScalarTensor(subgraphOutput(*cond, 0)))
        return ctx.fail("the condition subgraph output must be a TENSOR_BOOL8 of shape [1], got ",
                        describe(subgraphOutput(*cond, 0)));
    return okStatus();
}

/// With m input-output, k state-only and n input-only loop operands, the body reads
/// m + k + n inputs and writes m + k outputs, of which the first m are the operation's outputs.
Status validateWhileBody(const OperationContext& ctx) {
    Status status;
    const Subgraph* body = referencedSubgraph(ctx, kWhileBody, "body", &status);
    if (!body) return status;
    const uint32_t numInputs = static_cast<uint32_t>(body->inputIndexes.size());
    const uint32_t numOutputs = static_cast<uint32_t>(body->outputIndexes.size());
    if (ctx.numInputs() != kWhileFirstInput + numInputs)
        return ctx.fail("the body subgraph has ", numInputs, " inputs, so the operation needs ",
                        kWhileFirstInput + numInputs, " inputs, got ", ctx.numInputs());
    if (numOutputs < ctx.numOutputs())
        return ctx.fail("the body subgraph has ", numOutputs,
                        " outputs, fewer than the operation's ", ctx.numOutputs());
    if (numInputs < numOutputs)
        return ctx.fail("the body subgraph has ", numOutputs, " outputs, more than its ", numInputs,
                        " inputs");
    for (uint32_t i = 0; i < numInputs; ++i) {
        NN_RETURN_IF_ERROR(
            expectCompatible(ctx, subgraphInput(*body, i), ctx.input(kWhileFirstInput + i),
                             "body subgraph input " + std::to_string(i) + " and input " +
                                 std::to_string(kWhileFirstInput + i)));
    }
    for (uint32_t i = 0; i < ctx.numOutputs(); ++i) {
        NN_RETURN_IF_ERROR(expectCompatible(
            ctx, subgraphOutput(*body, i), ctx.output(i),
            "body subgraph output " + std::to_string(i) + " and output " + std::to_string(i)));
    }
    // Loop-carried values: each body output feeds the body input of the same position.
    for (uint32_t i = 0; i < numOutputs; ++i) {
        NN_RETURN_IF_ERROR(expectCompatible(ctx, subgraphInput(*body, i), subgraphOutput(*body, i),
                                            "body subgraph input " + std::to_string(i) +
                                                " and body subgraph output " + std::to_string(i)));
    }
    return okStatus();
}

}  // namespace

Status validateIf(OperationContext& ctx) {
    if (ctx.numInputs() < 3)
        return ctx.fail("expected at least 3 inputs (condition, then, else), got ",
                        ctx.numInputs());
    if (ctx.numOutputs() < 1) return ctx.fail("expected at least 1 output, got 0");
    if (!isBoolScalarTensor(ctx.input(kIfCondition)))
        return ctx.fail("input 0 (condition) must be a TENSOR_BOOL8 of shape [1], got ",
                        describe(ctx.input(kIfCondition)));
    NN_RETURN_IF_ERROR(validateBranch(ctx, kIfThen, "then"));
    NN_RETURN_IF_ERROR(validateBranch(ctx, kIfElse, "else"));
    ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    return okStatus();
}

Status validateWhile(OperationContext& ctx) {
    if (ctx.numInputs() < 3)
        return ctx.fail("expected at least 3 inputs (condition, body, loop operands), got ",
                        ctx.numInputs());
    if (ctx.numOutputs() < 1) return ctx.fail("expected at least 1 output, got 0");
    NN_RETURN_IF_ERROR(validateWhileCondition(ctx));
    NN_RETURN_IF_ERROR(validateWhileBody(ctx));
    ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    return okStatus();
}

}  // namespace nncosim
