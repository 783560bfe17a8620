#include "model/Subgraphs.h"

namespace nncosim {

Result<PartitionModel> extractPartition(const Model& model, const std::vector<uint32_t>& operations,
                                        const std::vector<bool>& exported) {
    const Subgraph& g = model.main;
    PartitionModel pm;
    Model& sub = pm.model;
    // Constants stay where they are (referenced subgraphs point into them too).
    sub.referenced = model.referenced;
    sub.operandValues = model.operandValues;
    sub.pools = model.pools;
    sub.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
    sub.extensionNameToPrefix = model.extensionNameToPrefix;

    std::vector<bool> writtenHere(g.operands.size(), false);
    for (uint32_t i : operations) {
        for (uint32_t k : g.operations[i].outputs) writtenHere[k] = true;
    }
    std::vector<int64_t> mapped(g.operands.size(), -1);
    auto map = [&](uint32_t k) -> uint32_t {
        if (mapped[k] >= 0) return static_cast<uint32_t>(mapped[k]);
        Operand operand = g.operands[k];
        switch (operand.lifetime) {
            case OperandLifeTime::SUBGRAPH_INPUT:
                pm.inputs.push_back(k);
                break;
            case OperandLifeTime::TEMPORARY_VARIABLE:
            case OperandLifeTime::SUBGRAPH_OUTPUT:
                if (!writtenHere[k]) {
                    operand.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
                    pm.inputs.push_back(k);
                } else {
                    operand.lifetime = exported[k] ? OperandLifeTime::SUBGRAPH_OUTPUT
                                                   : OperandLifeTime::TEMPORARY_VARIABLE;
                    if (exported[k]) pm.outputs.push_back(k);
                }
                operand.location = {};
                break;
            default:  // constants, NO_VALUE, SUBGRAPH
                break;
        }
        sub.main.operands.push_back(std::move(operand));
        mapped[k] = static_cast<int64_t>(sub.main.operands.size() - 1);
        return static_cast<uint32_t>(mapped[k]);
    };
    for (uint32_t i : operations) {
        const Operation& op = g.operations[i];
        Operation copy;
        copy.type = op.type;
        for (uint32_t k : op.inputs) copy.inputs.push_back(map(k));
        for (uint32_t k : op.outputs) copy.outputs.push_back(map(k));
        sub.main.operations.push_back(std::move(copy));
        pm.operations.push_back(i);
    }
    if (pm.outputs.empty()) return invalidArgument("the partition's results are not used");
    for (uint32_t k : pm.inputs) sub.main.inputIndexes.push_back(static_cast<uint32_t>(mapped[k]));
    for (uint32_t k : pm.outputs)
        sub.main.outputIndexes.push_back(static_cast<uint32_t>(mapped[k]));
    return pm;
}

std::vector<bool> exportedOperands(const Model& model, const std::vector<uint32_t>& groupOf,
                                   bool everyResult) {
    const Subgraph& g = model.main;
    std::vector<bool> exported(g.operands.size(), false);
    for (uint32_t k : g.outputIndexes) exported[k] = true;
    std::vector<int64_t> writer(g.operands.size(), -1);  // group writing each operand
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        for (uint32_t k : g.operations[i].outputs) {
            writer[k] = groupOf[i];
            if (everyResult) exported[k] = true;
        }
    }
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        for (uint32_t k : g.operations[i].inputs) {
            if (writer[k] >= 0 && writer[k] != groupOf[i]) exported[k] = true;
        }
    }
    return exported;
}

Model subgraphModel(const Model& model, uint32_t index) {
    Model sub = model;
    sub.main = model.referenced.at(index);
    return sub;
}

}  // namespace nncosim
