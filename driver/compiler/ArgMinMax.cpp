// ARGMAX and ARGMIN of 8-bit quantized tensors: the index of the first largest (smallest)
// stored value along the axis, as the golden finds it. The input is copied with the axis
// outermost, [L, P] (REDUCE_MAX's layout; ARGMIN complements the bytes on the way, so that its
// minimum is a maximum), and a MAXPOOL over the axis gives each line's extremum. The ordering SUB
// of every element against its line's extremum is zero exactly where they are equal; one LUT per
// index l turns that into the key 255 - l where equal and 0 elsewhere, so a second MAXPOOL picks
// the first index of the extremum, and a last LUT writes 255 - key into the low byte of each
// int32 output (whose other bytes a fill cleared).
#include "driver/compiler/Lowering.h"

namespace nncosim::driver {
namespace {

// Keys 255 - l of L <= 255 indexes stay above the 0 of "not the extremum".
constexpr uint32_t kMaxAxis = 255;

struct ArgLayout {
    ReduceLayout copy;
    uint32_t axis = 0, length = 0;
};

std::optional<ArgLayout> argLayoutOf(const Constants& c, const Operation& op,
                                     const std::vector<uint32_t>& dims) {
    auto axisValue = c.scalar<int32_t>(op.inputs[1]);
    if (!axisValue) return std::nullopt;
    const auto rank = static_cast<int32_t>(dims.size());
    const int32_t axis = *axisValue < 0 ? *axisValue + rank : *axisValue;
    if (axis < 0 || axis >= rank) return std::nullopt;
    std::vector<bool> reduced(dims.size(), false);
    reduced[axis] = true;
    auto copy = reduceLayout(dims, reduced);
    if (!copy) return std::nullopt;
    return ArgLayout{std::move(*copy), static_cast<uint32_t>(axis), dims[axis]};
}

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if (!isQuant8(in.type) || c.operand(op.outputs[0]).type != OperandType::TENSOR_INT32)
        return unsupported(op, "only 8-bit quantized inputs");
    if (!c.isConstant(op.inputs[1])) return unsupported(op, "the axis must be a constant");
    if (!orderingSub(in, in)) return unsupported(op, "no exact ordering SUB for this scale");
    if (elementCount(in.dimensions) == 0) return okStatus();  // checked when the shape is known
    auto layout = argLayoutOf(c, op, in.dimensions);
    if (!layout) return unsupported(op, "axis");
    if (layout->length > kMaxAxis) return unsupported(op, "more than 255 elements along the axis");
    if (layout->copy.kept > kMaxCount / 4)
        return unsupported(op, "more outputs than 16-bit counts");
    return okStatus();
}

Result<std::vector<uint32_t>> outputShape(const Lowering& lw, const Operation& op) {
    const auto& dims = lw.dims(op.inputs[0]);
    auto layout = argLayoutOf(lw.constants(), op, dims);
    if (!layout) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    std::vector<uint32_t> out = dims;
    out.erase(out.begin() + layout->axis);
    if (out.empty()) out.push_back(1);
    return out;
}

// The copy, the extrema, the ordering differences, the keys, the largest keys.
std::vector<uint64_t> scratch(const Lowering& lw, const Operation& op) {
    const uint64_t all = elementCount(lw.dims(op.inputs[0]));
    const uint64_t lines = elementCount(lw.dims(op.outputs[0]));
    return {all, lines, all, all, lines};
}

Status lower(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    auto layout = argLayoutOf(lw.constants(), op, lw.dims(op.inputs[0]));
    auto sub = orderingSub(in, in);
    if (!layout || !sub) return lw.fail(op, "axis or scale");
    const uint32_t L = layout->length, P = layout->copy.kept;
    if (L == 0 || P == 0) return okStatus();
    const std::vector<uint32_t>& areas = lw.scratch();
    const uint32_t ordered = areas.at(0), extrema = areas[1], difference = areas[2],
                   keys = areas[3], best = areas[4];
    const bool argmin = op.type == OperationType::ARGMIN;
    const Table complement = tableOf(in.type, [](int32_t v) { return ~v; });
    MoveEmitter copy(lw, 1, 0, argmin ? std::optional<Table>(complement) : std::nullopt);
    NN_RETURN_IF_ERROR(copy.box(lw.address(op.inputs[0]), ordered, layout->copy.axes));

    // max over the axis, as a window of windowH x windowW over [1, windowH, windowW, P].
    const npu::ConvGeometry window{layout->copy.windowH, layout->copy.windowW, 1, 1, 1, 1, 0, 0};
    const auto maxPool = [&](uint32_t src, uint32_t dst, OperandType type) {
        npu::DeviceTensor from;
        from.addr = src;
        from.h = layout->copy.windowH, from.w = layout->copy.windowW, from.c = P;
        from.isSigned = isSigned(type);
        npu::DeviceTensor to = from;
        to.addr = dst;
        to.h = to.w = 1;
        npu::ChainBuilder chain;
        NN_RETURN_IF_ERROR(chain.pool(npu::Pooling::MAX, from, to, window,
                                      npu::OutputStage{0, typeMin(type), typeMax(type)}));
        lw.emitChain(chain);
        return okStatus();
    };
    NN_RETURN_IF_ERROR(maxPool(ordered, extrema, in.type));

    // Each element against its line's extremum (broadcast over the axis).
    const std::array<uint32_t, 4> shape{1, 1, L, P};
    const auto dense = npu::ChainBuilder::denseStrides(shape);
    npu::ChainBuilder subtract;
    NN_RETURN_IF_ERROR(subtract.stream(addSubDescriptor(in, in, in.type, *sub), {ordered, dense},
                                       npu::StridedTensor{extrema, {0, 0, 0, 1}},
                                       {difference, dense}, shape));
    lw.emitChain(subtract);

    // The keys, line by line of the axis, then the largest.
    for (uint32_t l = 0; l < L; ++l) {
        const Table key = tableOf(in.type, [&](int32_t v) {
            return v == sub->outputOffset ? static_cast<int32_t>(kMaxAxis - l) : 0;
        });
        MoveEmitter keyOf(lw, 1, 0, key);
        NN_RETURN_IF_ERROR(keyOf.block(difference + l * P, keys + l * P, {{P, 1, 1}}, false));
    }
    NN_RETURN_IF_ERROR(maxPool(keys, best, OperandType::TENSOR_QUANT8_ASYMM));

    // The int32 indexes: zeros, then each low byte.
    const uint32_t out = lw.address(op.outputs[0]);
    MoveEmitter zeros(lw, 1, 0);
    NN_RETURN_IF_ERROR(zeros.block(0, out, {{4 * P, 1, 1}}, true));
    const Table index = tableOf(OperandType::TENSOR_QUANT8_ASYMM,
                                [](int32_t k) { return static_cast<int32_t>(kMaxAxis) - k; });
    MoveEmitter indexes(lw, 1, 0, index);
    return indexes.block(best, out, {{P, 1, 4}}, false);
}

}  // namespace

extern const NpuOperation kArgMinMaxOperation{supported, outputShape, lower,   scratch,
                                              {},        false,       nullptr, true};

}  // namespace nncosim::driver
