// The vendor extension com.nncosim.npu, shared by the driver (which executes it on the NPU's
// lookup-table unit) and the golden (which checks it): its name, types, validation and meaning.
//
// LUT8 maps every element of an 8-bit quantized tensor through a 256-entry table:
//   inputs:  0: TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED, rank 1..4
//            1: the table, a constant operand of the extension type LUT_TABLE with dimensions
//               [256] (one byte per entry, no scale or zero point)
//   outputs: 0: same type and dimensions as input 0; its scale and zero point are free
//   output[i] = table[input[i] - lowest value of the type] (the table byte read as the type).
// In model/, the common layer: NNAPI keeps what driver and reference share in common/.
#pragma once

#include <optional>
#include <string_view>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::npu_extension {

inline constexpr std::string_view kName = "com.nncosim.npu";
/// Operand type within the extension: a lookup table, one byte per entry.
inline constexpr uint16_t kLutTable = 0;
/// Operation type within the extension.
inline constexpr uint16_t kLut8 = 0;
inline constexpr uint32_t kLutEntries = 256;

/// The extension as IDevice::getSupportedExtensions describes it.
inline Extension description() {
    return {std::string(kName), {{kLutTable, /*isTensor=*/true, /*byteSize=*/1}}};
}

/// The prefix `model` maps the extension to, if it uses it.
inline std::optional<uint16_t> prefixIn(const Model& model) {
    for (const auto& e : model.extensionNameToPrefix) {
        if (e.name == kName) return e.prefix;
    }
    return std::nullopt;
}

inline bool isLut8(const Model& model, OperationType type) {
    const auto raw = static_cast<int32_t>(type);
    const auto prefix = prefixIn(model);
    return isExtension(raw) && prefix && extensionPrefix(raw) == *prefix &&
           typeWithinExtension(raw) == kLut8;
}

inline bool isLutTable(const Model& model, OperandType type) {
    const auto raw = static_cast<int32_t>(type);
    const auto prefix = prefixIn(model);
    return isExtension(raw) && prefix && extensionPrefix(raw) == *prefix &&
           typeWithinExtension(raw) == kLutTable;
}

/// Validates one LUT8 operation of `subgraph` (operand indexes already checked in range).
inline Status validateLut8(const Model& model, const Subgraph& subgraph, const Operation& op) {
    auto failLut = [](auto... parts) {
        return invalidArgument("LUT8 (com.nncosim.npu): ", parts...);
    };
    if (op.inputs.size() != 2 || op.outputs.size() != 1)
        return failLut("expects 2 inputs and 1 output, got ", op.inputs.size(), " and ",
                       op.outputs.size());
    const Operand& in = subgraph.operands[op.inputs[0]];
    const Operand& table = subgraph.operands[op.inputs[1]];
    const Operand& out = subgraph.operands[op.outputs[0]];
    if (in.type != OperandType::TENSOR_QUANT8_ASYMM &&
        in.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED)
        return failLut("input 0 must be TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED");
    if (in.dimensions.size() > 4) return failLut("input 0 must have rank 1 to 4");
    if (out.type != in.type) return failLut("output 0 must have the type of input 0");
    if (!out.dimensions.empty() && !in.dimensions.empty()) {
        if (out.dimensions.size() != in.dimensions.size())
            return failLut("output 0 must have the rank of input 0");
        for (size_t d = 0; d < in.dimensions.size(); ++d) {
            if (in.dimensions[d] && out.dimensions[d] && in.dimensions[d] != out.dimensions[d])
                return failLut("output 0 dimension ", d, " differs from input 0");
        }
    }
    if (!isLutTable(model, table.type))
        return failLut("input 1 must be of the extension type LUT_TABLE");
    if (table.dimensions != std::vector<uint32_t>{kLutEntries})
        return failLut("input 1 must have dimensions [256]");
    if (table.scale != 0.0f || table.zeroPoint != 0)
        return failLut("input 1 must have no scale or zero point");
    if (table.lifetime != OperandLifeTime::CONSTANT_COPY &&
        table.lifetime != OperandLifeTime::CONSTANT_REFERENCE)
        return failLut("input 1 must be a constant");
    if (table.location.length != kLutEntries) return failLut("input 1 must hold 256 bytes");
    return okStatus();
}

/// Table index of a quantized value of the input's type.
inline uint8_t lutIndex(OperandType type, int32_t value) {
    return static_cast<uint8_t>(type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ? value + 128
                                                                                : value);
}

}  // namespace nncosim::npu_extension
