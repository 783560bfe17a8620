#include "model/RequestIo.h"

#include <algorithm>
#include <cstring>

namespace nncosim {
namespace {

/// Start of an argument's bytes, or null for NO_VALUE / token pools.
uint8_t* argumentBytes(const Request& request, const Request::Argument& arg) {
    using LifeTime = Request::Argument::LifeTime;
    if (arg.lifetime == LifeTime::POINTER) {
        return std::visit(
            [](auto* p) {
                return static_cast<uint8_t*>(const_cast<void*>(static_cast<const void*>(p)));
            },
            arg.location.pointer);
    }
    if (arg.lifetime != LifeTime::POOL || arg.location.poolIndex >= request.pools.size())
        return nullptr;
    const auto* memory = std::get_if<SharedMemory>(&request.pools[arg.location.poolIndex]);
    return memory && *memory ? (*memory)->data() + arg.location.offset : nullptr;
}

}  // namespace

Result<std::vector<TensorData>> readRequestInputs(const Model& model, const Request& request) {
    std::vector<TensorData> inputs;
    inputs.reserve(request.inputs.size());
    for (size_t i = 0; i < request.inputs.size(); ++i) {
        const Request::Argument& arg = request.inputs[i];
        const Operand& operand = model.main.operands[model.main.inputIndexes[i]];
        TensorData t;
        if (arg.lifetime == Request::Argument::LifeTime::NO_VALUE) {
            inputs.push_back(std::move(t));
            continue;
        }
        t.dimensions = arg.dimensions.empty() ? operand.dimensions : arg.dimensions;
        const bool unknown =
            t.dimensions.empty() ||
            std::find(t.dimensions.begin(), t.dimensions.end(), 0u) != t.dimensions.end();
        if (isTensorType(operand.type) && unknown)
            return invalidArgument("request input ", i, " has unknown dimensions ",
                                   toString(t.dimensions));
        const uint8_t* src = argumentBytes(request, arg);
        if (!src)
            return invalidArgument("request input ", i,
                                   " is in a driver-managed buffer or missing pool");
        const uint64_t size = byteSize(operand.type, t.dimensions);
        if (arg.location.length < size)
            return invalidArgument("request input ", i, " has ", arg.location.length,
                                   " bytes, needs ", size);
        t.bytes.assign(src, src + size);
        inputs.push_back(std::move(t));
    }
    return inputs;
}

Status writeRequestOutputs(const Model& model, const Request& request,
                           const std::vector<TensorData>& outputs,
                           std::vector<OutputShape>* shapes) {
    if (outputs.size() != request.outputs.size())
        return fail(ErrorStatus::GENERAL_FAILURE, "produced ", outputs.size(), " outputs for ",
                    request.outputs.size(), " request outputs");
    shapes->assign(outputs.size(), {});
    bool sufficient = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Request::Argument& arg = request.outputs[i];
        (*shapes)[i].dimensions = outputs[i].dimensions;
        if (arg.lifetime == Request::Argument::LifeTime::NO_VALUE) continue;
        const Operand& operand = model.main.operands[model.main.outputIndexes[i]];
        const uint64_t size = byteSize(operand.type, outputs[i].dimensions);
        if (size > arg.location.length) {
            (*shapes)[i].isSufficient = false;
            sufficient = false;
            continue;
        }
        uint8_t* dst = argumentBytes(request, arg);
        if (!dst)
            return invalidArgument("request output ", i,
                                   " is in a driver-managed buffer or missing pool");
        // What produced the output (a program, perhaps from a cache) must agree with the model.
        if (outputs[i].bytes.size() < size)
            return fail(ErrorStatus::GENERAL_FAILURE, "output ", i, " holds ",
                        outputs[i].bytes.size(), " bytes; its type and shape need ", size);
        if (size) std::memcpy(dst, outputs[i].bytes.data(), size);
    }
    if (!sufficient)
        return fail(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                    "an output buffer is smaller than its output");
    return okStatus();
}

}  // namespace nncosim
