// validateDeclaredShapes: the shapes a model declares against what its operations compute, with
// the shared per-operation shape code (Window.h, Shapes.h).
#include <algorithm>
#include <cstring>

#include "model/Validation.h"
#include "model/operations/Shapes.h"
#include "model/operations/Window.h"

namespace nncosim {
namespace {

// Operations whose output 0 has input 0's shape.
bool keepsShape(OperationType t) {
    switch (t) {
        case OperationType::RELU:
        case OperationType::RELU1:
        case OperationType::RELU6:
        case OperationType::LOGISTIC:
        case OperationType::TANH:
        case OperationType::ABS:
        case OperationType::EXP:
        case OperationType::LOG:
        case OperationType::NEG:
        case OperationType::SQRT:
        case OperationType::RSQRT:
        case OperationType::SIN:
        case OperationType::FLOOR:
        case OperationType::HARD_SWISH:
        case OperationType::ELU:
        case OperationType::QUANTIZE:
        case OperationType::DEQUANTIZE:
        case OperationType::CAST:
        case OperationType::SOFTMAX:
        case OperationType::L2_NORMALIZATION:
            return true;
        default:
            return false;
    }
}

// Operations whose output 0 is the broadcast of inputs 0 and 1.
bool broadcasts(OperationType t) {
    switch (t) {
        case OperationType::ADD:
        case OperationType::SUB:
        case OperationType::MUL:
        case OperationType::DIV:
        case OperationType::MAXIMUM:
        case OperationType::MINIMUM:
        case OperationType::POW:
        case OperationType::PRELU:
            return true;
        default:
            return false;
    }
}

bool fullyKnown(const std::vector<uint32_t>& dims) {
    return !dims.empty() && std::find(dims.begin(), dims.end(), 0u) == dims.end();
}

// What validation knows of the main graph: the values of constants.
OperationInputs constantInputs(const Model& model, const Operation& op) {
    OperationInputs in;
    const auto& operands = model.main.operands;
    const auto data = [&model, &op, &operands](uint32_t i) -> const uint8_t* {
        const Operand& o = operands[op.inputs[i]];
        if (o.lifetime != OperandLifeTime::CONSTANT_COPY &&
            o.lifetime != OperandLifeTime::CONSTANT_REFERENCE)
            return nullptr;
        return constantData(model, o);
    };
    in.count = static_cast<uint32_t>(op.inputs.size());
    in.type = [&operands, &op](uint32_t i) { return operands[op.inputs[i]].type; };
    in.int32 = [data](uint32_t i) -> std::optional<int32_t> {
        const uint8_t* p = data(i);
        if (!p) return std::nullopt;
        int32_t v;
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    in.boolean = [data](uint32_t i) -> std::optional<bool> {
        const uint8_t* p = data(i);
        if (!p) return std::nullopt;
        return *p != 0;
    };
    in.omitted = [&operands, &op](uint32_t i) {
        return operands[op.inputs[i]].lifetime == OperandLifeTime::NO_VALUE;
    };
    return in;
}

// Output 0's shape computed from the known input shapes; nullopt when it cannot be (unknown
// shapes or values, or an operation without shared shape code).
std::optional<std::vector<uint32_t>> computedShape(const Model& model, const Operation& op,
                                                   const std::vector<std::vector<uint32_t>>& dims) {
    const auto& in = [&](uint32_t i) -> const std::vector<uint32_t>& { return dims[op.inputs[i]]; };
    for (uint32_t k : op.inputs) {
        if (isTensorType(model.main.operands[k].type) && !fullyKnown(dims[k]) &&
            model.main.operands[k].lifetime != OperandLifeTime::NO_VALUE)
            return std::nullopt;
    }
    if (keepsShape(op.type)) return in(0);
    if (broadcasts(op.type)) return broadcastShape(in(0), in(1));
    if (isWindowOperation(op.type)) {
        auto p = decodeWindowParams(op.type, constantInputs(model, op));
        if (!p) return std::nullopt;
        const bool pooling = isPoolingOperation(op.type);
        auto g = windowGeometry(op.type, *p, in(0), pooling ? std::vector<uint32_t>{} : in(1),
                                pooling ? std::vector<uint32_t>{} : in(2));
        if (!g) return std::nullopt;
        return windowOutputShape(*g, p->nchw);
    }
    if (op.type == OperationType::FULLY_CONNECTED) {
        auto s = fullyConnectedShape(in(0), in(1), in(2));
        return s ? std::optional(*s) : std::nullopt;
    }
    if (op.type == OperationType::CONCATENATION) {
        const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
        auto axis = constantInputs(model, op).int32(n);
        if (!axis) return std::nullopt;
        std::vector<std::vector<uint32_t>> shapes;
        for (uint32_t i = 0; i < n; ++i) shapes.push_back(in(i));
        auto s = concatenationShape(shapes, *axis);
        return s ? std::optional(*s) : std::nullopt;
    }
    if (op.type == OperationType::RESHAPE) {
        const Operand& shape = model.main.operands[op.inputs[1]];
        const bool constant = shape.lifetime == OperandLifeTime::CONSTANT_COPY ||
                              shape.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
        const uint8_t* p = constant ? constantData(model, shape) : nullptr;
        if (!p || shape.dimensions.size() != 1) return std::nullopt;
        std::vector<int32_t> target(shape.dimensions[0]);
        std::memcpy(target.data(), p, target.size() * sizeof(int32_t));
        auto s = reshapeShape(in(0), target);
        return s ? std::optional(*s) : std::nullopt;
    }
    return std::nullopt;
}

// Each main-graph operation's declared output 0 against its computed shape, in execution
// order. A computed shape refines the declared one for later operations when they agree; when
// they contradict, later operations see the declared shape (so that only the contradicting
// operation is blamed).
std::vector<Status> declaredShapeChecks(const Model& model) {
    const Subgraph& g = model.main;
    std::vector<std::vector<uint32_t>> dims;
    for (const Operand& o : g.operands) dims.push_back(o.dimensions);
    std::vector<Status> checks(g.operations.size());
    for (size_t i = 0; i < g.operations.size(); ++i) {
        const Operation& op = g.operations[i];
        auto computed = computedShape(model, op, dims);
        if (!computed || op.outputs.empty()) continue;
        const uint32_t out = op.outputs[0];
        const auto& declared = g.operands[out].dimensions;
        bool agrees = declared.empty() || declared.size() == computed->size();
        for (size_t d = 0; agrees && d < declared.size(); ++d)
            agrees = declared[d] == 0 || declared[d] == (*computed)[d];
        if (!agrees) {
            checks[i] =
                invalidArgument("operation ", i, " (", nameOf(op.type), "): output 0 (operand ",
                                out, ") has the computed shape ", toString(*computed),
                                " but the model declares ", toString(declared));
            continue;
        }
        dims[out] = *computed;
    }
    return checks;
}

}  // namespace

Status validateDeclaredShapes(const Model& model) {
    for (Status& st : declaredShapeChecks(model)) {
        if (!st.ok()) return std::move(st);
    }
    return okStatus();
}

std::vector<bool> declaredShapesAgree(const Model& model) {
    std::vector<bool> agree;
    for (const Status& st : declaredShapeChecks(model)) agree.push_back(st.ok());
    return agree;
}

}  // namespace nncosim
