// A small builder for assembling NNAPI models in C++ (tests, examples, the model zoo).
#pragma once

#include <cstring>
#include <vector>

#include "model/Model.h"

namespace nncosim {

/// Builds the main graph of a Model operand by operand. Indexes returned are operand indexes.
/// Constants added with addConstant() are CONSTANT_COPY; with addReferenceBytes()
/// CONSTANT_REFERENCE in one shared-memory pool that build() creates.
class ModelBuilder {
  public:
    /// A TEMPORARY_VARIABLE operand.
    uint32_t addOperand(OperandType type, std::vector<uint32_t> dims = {}, float scale = 0.0f,
                        int32_t zeroPoint = 0);
    /// A main-graph input (appended to inputIndexes).
    uint32_t addInput(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f,
                      int32_t zeroPoint = 0);
    /// A main-graph output (appended to outputIndexes).
    uint32_t addOutput(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f,
                       int32_t zeroPoint = 0);
    /// A CONSTANT_COPY operand holding raw bytes.
    uint32_t addConstantBytes(OperandType type, std::vector<uint32_t> dims, const void* data,
                              size_t length, float scale = 0.0f, int32_t zeroPoint = 0);
    template <typename T>
    uint32_t addConstant(OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values,
                         float scale = 0.0f, int32_t zeroPoint = 0) {
        return addConstantBytes(type, std::move(dims), values.data(), values.size() * sizeof(T),
                                scale, zeroPoint);
    }
    /// A CONSTANT_REFERENCE operand whose bytes go to the model's shared-memory pool.
    uint32_t addReferenceBytes(OperandType type, std::vector<uint32_t> dims, const void* data,
                               size_t length, float scale = 0.0f, int32_t zeroPoint = 0);
    uint32_t addInt32(int32_t value);
    uint32_t addFloat32(float value);
    uint32_t addBool(bool value);
    /// An omitted optional input (lifetime NO_VALUE).
    uint32_t addNoValue(OperandType type);
    /// A SUBGRAPH operand referring to a new entry of Model::referenced.
    uint32_t addSubgraph(Subgraph subgraph);
    void setPerChannelQuant(uint32_t operand, std::vector<float> scales, uint32_t channelDim);
    void addOperation(OperationType type, std::vector<uint32_t> inputs,
                      std::vector<uint32_t> outputs);
    void setRelaxed(bool relaxed) { mModel.relaxComputationFloat32toFloat16 = relaxed; }

    /// Direct access for tests that need to break rules on purpose.
    Model& model() { return mModel; }
    /// Finishes the model: creates the pool of reference constants. The builder is left empty.
    Model build();

  private:
    uint32_t add(Operand operand);
    Model mModel;
    std::vector<uint8_t> mReferenceBytes;
    std::vector<uint32_t> mReferenceOperands;
};

}  // namespace nncosim
