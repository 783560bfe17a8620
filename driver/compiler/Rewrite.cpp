// The graph rewrites that run before lowering, in one place. A PAD (or a PAD_V2 whose value is
// the zero point, or +0 for float tensors) that pads only height and width folds into the
// explicit padding of the NHWC convolutions that alone read it: the convolution's padding
// contributes (zero point - zero point) = 0 per tap, exactly what the padded bytes contribute,
// so the result is bit-exact; a float convolution's padding taps are +0 inputs, as the padded
// elements are, so its result is the same bits too.
// Pooling is not folded: NNAPI's pools leave padding out of the maximum and the average, which a
// padded tensor would not. A PAD that does not fold runs as a copy (an element map).
#include <algorithm>

#include "driver/compiler/Lowering.h"

namespace nncosim::driver {
namespace {

bool isPad(OperationType type) {
    return type == OperationType::PAD || type == OperationType::PAD_V2;
}

bool foldsPadding(OperationType type) {
    return type == OperationType::CONV_2D || type == OperationType::DEPTHWISE_CONV_2D ||
           type == OperationType::GROUPED_CONV_2D;
}

// The [rank, 2] paddings of a PAD as {top, bottom, left, right}, when they pad only H and W of
// a 4-D tensor with the zero point (+0 for float tensors).
std::optional<std::array<int32_t, 4>> spatialPadding(const Model& model, const Operation& pad) {
    const Constants c(model);
    const Operand& in = c.operand(pad.inputs[0]);
    const bool isFloat =
        in.type == OperandType::TENSOR_FLOAT32 || in.type == OperandType::TENSOR_FLOAT16;
    if (!(isQuant8(in.type) || isFloat) || in.dimensions.size() != 4) return std::nullopt;
    const Operand& paddings = c.operand(pad.inputs[1]);
    const auto* p = reinterpret_cast<const int32_t*>(c.data(pad.inputs[1]));
    if (!p || paddings.location.length != 8 * sizeof(int32_t)) return std::nullopt;
    std::array<int32_t, 8> v{};
    std::memcpy(v.data(), p, sizeof(v));
    if (v[0] != 0 || v[1] != 0 || v[6] != 0 || v[7] != 0) return std::nullopt;  // N, C
    if (pad.type == OperationType::PAD_V2 && isFloat) {
        // +0: every bit of the FLOAT32 or FLOAT16 scalar clear.
        const uint8_t* value = c.data(pad.inputs[2]);
        const size_t n = c.length(pad.inputs[2]);
        if (!value || n == 0 || std::any_of(value, value + n, [](uint8_t v) { return v != 0; }))
            return std::nullopt;
    } else if (pad.type == OperationType::PAD_V2) {
        auto value = c.scalar<int32_t>(pad.inputs[2]);
        if (!value || *value != in.zeroPoint) return std::nullopt;
    }
    return std::array<int32_t, 4>{v[2], v[3], v[4], v[5]};
}

// The operations reading operand k, with the positions where they read it.
std::vector<std::pair<uint32_t, uint32_t>> readersOf(const Subgraph& g, uint32_t k) {
    std::vector<std::pair<uint32_t, uint32_t>> r;
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        const auto& inputs = g.operations[i].inputs;
        for (uint32_t j = 0; j < inputs.size(); ++j) {
            if (inputs[j] == k) r.emplace_back(i, j);
        }
    }
    return r;
}

// A convolution's padding {left, right, top, bottom} when it is explicit or VALID (SAME depends
// on the input's size, which the PAD changes).
std::optional<std::array<int32_t, 4>> ownPadding(const Model& model, const Operation& op) {
    auto p = decodeWindowParams(op.type, Constants(model).inputsOf(op));
    if (!p || p->nchw) return std::nullopt;
    if (!p->explicitPadding && p->scheme != kPaddingValid) return std::nullopt;
    return std::array<int32_t, 4>{p->padW.head, p->padW.tail, p->padH.head, p->padH.tail};
}

}  // namespace

Status padFolds(const Model& model, uint32_t index) {
    const Subgraph& g = model.main;
    const Operation& pad = g.operations[index];
    const auto padding = spatialPadding(model, pad);
    if (!padding)
        return unsupported(pad,
                           "folds into a convolution only when it pads height and width of "
                           "an 8-bit quantized tensor with its zero point, or of a float "
                           "tensor with +0");
    if (g.operands[pad.outputs[0]].lifetime != OperandLifeTime::TEMPORARY_VARIABLE)
        return unsupported(pad, "its result is a model output, not folded into a convolution");
    const auto readers = readersOf(g, pad.outputs[0]);
    if (readers.empty()) return unsupported(pad, "no convolution reads it");
    for (const auto& [reader, position] : readers) {
        const Operation& conv = g.operations[reader];
        const auto own =
            foldsPadding(conv.type) && position == 0 ? ownPadding(model, conv) : std::nullopt;
        if (!own)
            return unsupported(pad,
                               "folds only into NHWC convolutions with explicit or VALID "
                               "padding that read it as their input");
        const auto [top, bottom, left, right] = *padding;
        if ((*own)[0] + left > int32_t{kMaxByteField} || (*own)[2] + top > int32_t{kMaxByteField})
            return unsupported(pad, "leading padding beyond the descriptor's 8 bits");
        const Status st = checkOperationSupported(model, reader);
        if (!st.ok()) return unsupported(pad, "its convolution is not supported: " + st.message);
    }
    return okStatus();
}

RewrittenModel rewriteGraph(const Model& model) {
    RewrittenModel r{model, {}};
    Subgraph& g = r.model.main;
    auto addInt32 = [&](int32_t value) {
        auto& values = r.model.operandValues;
        values.resize((values.size() + 3) & ~size_t{3});
        DataLocation loc;
        loc.offset = static_cast<uint32_t>(values.size());
        loc.length = sizeof(value);
        const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
        values.insert(values.end(), bytes, bytes + sizeof(value));
        g.operands.push_back(
            {OperandType::INT32, {}, 0.0f, 0, OperandLifeTime::CONSTANT_COPY, loc, {}});
        return static_cast<uint32_t>(g.operands.size() - 1);
    };
    std::vector<bool> folded(g.operations.size(), false);
    for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
        const Operation& pad = model.main.operations[i];
        if (!isPad(pad.type) || !padFolds(model, i).ok()) continue;
        const auto [top, bottom, left, right] = *spatialPadding(model, pad);
        for (const auto& [reader, position] : readersOf(model.main, pad.outputs[0])) {
            const Operation& original = model.main.operations[reader];
            const auto own = *ownPadding(model, original);
            const WindowSignature s =
                windowSignature(original.type, static_cast<uint32_t>(original.inputs.size()),
                                [&](uint32_t j) { return g.operands[original.inputs[j]].type; });
            // The explicit form: the padding scheme (or the four paddings) replaced by the sums.
            std::vector<uint32_t> inputs(original.inputs.begin(),
                                         original.inputs.begin() + s.padding);
            inputs[0] = pad.inputs[0];
            for (int32_t v : {own[0] + left, own[1] + right, own[2] + top, own[3] + bottom})
                inputs.push_back(addInt32(v));
            inputs.insert(inputs.end(), original.inputs.begin() + s.strides, original.inputs.end());
            g.operations[reader].inputs = std::move(inputs);
        }
        folded[i] = true;
    }
    std::vector<Operation> operations;
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        if (folded[i]) continue;
        operations.push_back(std::move(g.operations[i]));
        r.origin.push_back(i);
    }
    g.operations = std::move(operations);
    return r;
}

}  // namespace nncosim::driver
