// Per-operation validation: the view of one operation a validator gets, and the table of
// validators keyed by OperationType (model/operations/Operations.cpp).
#pragma once

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// One operation of one subgraph, as its validator sees it. General rules (operand indexes in
/// range, operand types valid, lifetimes, topological order) are checked before any validator
/// runs, so a validator may index inputs and outputs freely once it has checked their counts.
class OperationContext {
  public:
    OperationContext(const Model& model, const Subgraph& subgraph, const Operation& operation,
                     uint32_t operationIndex)
        : mModel(model), mSubgraph(subgraph), mOperation(operation), mIndex(operationIndex) {}

    OperationType type() const { return mOperation.type; }
    uint32_t index() const { return mIndex; }
    const Model& model() const { return mModel; }
    const Subgraph& subgraph() const { return mSubgraph; }
    bool isRelaxed() const { return mModel.relaxComputationFloat32toFloat16; }

    uint32_t numInputs() const { return static_cast<uint32_t>(mOperation.inputs.size()); }
    uint32_t numOutputs() const { return static_cast<uint32_t>(mOperation.outputs.size()); }
    const Operand& input(uint32_t i) const { return mSubgraph.operands[mOperation.inputs[i]]; }
    const Operand& output(uint32_t i) const { return mSubgraph.operands[mOperation.outputs[i]]; }
    OperandType inputType(uint32_t i) const { return input(i).type; }
    OperandType outputType(uint32_t i) const { return output(i).type; }
    /// Rank of input i; nullopt when unknown (a tensor with no dimensions).
    std::optional<uint32_t> inputRank(uint32_t i) const;
    /// An optional input the model left out (lifetime NO_VALUE).
    bool isOmitted(uint32_t i) const { return input(i).lifetime == OperandLifeTime::NO_VALUE; }
    bool isConstant(uint32_t i) const;
    /// Bytes of a constant input; null when the input is not constant.
    const uint8_t* constantData(uint32_t i) const;
    /// Value of a constant scalar input (int32_t, float, bool, uint16_t for FLOAT16 bits).
    template <typename T>
    std::optional<T> constantScalar(uint32_t i) const {
        const uint8_t* p = constantData(i);
        if (!p || input(i).location.length < sizeof(T)) return std::nullopt;
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }

    /// Raises the model's minimum feature level to at least `level`.
    void requireFeatureLevel(FeatureLevel level) {
        if (level > mFeatureLevel) mFeatureLevel = level;
    }
    FeatureLevel featureLevel() const { return mFeatureLevel; }

    /// INVALID_ARGUMENT naming the operation: "operation 3 (CONV_2D): <parts>".
    template <typename... Parts>
    Status fail(const Parts&... parts) const {
        return invalidArgument("operation ", mIndex, " (", nameOf(mOperation.type),
                               "): ", parts...);
    }

    // Common checks; each returns a Status naming the operation and what is wrong.
    Status expectInputCount(std::initializer_list<uint32_t> allowed) const;
    Status expectOutputCount(std::initializer_list<uint32_t> allowed) const;
    /// Input i has exactly the given type (omitted inputs are accepted when `optional`).
    Status expectInputType(uint32_t i, OperandType type) const;
    Status expectInputTypes(const std::vector<OperandType>& types) const;   ///< in order, all given
    Status expectOutputTypes(const std::vector<OperandType>& types) const;  ///< in order, all given
    Status expectInputTypeIn(uint32_t i, std::initializer_list<OperandType> types) const;
    /// Input i's rank is at most `maxRank` when known.
    Status expectInputRankAtMost(uint32_t i, uint32_t maxRank) const;

  private:
    const Model& mModel;
    const Subgraph& mSubgraph;
    const Operation& mOperation;
    uint32_t mIndex;
    FeatureLevel mFeatureLevel = FeatureLevel::kV1_0;
};

/// Validates one operation's operand counts, types (per feature level), and constant
/// parameter values. Must return INVALID_ARGUMENT via ctx.fail() for any violation.
using OperationValidator = Status (*)(OperationContext& ctx);

/// The validator registered for `type`, or null for an unknown operation type.
OperationValidator findOperationValidator(OperationType type);

}  // namespace nncosim
