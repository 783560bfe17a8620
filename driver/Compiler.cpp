// The compiler's public entry points; the lowering itself is in driver/compiler/.
#include "driver/Compiler.h"

#include <algorithm>
#include <optional>

#include "driver/ControlFlow.h"
#include "driver/compiler/Lowering.h"
#include "model/NpuExtension.h"
#include "model/Validation.h"

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

namespace {

// A relaxed model as the float16 model it may run as (relaxComputationFloat32toFloat16 allows
// binary16 range and precision): every float32 operand becomes float16, constants rounded to
// nearest even. Its tensors then take half the DRAM traffic, as a float16 model's do. None when
// the model is not relaxed, has IF or WHILE, a float32 scalar input or output, packs run-time
// weights, or when the float16 form is not a valid model whose every operation the NPU runs:
// the model then runs in binary32.
std::optional<Model> relaxedAsFloat16(const Model& model) {
    if (!model.relaxComputationFloat32toFloat16 || hasControlFlow(model)) return std::nullopt;
    for (const auto* indexes : {&model.main.inputIndexes, &model.main.outputIndexes}) {
        for (uint32_t k : *indexes) {
            if (model.main.operands[k].type == OperandType::FLOAT32) return std::nullopt;
        }
    }
    Model half = model;
    half.relaxComputationFloat32toFloat16 = false;
    bool anyFloat32 = false;
    for (Operand& o : half.main.operands) {
        if (o.type != OperandType::TENSOR_FLOAT32 && o.type != OperandType::FLOAT32) continue;
        anyFloat32 = true;
        const uint8_t* data = constantData(model, o);
        o.type = o.type == OperandType::TENSOR_FLOAT32 ? OperandType::TENSOR_FLOAT16
                                                       : OperandType::FLOAT16;
        if (!data) continue;
        const std::vector<uint8_t> values = floatsToBinary16(data, o.location.length / 4);
        half.operandValues.resize((half.operandValues.size() + 3) / 4 * 4);  // aligned
        o.lifetime = OperandLifeTime::CONSTANT_COPY;
        o.location = DataLocation{};
        o.location.offset = static_cast<uint32_t>(half.operandValues.size());
        o.location.length = static_cast<uint32_t>(values.size());
        half.operandValues.insert(half.operandValues.end(), values.begin(), values.end());
    }
    if (!anyFloat32 || !validateModel(half) || !compileTimeInputs(half).empty())
        return std::nullopt;
    for (uint32_t i = 0; i < half.main.operations.size(); ++i) {
        if (!checkOperationSupported(half, i).ok()) return std::nullopt;
    }
    return half;
}

}  // namespace

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
    const std::optional<Model> half = relaxedAsFloat16(model);
    const Model& device = half ? *half : model;
    auto program = Lowering(device, rewriteGraph(device), inputShapes, inputValues).run();
    if (!program || !half) return program;
    // The request's float32 inputs and outputs: binary16 on the device, converted by the runtime.
    const auto widen = [&](std::vector<ProgramIo>& ios, const std::vector<uint32_t>& indexes) {
        for (size_t k = 0; k < ios.size(); ++k) {
            if (model.main.operands[indexes[k]].type != OperandType::TENSOR_FLOAT32) continue;
            ios[k].binary16OnDevice = true;
            ios[k].size *= 2;
        }
    };
    widen(program->inputs, model.main.inputIndexes);
    widen(program->outputs, model.main.outputIndexes);
    return program;
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
