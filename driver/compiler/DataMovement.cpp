// RESHAPE, SQUEEZE and EXPAND_DIMS (views: the output shares its input's bytes) and CONCATENATION
// (each input copied through the LUT unit into its slab of the output, requantized when its
// quantization differs).
#include <algorithm>
#include <cmath>

#include "driver/compiler/Lowering.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

Status reshapeSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (!isQuant8(c.operand(op.inputs[0]).type))
        return unsupported(op, "only 8-bit quantized tensors");
    if (!c.isConstantOrInput(op.inputs[1]))
        return unsupported(op, "the shape must be a constant or a model input");
    return okStatus();
}

Result<std::vector<uint32_t>> reshapeOutputShape(const Lowering& lw, const Operation& op) {
    const uint8_t* p = lw.constants().data(op.inputs[1]);
    const auto& shape = lw.dims(op.inputs[1]);
    if (!p || shape.size() != 1) return fail(ErrorStatus::GENERAL_FAILURE, "shape");
    std::vector<int32_t> target(shape[0]);
    std::memcpy(target.data(), p, target.size() * sizeof(int32_t));
    auto out = reshapeShape(lw.dims(op.inputs[0]), target);
    if (out && std::find(out->begin(), out->end(), 0u) != out->end())
        return fail(ErrorStatus::GENERAL_FAILURE, "zero-sized target shape ", toString(*out));
    return out;
}

// SQUEEZE and EXPAND_DIMS: their axes are constants (an omitted SQUEEZE axis list: every axis of
// size 1).
Status squeezeSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (!isQuant8(c.operand(op.inputs[0]).type))
        return unsupported(op, "only 8-bit quantized tensors");
    if (c.operand(op.inputs[1]).lifetime != OperandLifeTime::NO_VALUE &&
        !c.isConstant(op.inputs[1]))
        return unsupported(op, "the axes must be constants");
    return okStatus();
}

Result<std::vector<uint32_t>> squeezeOutputShape(const Lowering& lw, const Operation& op) {
    std::optional<std::vector<int32_t>> axes;
    if (lw.operand(op.inputs[1]).lifetime != OperandLifeTime::NO_VALUE) {
        const uint8_t* p = lw.constants().data(op.inputs[1]);
        if (!p) return fail(ErrorStatus::GENERAL_FAILURE, "axes");
        axes.emplace(elementCount(lw.dims(op.inputs[1])));
        std::memcpy(axes->data(), p, axes->size() * sizeof(int32_t));
    }
    return squeezeShape(lw.dims(op.inputs[0]), axes);
}

Result<std::vector<uint32_t>> expandDimsOutputShape(const Lowering& lw, const Operation& op) {
    auto axis = lw.constants().scalar<int32_t>(op.inputs[1]);
    if (!axis) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    return expandDimsShape(lw.dims(op.inputs[0]), *axis);
}

Status lowerReshape(Lowering& lw, const Operation& op) {
    // A view of a constant is placed with the constants now; otherwise nothing moves.
    if (lw.constants().isConstant(op.inputs[0])) lw.address(op.outputs[0]);
    return okStatus();
}

Status concatenationSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
    if (!c.isConstant(op.inputs[n])) return unsupported(op, "the axis must be a constant");
    const Operand& out = c.operand(op.outputs[0]);
    for (uint32_t i = 0; i < n; ++i) {
        if (c.operand(op.inputs[i]).type != out.type) return unsupported(op, "input types");
    }
    if (out.dimensions.size() > 4) return unsupported(op, "rank above 4");
    return okStatus();
}

Result<std::vector<uint32_t>> concatenationOutputShape(const Lowering& lw, const Operation& op) {
    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
    auto axis = lw.constants().scalar<int32_t>(op.inputs[n]);
    if (!axis) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    std::vector<std::vector<uint32_t>> shapes;
    for (uint32_t i = 0; i < n; ++i) shapes.push_back(lw.dims(op.inputs[i]));
    return concatenationShape(shapes, *axis);
}

// Android's concatenation with scaling for an input whose quantization differs from the
// output's (float rescale, round, clamp); the identity otherwise.
Table requantTable(const Operand& in, const Operand& out) {
    if (in.scale == out.scale && in.zeroPoint == out.zeroPoint)
        return tableOf(in.type, [](int32_t v) { return v; });
    const float scale = in.scale * (1.0f / out.scale);
    const float bias = -in.zeroPoint * scale;
    return tableOf(in.type, [&](int32_t v) {
        const int32_t r = static_cast<int32_t>(std::round(v * scale + bias)) + out.zeroPoint;
        return std::clamp(r, typeMin(out.type), typeMax(out.type));
    });
}

Status lowerConcatenation(Lowering& lw, const Operation& op) {
    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
    const Operand& out = lw.operand(op.outputs[0]);
    const auto& outD = lw.dims(op.outputs[0]);
    const auto rank = static_cast<int32_t>(outD.size());
    int32_t axis = *lw.constants().scalar<int32_t>(op.inputs[n]);
    if (axis < 0) axis += rank;
    uint64_t outer = 1, outInner = 1;
    for (int32_t i = 0; i < axis; ++i) outer *= outD[i];
    for (int32_t i = axis; i < rank; ++i) outInner *= outD[i];
    const uint32_t outBase = lw.address(op.outputs[0]);
    const uint32_t maxWords = npu::kSpadWords / 2;
    uint64_t offset = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t k = op.inputs[i];
        const uint64_t inner = elementCount(lw.dims(k)) / std::max<uint64_t>(1, outer);
        if (inner == 0) continue;
        if (outer > kMaxCount) return lw.fail(op, "more slabs than the descriptor's 16 bits");
        const npu::Descriptor d =
            lookupDescriptor(lw, lw.operand(k).type, out.type, requantTable(lw.operand(k), out));
        // Slabs longer than a row's 16-bit INNER are copied in column chunks of whole words.
        const uint32_t chunk = std::min<uint64_t>(inner, kMaxCount / kAlign * kAlign);
        const uint32_t maxRows = std::max(1u, maxWords / ceilDiv(chunk, npu::kDramBusBytes));
        const uint32_t inBase = lw.address(k);
        const auto in32 = static_cast<uint32_t>(inner);
        for (uint32_t c0 = 0; c0 < in32; c0 += chunk) {
            const uint32_t width = std::min(chunk, in32 - c0);
            for (uint64_t r0 = 0; r0 < outer; r0 += maxRows) {
                const auto rows = static_cast<uint32_t>(std::min<uint64_t>(maxRows, outer - r0));
                npu::Descriptor t = d;
                t.a = {
                    inBase + static_cast<uint32_t>(r0 * inner) + c0, width, rows, in32, 1, 1, 0, 0};
                t.out = {outBase + static_cast<uint32_t>(r0 * outInner + offset) + c0,
                         width,
                         rows,
                         static_cast<uint32_t>(outInner),
                         1,
                         1,
                         0,
                         0};
                lw.emit(t);
            }
        }
        offset += inner;
    }
    return okStatus();
}

}  // namespace

extern const NpuOperation kReshapeOperation{
    reshapeSupported, reshapeOutputShape, lowerReshape, nullptr, {1}, true};
extern const NpuOperation kSqueezeOperation{
    squeezeSupported, squeezeOutputShape, lowerReshape, nullptr, {}, true};
extern const NpuOperation kExpandDimsOperation{
    squeezeSupported, expandDimsOutputShape, lowerReshape, nullptr, {}, true};
extern const NpuOperation kConcatenationOperation{
    concatenationSupported, concatenationOutputShape, lowerConcatenation, nullptr, {}, false};

}  // namespace nncosim::driver
