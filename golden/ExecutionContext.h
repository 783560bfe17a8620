// What an operation's reference implementation sees while it executes: typed access to its
// inputs (data, actual shape, quantization, scalar parameters, omitted inputs) and the means to
// set each output's shape and write its data.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::golden {

using half = Eigen::half;

/// The value of one operand during one execution of a subgraph.
struct OperandValue {
    std::vector<uint32_t> dimensions;   ///< actual dimensions once the value exists
    const uint8_t* external = nullptr;  ///< bytes owned elsewhere (constants, caller inputs)
    size_t externalLength = 0;
    std::vector<uint8_t> storage;  ///< bytes owned by this value (results of operations)
    bool owned = false;            ///< whether the bytes are `storage`
    bool present = false;          ///< false for omitted operands and values not yet produced

    const uint8_t* bytes() const { return owned ? storage.data() : external; }
    size_t length() const { return owned ? storage.size() : externalLength; }
};

class ExecutionContext {
  public:
    /// `memoryLeft`: bytes the execution may still allocate for outputs; setOutputShape fails
    /// past it and counts what it allocates.
    ExecutionContext(const Model& model, const Subgraph& subgraph, const Operation& operation,
                     uint32_t operationIndex, std::vector<OperandValue>& values,
                     uint64_t& memoryLeft)
        : mModel(model),
          mSubgraph(subgraph),
          mOperation(operation),
          mIndex(operationIndex),
          mValues(values),
          mMemoryLeft(memoryLeft) {}

    OperationType type() const { return mOperation.type; }
    /// relaxComputationFloat32toFloat16: float32 may be computed with float16 range/precision.
    bool isRelaxed() const { return mModel.relaxComputationFloat32toFloat16; }

    uint32_t numInputs() const { return static_cast<uint32_t>(mOperation.inputs.size()); }
    uint32_t numOutputs() const { return static_cast<uint32_t>(mOperation.outputs.size()); }

    // Inputs. `i` must be below numInputs() unless stated otherwise.
    /// An optional input left out (lifetime NO_VALUE in the model, or a subgraph input the
    /// request gave no value), or an index past the end. Only operations listed by
    /// acceptsOmittedInputs() ever see omitted inputs.
    bool isOmitted(uint32_t i) const { return i >= numInputs() || !inputValue(i).present; }
    OperandType inputType(uint32_t i) const { return inputOperand(i).type; }
    const std::vector<uint32_t>& inputShape(uint32_t i) const { return inputValue(i).dimensions; }
    uint32_t inputRank(uint32_t i) const {
        return static_cast<uint32_t>(inputValue(i).dimensions.size());
    }
    uint32_t inputDim(uint32_t i, uint32_t d) const { return inputValue(i).dimensions.at(d); }
    /// Number of elements of input i.
    size_t inputCount(uint32_t i) const;
    float inputScale(uint32_t i) const { return inputOperand(i).scale; }
    int32_t inputZeroPoint(uint32_t i) const { return inputOperand(i).zeroPoint; }
    /// Per-channel scales of a TENSOR_QUANT8_SYMM_PER_CHANNEL input; empty for other types.
    const SymmPerChannelQuantParams& inputChannelQuant(uint32_t i) const;
    const uint8_t* inputBytes(uint32_t i) const { return inputValue(i).bytes(); }
    template <typename T>
    const T* inputData(uint32_t i) const {
        return reinterpret_cast<const T*>(inputBytes(i));
    }
    /// Input i's elements as float32 (from TENSOR_FLOAT32 or TENSOR_FLOAT16).
    std::vector<float> inputAsFloat(uint32_t i) const;

    /// Value of scalar input i. bool reads BOOL; float reads FLOAT32 or FLOAT16.
    template <typename T>
    T scalar(uint32_t i) const {
        const uint8_t* p = inputBytes(i);
        if constexpr (std::is_same_v<T, bool>) {
            return p[0] != 0;
        } else if constexpr (std::is_same_v<T, float>) {
            if (inputType(i) == OperandType::FLOAT16) {
                half h;
                std::memcpy(&h, p, sizeof(h));
                return static_cast<float>(h);
            }
        }
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }
    /// scalar<T>(i), or `fallback` when the input is omitted or absent.
    template <typename T>
    T scalarOr(uint32_t i, T fallback) const {
        return isOmitted(i) ? fallback : scalar<T>(i);
    }

    // Outputs.
    OperandType outputType(uint32_t j) const { return outputOperand(j).type; }
    float outputScale(uint32_t j) const { return outputOperand(j).scale; }
    int32_t outputZeroPoint(uint32_t j) const { return outputOperand(j).zeroPoint; }
    /// Sets output j's actual shape and allocates its bytes (zeroed). Fails when the shape
    /// contradicts a dimension the model declares.
    Status setOutputShape(uint32_t j, std::vector<uint32_t> dims);
    uint8_t* outputBytes(uint32_t j) { return outputValue(j).storage.data(); }
    template <typename T>
    T* outputData(uint32_t j) {
        return reinterpret_cast<T*>(outputBytes(j));
    }
    /// Number of elements of output j (after setOutputShape).
    size_t outputCount(uint32_t j) const;
    /// Writes output j (TENSOR_FLOAT32 or TENSOR_FLOAT16) from float32 values, rounding to
    /// float16 when needed. The shape must be set.
    void setOutputFromFloat(uint32_t j, const float* values);

    /// GENERAL_FAILURE naming the operation: "operation 3 (CONV_2D): <parts>".
    template <typename... Parts>
    Status fail(const Parts&... parts) const {
        return failWith(ErrorStatus::GENERAL_FAILURE, parts...);
    }
    template <typename... Parts>
    Status failWith(ErrorStatus code, const Parts&... parts) const {
        return nncosim::fail(code, "operation ", mIndex, " (", nameOf(mOperation.type),
                             "): ", parts...);
    }

  private:
    const Operand& inputOperand(uint32_t i) const {
        return mSubgraph.operands[mOperation.inputs[i]];
    }
    const Operand& outputOperand(uint32_t j) const {
        return mSubgraph.operands[mOperation.outputs[j]];
    }
    const OperandValue& inputValue(uint32_t i) const { return mValues[mOperation.inputs[i]]; }
    OperandValue& outputValue(uint32_t j) { return mValues[mOperation.outputs[j]]; }
    const OperandValue& outputValue(uint32_t j) const { return mValues[mOperation.outputs[j]]; }

    const Model& mModel;
    const Subgraph& mSubgraph;
    const Operation& mOperation;
    uint32_t mIndex;
    std::vector<OperandValue>& mValues;
    uint64_t& mMemoryLeft;
};

/// An operation's reference implementation: reads its inputs, sets and writes its outputs.
using OperationExecutor = Status (*)(ExecutionContext& ctx);

/// The implementation registered for `type` (golden/ops/Operations.cpp), or null.
OperationExecutor findOperationExecutor(OperationType type);

/// Whether `type` has optional inputs (it checks ExecutionContext::isOmitted itself). Any other
/// operation given an omitted input fails before its implementation runs, as in Android.
bool acceptsOmittedInputs(OperationType type);

}  // namespace nncosim::golden
