#include "testbench/runtime/Partitioner.h"

#include <deque>

namespace nncosim {
namespace {

bool writtenByOperation(OperandLifeTime lifetime) {
    return lifetime == OperandLifeTime::TEMPORARY_VARIABLE ||
           lifetime == OperandLifeTime::SUBGRAPH_OUTPUT;
}

float subgraphPerformance(const Model& model, const Subgraph& g, const Capabilities& caps,
                          ExecutionPreference preference);

float performanceOf(const Model& model, const Subgraph& g, const Operation& op,
                    const Capabilities& caps, ExecutionPreference preference) {
    const auto pick = [preference](const PerformanceInfo& p) {
        return preference == ExecutionPreference::LOW_POWER ? p.powerUsage : p.execTime;
    };
    const auto referenced = [&](size_t input) -> const Subgraph* {
        if (input >= op.inputs.size() || op.inputs[input] >= g.operands.size()) return nullptr;
        const Operand& operand = g.operands[op.inputs[input]];
        if (operand.lifetime != OperandLifeTime::SUBGRAPH) return nullptr;
        const uint32_t index = operand.location.offset;
        return index < model.referenced.size() ? &model.referenced[index] : nullptr;
    };
    const auto sum = [&](const Subgraph* s) {
        return s ? subgraphPerformance(model, *s, caps, preference) : 0.0f;
    };
    if (op.type == OperationType::IF) {  // inputs: condition, then, else, ...
        return pick(caps.ifPerformance) + 0.5f * (sum(referenced(1)) + sum(referenced(2)));
    }
    if (op.type == OperationType::WHILE) {  // inputs: condition, body, ...
        return pick(caps.whilePerformance) + sum(referenced(0)) + sum(referenced(1));
    }
    if (op.inputs.empty() || op.inputs[0] >= g.operands.size()) return pick(PerformanceInfo{});
    const OperandType type = g.operands[op.inputs[0]].type;
    if (model.relaxComputationFloat32toFloat16) {
        if (type == OperandType::FLOAT32)
            return pick(caps.relaxedFloat32toFloat16PerformanceScalar);
        if (type == OperandType::TENSOR_FLOAT32)
            return pick(caps.relaxedFloat32toFloat16PerformanceTensor);
    }
    for (const auto& entry : caps.operandPerformance) {
        if (entry.type == type) return pick(entry.info);
    }
    return pick(PerformanceInfo{});  // a type the table does not list: no information
}

float subgraphPerformance(const Model& model, const Subgraph& g, const Capabilities& caps,
                          ExecutionPreference preference) {
    float total = 0.0f;
    for (const Operation& op : g.operations) total += performanceOf(model, g, op, caps, preference);
    return total;
}

/// Android's CPU device: 1.0 for everything.
Capabilities cpuCapabilities() {
    const PerformanceInfo one{kCpuPerformance, kCpuPerformance};
    Capabilities caps;
    caps.relaxedFloat32toFloat16PerformanceScalar = one;
    caps.relaxedFloat32toFloat16PerformanceTensor = one;
    caps.ifPerformance = one;
    caps.whilePerformance = one;
    for (int t = 0; t <= static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED); ++t)
        caps.operandPerformance.push_back({static_cast<OperandType>(t), one});
    return caps;
}

}  // namespace

const char* nameOf(ExecutionPreference preference) {
    switch (preference) {
        case ExecutionPreference::LOW_POWER:
            return "LOW_POWER";
        case ExecutionPreference::FAST_SINGLE_ANSWER:
            return "FAST_SINGLE_ANSWER";
        case ExecutionPreference::SUSTAINED_SPEED:
            return "SUSTAINED_SPEED";
    }
    return "(invalid preference)";
}

std::optional<ExecutionPreference> preferenceFromName(std::string_view name) {
    if (name == "low-power") return ExecutionPreference::LOW_POWER;
    if (name == "fast-single-answer") return ExecutionPreference::FAST_SINGLE_ANSWER;
    if (name == "sustained-speed") return ExecutionPreference::SUSTAINED_SPEED;
    return std::nullopt;
}

float operationPerformance(const Model& model, uint32_t operation, const Capabilities& capabilities,
                           ExecutionPreference preference) {
    return performanceOf(model, model.main, model.main.operations.at(operation), capabilities,
                         preference);
}

std::vector<bool> chooseNpu(const Model& model, const std::vector<bool>& supported,
                            const Capabilities& npuCapabilities, ExecutionPreference preference) {
    static const Capabilities cpu = cpuCapabilities();
    std::vector<bool> onNpu(model.main.operations.size(), false);
    for (uint32_t i = 0; i < onNpu.size(); ++i) {
        if (i >= supported.size() || !supported[i]) continue;
        // Android's comparison: the NPU only when strictly better (a tie goes to the CPU).
        onNpu[i] = operationPerformance(model, i, npuCapabilities, preference) <
                   operationPerformance(model, i, cpu, preference);
    }
    return onNpu;
}

std::vector<Partition> partitionOperations(const Model& model, const std::vector<bool>& onNpu) {
    const Subgraph& g = model.main;
    const size_t n = g.operations.size();
    // Inputs not yet available per operation, counted per occurrence, and the readers of each
    // operand (one entry per occurrence too).
    std::vector<uint32_t> waiting(n, 0);
    std::vector<std::vector<uint32_t>> readers(g.operands.size());
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k : g.operations[i].inputs) {
            if (k < g.operands.size() && writtenByOperation(g.operands[k].lifetime)) {
                ++waiting[i];
                readers[k].push_back(i);
            }
        }
    }
    std::deque<uint32_t> ready[2];  // [0]: NPU, [1]: CPU (Android tries the CPU last)
    auto enqueue = [&](uint32_t i) { ready[onNpu[i] ? 0 : 1].push_back(i); };
    for (uint32_t i = 0; i < n; ++i) {
        if (waiting[i] == 0) enqueue(i);
    }
    std::vector<Partition> partitions;
    while (true) {
        const int device = !ready[0].empty() ? 0 : !ready[1].empty() ? 1 : -1;
        if (device < 0) break;
        Partition p;
        p.npu = device == 0;
        while (!ready[device].empty()) {
            const uint32_t i = ready[device].front();
            ready[device].pop_front();
            p.operations.push_back(i);
            for (uint32_t k : g.operations[i].outputs) {
                if (k >= g.operands.size()) continue;
                for (uint32_t reader : readers[k]) {
                    if (--waiting[reader] == 0) enqueue(reader);
                }
            }
        }
        partitions.push_back(std::move(p));
    }
    return partitions;
}

std::vector<Partition> singleOperationPartitions(const Model& model,
                                                 const std::vector<bool>& onNpu) {
    std::vector<Partition> partitions;
    for (uint32_t i = 0; i < model.main.operations.size(); ++i)
        partitions.push_back({onNpu[i], {i}});
    return partitions;
}

std::vector<bool> exportedOperands(const Model& model, const std::vector<Partition>& partitions,
                                   bool everyResult) {
    std::vector<uint32_t> groupOf(model.main.operations.size(), 0);
    for (size_t p = 0; p < partitions.size(); ++p)
        for (uint32_t i : partitions[p].operations) groupOf[i] = static_cast<uint32_t>(p);
    return exportedOperands(model, groupOf, everyResult);
}

}  // namespace nncosim
