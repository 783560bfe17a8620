#include "model/Builder.h"

#include <stdexcept>

namespace nncosim {

uint32_t ModelBuilder::add(Operand operand) {
    mModel.main.operands.push_back(std::move(operand));
    return static_cast<uint32_t>(mModel.main.operands.size() - 1);
}

uint32_t ModelBuilder::addOperand(OperandType type, std::vector<uint32_t> dims, float scale,
                                  int32_t zeroPoint) {
    return add(
        {type, std::move(dims), scale, zeroPoint, OperandLifeTime::TEMPORARY_VARIABLE, {}, {}});
}

uint32_t ModelBuilder::addInput(OperandType type, std::vector<uint32_t> dims, float scale,
                                int32_t zeroPoint) {
    uint32_t i =
        add({type, std::move(dims), scale, zeroPoint, OperandLifeTime::SUBGRAPH_INPUT, {}, {}});
    mModel.main.inputIndexes.push_back(i);
    return i;
}

uint32_t ModelBuilder::addOutput(OperandType type, std::vector<uint32_t> dims, float scale,
                                 int32_t zeroPoint) {
    uint32_t i =
        add({type, std::move(dims), scale, zeroPoint, OperandLifeTime::SUBGRAPH_OUTPUT, {}, {}});
    mModel.main.outputIndexes.push_back(i);
    return i;
}

uint32_t ModelBuilder::addConstantBytes(OperandType type, std::vector<uint32_t> dims,
                                        const void* data, size_t length, float scale,
                                        int32_t zeroPoint) {
    auto& values = mModel.operandValues;
    // Keep every constant 4-byte aligned, as the NNAPI runtime does.
    values.resize((values.size() + 3) & ~size_t{3});
    DataLocation loc;
    loc.offset = static_cast<uint32_t>(values.size());
    loc.length = static_cast<uint32_t>(length);
    const auto* bytes = static_cast<const uint8_t*>(data);
    values.insert(values.end(), bytes, bytes + length);
    return add({type, std::move(dims), scale, zeroPoint, OperandLifeTime::CONSTANT_COPY, loc, {}});
}

uint32_t ModelBuilder::addReferenceBytes(OperandType type, std::vector<uint32_t> dims,
                                         const void* data, size_t length, float scale,
                                         int32_t zeroPoint) {
    mReferenceBytes.resize((mReferenceBytes.size() + 3) & ~size_t{3});
    DataLocation loc;
    loc.offset = static_cast<uint32_t>(mReferenceBytes.size());
    loc.length = static_cast<uint32_t>(length);
    const auto* bytes = static_cast<const uint8_t*>(data);
    mReferenceBytes.insert(mReferenceBytes.end(), bytes, bytes + length);
    uint32_t i = add(
        {type, std::move(dims), scale, zeroPoint, OperandLifeTime::CONSTANT_REFERENCE, loc, {}});
    mReferenceOperands.push_back(i);
    return i;
}

uint32_t ModelBuilder::addInt32(int32_t value) {
    return addConstantBytes(OperandType::INT32, {}, &value, sizeof(value));
}

uint32_t ModelBuilder::addFloat32(float value) {
    return addConstantBytes(OperandType::FLOAT32, {}, &value, sizeof(value));
}

uint32_t ModelBuilder::addBool(bool value) {
    const uint8_t byte = value ? 1 : 0;
    return addConstantBytes(OperandType::BOOL, {}, &byte, 1);
}

uint32_t ModelBuilder::addNoValue(OperandType type) {
    return add({type, {}, 0.0f, 0, OperandLifeTime::NO_VALUE, {}, {}});
}

uint32_t ModelBuilder::addSubgraph(Subgraph subgraph) {
    mModel.referenced.push_back(std::move(subgraph));
    DataLocation loc;
    loc.offset = static_cast<uint32_t>(mModel.referenced.size() - 1);
    return add({OperandType::SUBGRAPH, {}, 0.0f, 0, OperandLifeTime::SUBGRAPH, loc, {}});
}

void ModelBuilder::setPerChannelQuant(uint32_t operand, std::vector<float> scales,
                                      uint32_t channelDim) {
    mModel.main.operands.at(operand).extraParams =
        SymmPerChannelQuantParams{std::move(scales), channelDim};
}

void ModelBuilder::addOperation(OperationType type, std::vector<uint32_t> inputs,
                                std::vector<uint32_t> outputs) {
    mModel.main.operations.push_back({type, std::move(inputs), std::move(outputs)});
}

Model ModelBuilder::build() {
    if (!mReferenceBytes.empty()) {
        auto pool = Memory::create(mReferenceBytes.size(), "nncosim-constants");
        if (!pool) throw std::runtime_error("ModelBuilder: " + pool.status().message);
        std::copy(mReferenceBytes.begin(), mReferenceBytes.end(), pool.value()->data());
        const auto poolIndex = static_cast<uint32_t>(mModel.pools.size());
        mModel.pools.push_back(pool.value());
        for (uint32_t i : mReferenceOperands)
            mModel.main.operands[i].location.poolIndex = poolIndex;
    }
    Model out = std::move(mModel);
    *this = ModelBuilder();
    return out;
}

}  // namespace nncosim
