// The compiler's public entry points; the lowering itself is in driver/compiler/.
#include "driver/Compiler.h"

#include <algorithm>

#include "driver/ControlFlow.h"
#include "driver/compiler/Lowering.h"
#include "model/NpuExtension.h"

namespace nncosim::driver {

std::vector<uint32_t> compileTimeInputs(const Model& model) {
    const auto& g = model.main;
    std::vector<uint32_t> positions;
    for (const Operation& op : g.operations) {
        const NpuOperation* npuOp = findNpuOperation(model, op);
        if (!npuOp) continue;
        for (uint32_t i : npuOp->packedInputs) {
            if (i >= op.inputs.size() ||
                g.operands[op.inputs[i]].lifetime != OperandLifeTime::SUBGRAPH_INPUT)
                continue;
            const auto it = std::find(g.inputIndexes.begin(), g.inputIndexes.end(), op.inputs[i]);
            const auto pos = static_cast<uint32_t>(it - g.inputIndexes.begin());
            if (it != g.inputIndexes.end() &&
                std::find(positions.begin(), positions.end(), pos) == positions.end())
                positions.push_back(pos);
        }
    }
    return positions;
}

Status checkOperationSupported(const Model& model, uint32_t index) {
    const Operation& op = model.main.operations[index];
    if (op.type == OperationType::IF || op.type == OperationType::WHILE)
        return controlFlowSupported(model, op);
    // A PAD folds into the convolutions that read it, or runs as a copy.
    if ((op.type == OperationType::PAD || op.type == OperationType::PAD_V2) &&
        padFolds(model, index).ok())
        return okStatus();
    const NpuOperation* npuOp = findNpuOperation(model, op);
    if (!npuOp) {
        return unsupported(
            op, isExtension(op.type) ? "unknown extension operation" : "not an NPU operation");
    }
    if (!npu_extension::isLut8(model, op.type) && !npuOp->ownOutputTypes) {
        for (uint32_t o : op.outputs) {
            if (!isQuant8(model.main.operands[o].type))
                return unsupported(op, "only 8-bit quantized outputs");
        }
    }
    return npuOp->supported(model, op);
}

Result<Program> compileModel(const Model& model,
                             const std::vector<std::vector<uint32_t>>& inputShapes,
                             const InputValues& inputValues) {
    for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
        Status st = checkOperationSupported(model, i);
        if (!st.ok()) return fail(ErrorStatus::GENERAL_FAILURE, "operation ", i, ": ", st.message);
    }
    if (hasControlFlow(model))
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "IF and WHILE run job by job (ControlFlowRunner), not in one program");
    const RewrittenModel rewritten = rewriteGraph(model);
    return Lowering(model, rewritten, inputShapes, inputValues).run();
}

ProgramVariants::ProgramVariants(const Model& model)
    : mModel(model), mCompileTimeInputs(compileTimeInputs(model)) {}

Result<std::shared_ptr<const Program>> ProgramVariants::get(
    const std::vector<TensorData>& inputs) const {
    Key key;
    for (const TensorData& t : inputs) key.first.push_back(t.dimensions);
    InputValues values;
    for (uint32_t pos : mCompileTimeInputs) {
        key.second.push_back(inputs.at(pos).bytes);
        values[mModel.main.inputIndexes[pos]] = inputs[pos].bytes;
    }
    std::lock_guard<std::mutex> lock(mMutex);
    if (auto it = mVariants.find(key); it != mVariants.end()) return it->second;
    auto program = compileModel(mModel, key.first, values);
    if (!program) return program.status();
    auto shared = std::make_shared<const Program>(std::move(*program));
    if (mVariants.size() >= kMaxVariants) mVariants.clear();
    mVariants[std::move(key)] = shared;
    return shared;
}

}  // namespace nncosim::driver
