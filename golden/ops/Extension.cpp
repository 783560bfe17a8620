// com.nncosim.npu LUT8 (model/NpuExtension.h): each element through a 256-entry table.
#include "golden/ops/Extension.h"
#include "golden/ops/Operations.h"

#include "model/NpuExtension.h"

namespace nncosim::golden {
namespace {

Status executeLut8(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const OperandType type = ctx.inputType(0);
    const uint8_t* in = ctx.inputBytes(0);
    const uint8_t* table = ctx.inputBytes(1);
    uint8_t* out = ctx.outputBytes(0);
    const size_t n = ctx.inputCount(0);
    for (size_t i = 0; i < n; ++i) {
        const int32_t value = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED
                                  ? static_cast<int32_t>(static_cast<int8_t>(in[i]))
                                  : static_cast<int32_t>(in[i]);
        out[i] = table[npu_extension::lutIndex(type, value)];
    }
    return okStatus();
}

}  // namespace

// OEM_OPERATION is vendor-defined: there is nothing to check it against.
Status executeOemOperation(ExecutionContext& ctx) {
    return ctx.fail("golden: no reference implementation of OEM_OPERATION");
}

OperationExecutor findExtensionOperationExecutor(const Model& model, OperationType type) {
    if (npu_extension::isLut8(model, type)) return &executeLut8;
    return nullptr;
}

}  // namespace nncosim::golden
