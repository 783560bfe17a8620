#include "model/tests/ModelMutations.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

namespace nncosim {
namespace {

// ---------------------------------------------------------------------------------------------
// Tables: what is invalid for each operand type, and the places where VTS knows a mutation
// would still leave a valid model (operations accepting several types or operand counts).
// ---------------------------------------------------------------------------------------------

/// How an operand is reshaped when it is switched to another type, so that only the type
/// conflicts with its operation (VTS's mutateOperand).
enum class Reshape {
    kScalar,            ///< no dimensions, scale 0, zero point 0
    kTensor,            ///< dimensions kept (or [1]), scale 0, zero point 0
    kInt32Tensor,       ///< dimensions kept (or [1]), scale kept, zero point 0
    kQuantTensor,       ///< dimensions kept (or [1]), scale kept (or 1), zero point kept
    kPerChannelTensor,  ///< as kTensor, plus unit per-channel scales along dimension 0
    kTypeOnly,          ///< only the type changes
};

struct TypeRules {
    OperandType type;
    uint32_t invalidRank;  ///< a rank this type never has; 0 when every rank is possible
    float invalidScale;
    std::vector<int32_t> invalidZeroPoints;
    Reshape reshape;
};

// The per-type lists of VTS. TENSOR_QUANT8_ASYMM_SIGNED is absent from VTS's zero-point list
// and reshaped as a bare type change there; here it gets its range bounds and is reshaped like
// the other quantized tensors, so the operation validators see a well-formed operand.
const std::vector<TypeRules>& allTypeRules() {
    using T = OperandType;
    static const std::vector<TypeRules> kRules = {
        {T::FLOAT32, 1, 1.0f, {1}, Reshape::kScalar},
        {T::INT32, 1, 1.0f, {1}, Reshape::kScalar},
        {T::UINT32, 1, 1.0f, {1}, Reshape::kScalar},
        {T::TENSOR_FLOAT32, 0, 1.0f, {1}, Reshape::kTensor},
        {T::TENSOR_INT32, 0, -1.0f, {1}, Reshape::kInt32Tensor},
        {T::TENSOR_QUANT8_ASYMM, 0, 0.0f, {-1, 256}, Reshape::kQuantTensor},
        {T::BOOL, 1, 1.0f, {1}, Reshape::kScalar},
        {T::TENSOR_QUANT16_SYMM, 0, 0.0f, {-32769, -1, 1, 32768}, Reshape::kQuantTensor},
        {T::TENSOR_FLOAT16, 0, 1.0f, {1}, Reshape::kTensor},
        {T::TENSOR_BOOL8, 0, 1.0f, {1}, Reshape::kTensor},
        {T::FLOAT16, 1, 1.0f, {1}, Reshape::kScalar},
        {T::TENSOR_QUANT8_SYMM_PER_CHANNEL, 0, 1.0f, {1}, Reshape::kPerChannelTensor},
        {T::TENSOR_QUANT16_ASYMM, 0, 0.0f, {-1, 65536}, Reshape::kQuantTensor},
        {T::TENSOR_QUANT8_SYMM, 0, 0.0f, {-129, -1, 1, 128}, Reshape::kQuantTensor},
        {T::TENSOR_QUANT8_ASYMM_SIGNED, 0, 0.0f, {-129, 128}, Reshape::kQuantTensor},
        {T::SUBGRAPH, 0, 1.0f, {1}, Reshape::kTypeOnly},
    };
    return kRules;
}

const TypeRules* findTypeRules(OperandType type) {
    for (const TypeRules& rules : allTypeRules()) {
        if (rules.type == type) return &rules;
    }
    return nullptr;  // OEM and extension types: nothing is known to be invalid for them
}

// Values just outside NNAPI's ranges: below the first type, past the last fundamental type, and
// around the OEM range.
const std::vector<int32_t> kInvalidOperandTypes = {
    -1,
    static_cast<int32_t>(OperandType::SUBGRAPH) + 1,
    static_cast<int32_t>(OperandType::OEM) - 1,
    static_cast<int32_t>(OperandType::TENSOR_OEM_BYTE) + 1,
};
const std::vector<int32_t> kInvalidOperationTypes = {
    -1,
    static_cast<int32_t>(OperationType::REVERSE) + 1,
    static_cast<int32_t>(OperationType::OEM_OPERATION) - 1,
    static_cast<int32_t>(OperationType::OEM_OPERATION) + 1,
};
const std::vector<int32_t> kInvalidPreferences = {
    static_cast<int32_t>(ExecutionPreference::LOW_POWER) - 1,
    static_cast<int32_t>(ExecutionPreference::SUSTAINED_SPEED) + 1,
};
const std::vector<int32_t> kInvalidPriorities = {
    static_cast<int32_t>(Priority::LOW) - 1,
    static_cast<int32_t>(Priority::HIGH) + 1,
};

/// Which operands of an operation a skip rule covers.
enum class Slot { kAnyOperand, kInput, kOutput };

/// Switching an operand to one of `types` (every type when empty) may keep the model valid.
struct TypeSkipRule {
    OperationType operation;
    Slot slot;
    uint32_t index;  ///< input or output index for kInput / kOutput
    std::vector<OperandType> types;
};

const std::vector<TypeSkipRule>& typeSkipRules() {
    using T = OperandType;
    using O = OperationType;
    static const std::vector<T> kCastLike = {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32, T::TENSOR_INT32,
                                             T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED};
    static const std::vector<T> kFloats = {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32};
    static const std::vector<T> kQuant8Asymm = {T::TENSOR_QUANT8_ASYMM,
                                                T::TENSOR_QUANT8_ASYMM_SIGNED};
    static const std::vector<T> kConvFilter = {T::TENSOR_QUANT8_ASYMM,
                                               T::TENSOR_QUANT8_SYMM_PER_CHANNEL};
    static const std::vector<TypeSkipRule> kRules = {
        {O::LSH_PROJECTION, Slot::kInput, 1, {}},  // the hashed input may have any type
        {O::CAST, Slot::kAnyOperand, 0, kCastLike},
        {O::ARGMAX, Slot::kAnyOperand, 0, kCastLike},
        {O::ARGMIN, Slot::kAnyOperand, 0, kCastLike},
        {O::QUANTIZE, Slot::kInput, 0, kFloats},
        {O::QUANTIZE, Slot::kOutput, 0, kQuant8Asymm},
        {O::RANDOM_MULTINOMIAL, Slot::kInput, 0, kFloats},
        {O::DEQUANTIZE,
         Slot::kInput,
         0,
         {T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED, T::TENSOR_QUANT8_SYMM,
          T::TENSOR_QUANT8_SYMM_PER_CHANNEL}},
        {O::DEQUANTIZE, Slot::kOutput, 0, kFloats},
        {O::CONV_2D, Slot::kInput, 1, kConvFilter},
        {O::DEPTHWISE_CONV_2D, Slot::kInput, 1, kConvFilter},
        {O::GROUPED_CONV_2D, Slot::kInput, 1, kConvFilter},
        {O::TRANSPOSE_CONV_2D, Slot::kInput, 1, kConvFilter},
        {O::AXIS_ALIGNED_BBOX_TRANSFORM, Slot::kInput, 1, kQuant8Asymm},
        {O::RANK,
         Slot::kInput,
         0,
         {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32, T::TENSOR_INT32, T::TENSOR_QUANT8_ASYMM,
          T::TENSOR_QUANT16_SYMM, T::TENSOR_BOOL8, T::TENSOR_QUANT8_SYMM_PER_CHANNEL,
          T::TENSOR_QUANT16_ASYMM, T::TENSOR_QUANT8_SYMM, T::TENSOR_QUANT8_ASYMM_SIGNED}},
    };
    return kRules;
}

/// Removing input `input` of an operation with `count` inputs in [minCount, maxCount] leaves a
/// valid operation when input >= firstInput: the trailing inputs are optional (layout flags,
/// axes, resize alignment flags).
struct OptionalInputRule {
    OperationType operation;
    uint32_t minCount;
    uint32_t maxCount;
    uint32_t firstInput;
};

constexpr uint32_t kAnyCount = UINT32_MAX;

const std::vector<OptionalInputRule>& optionalInputRules() {
    using O = OperationType;
    static const std::vector<OptionalInputRule> kRules = {
        {O::DEPTHWISE_CONV_2D, 12, 12, 11},
        {O::DEPTHWISE_CONV_2D, 9, 9, 8},
        {O::CONV_2D, 11, 11, 10},
        {O::CONV_2D, 8, 8, 7},
        {O::AVERAGE_POOL_2D, 11, 11, 10},
        {O::AVERAGE_POOL_2D, 8, 8, 7},
        {O::MAX_POOL_2D, 11, 11, 10},
        {O::MAX_POOL_2D, 8, 8, 7},
        {O::L2_POOL_2D, 11, 11, 10},
        {O::L2_POOL_2D, 8, 8, 7},
        {O::RESIZE_BILINEAR, 4, kAnyCount, 3},
        {O::RESIZE_NEAREST_NEIGHBOR, 5, kAnyCount, 3},
        {O::SPACE_TO_DEPTH, 3, 3, 2},
        {O::DEPTH_TO_SPACE, 3, 3, 2},
        {O::BATCH_TO_SPACE_ND, 3, 3, 2},
        {O::SPACE_TO_BATCH_ND, 4, 4, 3},
        {O::L2_NORMALIZATION, 2, 2, 1},
        {O::LOCAL_RESPONSE_NORMALIZATION, 6, 6, 5},
        {O::SOFTMAX, 3, 3, 2},
    };
    return kRules;
}

/// Adding an input to an operation with at most `maxCount` inputs may fill an optional slot.
struct OptionalSlotRule {
    OperationType operation;
    uint32_t maxCount;
};

const std::vector<OptionalSlotRule>& optionalSlotRules() {
    using O = OperationType;
    static const std::vector<OptionalSlotRule> kRules = {
        {O::L2_NORMALIZATION, 1}, {O::LOCAL_RESPONSE_NORMALIZATION, 5}, {O::SOFTMAX, 2},
        {O::RESIZE_BILINEAR, 5},  {O::RESIZE_NEAREST_NEIGHBOR, 5},
    };
    return kRules;
}

/// Operations whose number of outputs depends on their parameters (SPLIT's split count, the
/// sequence ops' merged or state outputs), so losing an output operand may keep them valid.
const std::vector<OperationType> kVariableOutputOperations = {
    OperationType::SPLIT,
    OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM,
    OperationType::UNIDIRECTIONAL_SEQUENCE_RNN,
    OperationType::BIDIRECTIONAL_SEQUENCE_LSTM,
    OperationType::BIDIRECTIONAL_SEQUENCE_RNN,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Copies `original`, lets `mutate` change the copy's model and hands it to `sink`.
template <typename Mutate>
void emit(const Model& original, const MutationSink& sink, std::string description,
          Mutate&& mutate) {
    ModelMutation mutation{std::move(description), original};
    mutate(mutation.model);
    sink(mutation);
}

/// How many times each operand of `subgraph` is read by its operations.
std::vector<uint32_t> consumerCounts(const Subgraph& subgraph) {
    std::vector<uint32_t> counts(subgraph.operands.size(), 0);
    for (const Operation& op : subgraph.operations) {
        for (uint32_t k : op.inputs) {
            if (k < counts.size()) ++counts[k];
        }
    }
    return counts;
}

/// Bytes of the operand as a constant; 0 when its shape or element size is not known.
uint64_t knownByteSize(const Operand& operand) {
    if (isExtension(operand.type) || hasUnknownDimensions(operand)) return 0;
    return byteSize(operand.type, operand.dimensions);
}

/// Makes operand `index` a CONSTANT_COPY of the first bytes of operandValues (grown with zeros
/// when too short). The value is arbitrary: the lifetime alone must make the model invalid.
void becomeConstantCopy(Model& model, uint32_t index) {
    Operand& operand = model.main.operands[index];
    const uint64_t size = knownByteSize(operand);
    operand.lifetime = OperandLifeTime::CONSTANT_COPY;
    operand.location = {};
    operand.location.length = static_cast<uint32_t>(size);
    if (model.operandValues.size() < size) model.operandValues.resize(size);
}

/// Sets a new lifetime with an empty location (a CONSTANT_COPY gets bytes).
void setLifetime(Model& model, uint32_t index, OperandLifeTime lifetime) {
    if (lifetime == OperandLifeTime::CONSTANT_COPY) {
        becomeConstantCopy(model, index);
    } else {
        model.main.operands[index].lifetime = lifetime;
        model.main.operands[index].location = {};
    }
}

template <typename T>
void eraseValue(std::vector<T>& list, T value) {
    list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

/// Drops every mention of operand `index` and renumbers the operands after it. (VTS's version
/// leaves later indexes unshifted, so its removals mostly fail on an index out of range; with
/// renumbering, removing an optional trailing input can leave a valid model, hence the input
/// rules in skipOperandRemoval.)
void removeOperand(Subgraph& subgraph, uint32_t index) {
    subgraph.operands.erase(subgraph.operands.begin() + index);
    auto renumber = [index](std::vector<uint32_t>& list) {
        eraseValue<uint32_t>(list, index);
        for (uint32_t& k : list) {
            if (k > index) --k;
        }
    };
    for (Operation& op : subgraph.operations) {
        renumber(op.inputs);
        renumber(op.outputs);
    }
    renumber(subgraph.inputIndexes);
    renumber(subgraph.outputIndexes);
}

/// Appends an INT32 scalar operand with the given lifetime; returns its index.
uint32_t addInt32Operand(Subgraph& subgraph, OperandLifeTime lifetime) {
    Operand operand;
    operand.type = OperandType::INT32;
    operand.lifetime = lifetime;
    subgraph.operands.push_back(operand);
    return static_cast<uint32_t>(subgraph.operands.size() - 1);
}

/// A copy of operand `index` as a new temporary (model outputs become temporaries); returns its
/// index.
uint32_t duplicateAsTemporary(Subgraph& subgraph, uint32_t index) {
    Operand copy = subgraph.operands[index];
    copy.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
    subgraph.operands.push_back(copy);
    return static_cast<uint32_t>(subgraph.operands.size() - 1);
}

bool isWrittenByOperation(OperandLifeTime lifetime) {
    return lifetime == OperandLifeTime::TEMPORARY_VARIABLE ||
           lifetime == OperandLifeTime::SUBGRAPH_OUTPUT;
}

bool contains(const std::vector<uint32_t>& list, uint32_t value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

std::string operandName(uint32_t index) {
    return "operand " + std::to_string(index);
}
std::string operationName(const Model& model, size_t index) {
    return "operation " + std::to_string(index) + " (" + nameOf(model.main.operations[index].type) +
           ")";
}

/// Switches an operand to `type`, keeping it well-formed for that type (VTS's mutateOperand).
void switchOperandType(Operand& operand, OperandType type, Reshape reshape) {
    const std::vector<uint32_t> tensorDims =
        operand.dimensions.empty() ? std::vector<uint32_t>{1} : operand.dimensions;
    operand.type = type;
    switch (reshape) {
        case Reshape::kScalar:
            operand.dimensions.clear();
            operand.scale = 0.0f;
            operand.zeroPoint = 0;
            break;
        case Reshape::kTensor:
            operand.dimensions = tensorDims;
            operand.scale = 0.0f;
            operand.zeroPoint = 0;
            break;
        case Reshape::kInt32Tensor:
            operand.dimensions = tensorDims;
            operand.zeroPoint = 0;
            break;
        case Reshape::kQuantTensor:
            operand.dimensions = tensorDims;
            if (operand.scale == 0.0f) operand.scale = 1.0f;
            break;
        case Reshape::kPerChannelTensor: {
            SymmPerChannelQuantParams channelQuant;
            channelQuant.channelDim = 0;
            channelQuant.scales.assign(operand.dimensions.empty() ? 0 : operand.dimensions[0],
                                       1.0f);
            operand.dimensions = tensorDims;
            operand.scale = 0.0f;
            operand.zeroPoint = 0;
            operand.extraParams = std::move(channelQuant);
            break;
        }
        case Reshape::kTypeOnly:
            break;
    }
}

/// True when switching operand `index` to `type` may leave the model valid.
bool skipOperandTypeSwitch(const Subgraph& subgraph, uint32_t index, OperandType type) {
    if (subgraph.operands[index].type == type) return true;
    for (const Operation& op : subgraph.operations) {
        for (const TypeSkipRule& rule : typeSkipRules()) {
            if (rule.operation != op.type) continue;
            const std::vector<uint32_t>& list = rule.slot == Slot::kOutput ? op.outputs : op.inputs;
            const bool slotMatches = rule.slot == Slot::kAnyOperand ||
                                     (rule.index < list.size() && list[rule.index] == index);
            const bool typeMatches =
                rule.types.empty() ||
                std::find(rule.types.begin(), rule.types.end(), type) != rule.types.end();
            if (slotMatches && typeMatches) return true;
        }
    }
    return false;
}

/// True when removing input `input` of `op` may leave a valid operation.
bool skipInputRemoval(const Operation& op, size_t input) {
    const size_t count = op.inputs.size();
    // CONCATENATION concatenates any number of tensors before its axis.
    if (op.type == OperationType::CONCATENATION && count > 2 && input + 1 != count) return true;
    for (const OptionalInputRule& rule : optionalInputRules()) {
        if (rule.operation == op.type && count >= rule.minCount && count <= rule.maxCount &&
            input >= rule.firstInput)
            return true;
    }
    return false;
}

bool skipInputAddition(const Operation& op) {
    for (const OptionalSlotRule& rule : optionalSlotRules()) {
        if (rule.operation == op.type && op.inputs.size() <= rule.maxCount) return true;
    }
    return false;
}

/// True when removing operand `index` (from the operands and every list naming it) may leave a
/// valid model: unused operands, outputs of operations with a variable output count, and inputs
/// whose removal leaves a valid operation.
bool skipOperandRemoval(const Subgraph& subgraph, uint32_t index,
                        const std::vector<uint32_t>& consumers) {
    if (consumers[index] == 0) return true;
    for (const Operation& op : subgraph.operations) {
        const bool variableOutputs =
            std::find(kVariableOutputOperations.begin(), kVariableOutputOperations.end(),
                      op.type) != kVariableOutputOperations.end();
        if (variableOutputs && contains(op.outputs, index)) return true;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
            if (op.inputs[i] == index && skipInputRemoval(op, i)) return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// Families
// ---------------------------------------------------------------------------------------------

/// Moves a reader before the writer of its input, or a writer after the readers of its output.
void mutateExecutionOrder(const Model& model, const MutationSink& sink) {
    const Subgraph& graph = model.main;
    const auto consumers = consumerCounts(graph);
    for (size_t i = 0; i < graph.operations.size(); ++i) {
        const Operation& op = graph.operations[i];
        const bool readsComputed = std::any_of(op.inputs.begin(), op.inputs.end(), [&](uint32_t k) {
            return isWrittenByOperation(graph.operands[k].lifetime);
        });
        if (readsComputed) {
            emit(model, sink,
                 operationName(model, i) + " moved first (it reads a computed operand)",
                 [i](Model& m) {
                     auto& ops = m.main.operations;
                     std::rotate(ops.begin(), ops.begin() + i, ops.begin() + i + 1);
                 });
        }
        const bool feedsOthers = std::any_of(op.outputs.begin(), op.outputs.end(),
                                             [&](uint32_t k) { return consumers[k] > 0; });
        if (feedsOthers) {
            emit(model, sink, operationName(model, i) + " moved last (its output is read)",
                 [i](Model& m) {
                     auto& ops = m.main.operations;
                     std::rotate(ops.begin() + i, ops.begin() + i + 1, ops.end());
                 });
        }
    }
}

void mutateOperandType(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        for (int32_t value : kInvalidOperandTypes) {
            emit(model, sink, operandName(k) + " set to type value " + std::to_string(value),
                 [k, value](Model& m) {
                     m.main.operands[k].type = static_cast<OperandType>(value);
                 });
        }
    }
}

void mutateOperandRank(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        const TypeRules* rules = findTypeRules(model.main.operands[k].type);
        if (!rules || rules->invalidRank == 0) continue;
        const uint32_t rank = rules->invalidRank;
        emit(model, sink, operandName(k) + " given rank " + std::to_string(rank),
             [k, rank](Model& m) { m.main.operands[k].dimensions.assign(rank, 0); });
    }
}

void mutateOperandScale(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        const TypeRules* rules = findTypeRules(model.main.operands[k].type);
        if (!rules) continue;
        const float scale = rules->invalidScale;
        emit(model, sink, operandName(k) + " given scale " + std::to_string(scale),
             [k, scale](Model& m) { m.main.operands[k].scale = scale; });
    }
}

void mutateOperandZeroPoint(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        const TypeRules* rules = findTypeRules(model.main.operands[k].type);
        if (!rules) continue;
        for (int32_t zeroPoint : rules->invalidZeroPoints) {
            emit(model, sink, operandName(k) + " given zero point " + std::to_string(zeroPoint),
                 [k, zeroPoint](Model& m) { m.main.operands[k].zeroPoint = zeroPoint; });
        }
    }
}

/// Lifetimes that flip whether the operand must be written by an operation. NO_VALUE and
/// SUBGRAPH operands are left alone: whether they could be written is not known.
std::vector<OperandLifeTime> writerFlippingLifetimes(const Operand& operand) {
    std::vector<OperandLifeTime> result;
    switch (operand.lifetime) {
        case OperandLifeTime::SUBGRAPH_OUTPUT:
        case OperandLifeTime::TEMPORARY_VARIABLE:
            result = {OperandLifeTime::SUBGRAPH_INPUT, OperandLifeTime::CONSTANT_COPY};
            break;
        case OperandLifeTime::CONSTANT_COPY:
        case OperandLifeTime::CONSTANT_REFERENCE:
        case OperandLifeTime::SUBGRAPH_INPUT:
            result = {OperandLifeTime::TEMPORARY_VARIABLE, OperandLifeTime::SUBGRAPH_OUTPUT};
            break;
        default:
            break;
    }
    if (knownByteSize(operand) == 0) eraseValue(result, OperandLifeTime::CONSTANT_COPY);
    return result;
}

void mutateOperandLifetime(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        const OperandLifeTime old = model.main.operands[k].lifetime;
        for (OperandLifeTime lifetime : writerFlippingLifetimes(model.main.operands[k])) {
            emit(
                model, sink,
                operandName(k) + " has lifetime " + nameOf(lifetime) + " instead of " + nameOf(old),
                [k, lifetime](Model& m) {
                    // The subgraph's input/output lists follow the new lifetime.
                    eraseValue<uint32_t>(m.main.inputIndexes, k);
                    eraseValue<uint32_t>(m.main.outputIndexes, k);
                    setLifetime(m, k, lifetime);
                    if (lifetime == OperandLifeTime::SUBGRAPH_INPUT)
                        m.main.inputIndexes.push_back(k);
                    if (lifetime == OperandLifeTime::SUBGRAPH_OUTPUT)
                        m.main.outputIndexes.push_back(k);
                });
        }
    }
}

/// A lifetime that keeps whether the operand is written but changes whether it is a model
/// input or output, while the input/output lists stay as they were.
std::optional<OperandLifeTime> ioSwappedLifetime(const Operand& operand) {
    switch (operand.lifetime) {
        case OperandLifeTime::CONSTANT_COPY:
        case OperandLifeTime::CONSTANT_REFERENCE:
            return OperandLifeTime::SUBGRAPH_INPUT;
        case OperandLifeTime::SUBGRAPH_INPUT:
            if (knownByteSize(operand) == 0) return std::nullopt;
            return OperandLifeTime::CONSTANT_COPY;
        case OperandLifeTime::SUBGRAPH_OUTPUT:
            return OperandLifeTime::TEMPORARY_VARIABLE;
        case OperandLifeTime::TEMPORARY_VARIABLE:
            return OperandLifeTime::SUBGRAPH_OUTPUT;
        default:
            return std::nullopt;
    }
}

void mutateOperandInputOutput(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        const OperandLifeTime old = model.main.operands[k].lifetime;
        const auto lifetime = ioSwappedLifetime(model.main.operands[k]);
        if (!lifetime) continue;
        emit(model, sink,
             operandName(k) + " has lifetime " + nameOf(*lifetime) + " instead of " + nameOf(old),
             [k, lifetime](Model& m) { setLifetime(m, k, *lifetime); });
    }
}

/// Appends a copy of an operation that writes one of its outputs a second time (its other
/// outputs go to fresh temporaries).
void mutateOperandAddWriter(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        const Operation& op = model.main.operations[i];
        for (size_t j = 0; j < op.outputs.size(); ++j) {
            emit(model, sink,
                 operationName(model, i) + " copy appended writing operand " +
                     std::to_string(op.outputs[j]),
                 [i, j](Model& m) {
                     Operation copy = m.main.operations[i];
                     for (size_t o = 0; o < copy.outputs.size(); ++o) {
                         if (o != j)
                             copy.outputs[o] = duplicateAsTemporary(m.main, copy.outputs[o]);
                     }
                     m.main.operations.push_back(copy);
                 });
        }
    }
}

void mutateOperationOperandType(const Model& model, const MutationSink& sink) {
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        for (const TypeRules& rules : allTypeRules()) {
            if (skipOperandTypeSwitch(model.main, k, rules.type)) continue;
            const OperandType type = rules.type;
            const Reshape reshape = rules.reshape;
            emit(model, sink, operandName(k) + " switched to type " + nameOf(type),
                 [k, type, reshape](Model& m) {
                     switchOperandType(m.main.operands[k], type, reshape);
                 });
        }
    }
}

void mutateOperationType(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        for (int32_t value : kInvalidOperationTypes) {
            emit(model, sink,
                 operationName(model, i) + " set to type value " + std::to_string(value),
                 [i, value](Model& m) {
                     m.main.operations[i].type = static_cast<OperationType>(value);
                 });
        }
    }
}

void mutateOperationInputIndex(const Model& model, const MutationSink& sink) {
    const auto outOfRange = static_cast<uint32_t>(model.main.operands.size());
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        for (size_t j = 0; j < model.main.operations[i].inputs.size(); ++j) {
            emit(model, sink,
                 operationName(model, i) + " input " + std::to_string(j) + " set to " +
                     operandName(outOfRange),
                 [i, j, outOfRange](Model& m) { m.main.operations[i].inputs[j] = outOfRange; });
        }
    }
}

void mutateOperationOutputIndex(const Model& model, const MutationSink& sink) {
    const auto outOfRange = static_cast<uint32_t>(model.main.operands.size());
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        for (size_t j = 0; j < model.main.operations[i].outputs.size(); ++j) {
            emit(model, sink,
                 operationName(model, i) + " output " + std::to_string(j) + " set to " +
                     operandName(outOfRange),
                 [i, j, outOfRange](Model& m) { m.main.operations[i].outputs[j] = outOfRange; });
        }
    }
}

/// Redirects an output that other operations read to a fresh temporary, so its readers read an
/// operand nobody writes.
void mutateOperationRemoveWrite(const Model& model, const MutationSink& sink) {
    const auto consumers = consumerCounts(model.main);
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        const Operation& op = model.main.operations[i];
        for (size_t j = 0; j < op.outputs.size(); ++j) {
            if (consumers[op.outputs[j]] == 0) continue;
            emit(model, sink,
                 operationName(model, i) + " no longer writes operand " +
                     std::to_string(op.outputs[j]),
                 [i, j](Model& m) {
                     uint32_t& output = m.main.operations[i].outputs[j];
                     output = duplicateAsTemporary(m.main, output);
                 });
        }
    }
}

void mutateRemoveOperand(const Model& model, const MutationSink& sink) {
    const auto consumers = consumerCounts(model.main);
    for (uint32_t k = 0; k < model.main.operands.size(); ++k) {
        if (skipOperandRemoval(model.main, k, consumers)) continue;
        emit(model, sink, operandName(k) + " removed", [k](Model& m) { removeOperand(m.main, k); });
    }
}

void mutateRemoveOperation(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        emit(model, sink, operationName(model, i) + " removed",
             [i](Model& m) { m.main.operations.erase(m.main.operations.begin() + i); });
    }
}

void mutateRemoveOperationInput(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        const Operation& op = model.main.operations[i];
        for (size_t j = 0; j < op.inputs.size(); ++j) {
            if (skipInputRemoval(op, j)) continue;
            emit(model, sink, operationName(model, i) + " input " + std::to_string(j) + " removed",
                 [i, j](Model& m) {
                     auto& inputs = m.main.operations[i].inputs;
                     inputs.erase(inputs.begin() + j);
                 });
        }
    }
}

void mutateRemoveOperationOutput(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        for (size_t j = 0; j < model.main.operations[i].outputs.size(); ++j) {
            emit(model, sink, operationName(model, i) + " output " + std::to_string(j) + " removed",
                 [i, j](Model& m) {
                     auto& outputs = m.main.operations[i].outputs;
                     outputs.erase(outputs.begin() + j);
                 });
        }
    }
}

/// Gives an operation an extra INT32 model input.
void mutateAddOperationInput(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        if (skipInputAddition(model.main.operations[i])) continue;
        emit(model, sink, operationName(model, i) + " given an extra INT32 input", [i](Model& m) {
            const uint32_t k = addInt32Operand(m.main, OperandLifeTime::SUBGRAPH_INPUT);
            m.main.operations[i].inputs.push_back(k);
            m.main.inputIndexes.push_back(k);
        });
    }
}

/// Gives an operation an extra INT32 model output.
void mutateAddOperationOutput(const Model& model, const MutationSink& sink) {
    for (size_t i = 0; i < model.main.operations.size(); ++i) {
        emit(model, sink, operationName(model, i) + " given an extra INT32 output", [i](Model& m) {
            const uint32_t k = addInt32Operand(m.main, OperandLifeTime::SUBGRAPH_OUTPUT);
            m.main.operations[i].outputs.push_back(k);
            m.main.outputIndexes.push_back(k);
        });
    }
}

void mutateExecutionPreference(const Model& model, const MutationSink& sink) {
    for (int32_t value : kInvalidPreferences) {
        ModelMutation mutation{"execution preference " + std::to_string(value), model};
        mutation.preference = static_cast<ExecutionPreference>(value);
        sink(mutation);
    }
}

void mutatePriority(const Model& model, const MutationSink& sink) {
    for (int32_t value : kInvalidPriorities) {
        ModelMutation mutation{"priority " + std::to_string(value), model};
        mutation.priority = static_cast<Priority>(value);
        sink(mutation);
    }
}

}  // namespace

const std::vector<MutationFamily>& allMutationFamilies() {
    static const std::vector<MutationFamily> kFamilies = {
        {"execution order", &mutateExecutionOrder},
        {"operand type", &mutateOperandType},
        {"operand rank", &mutateOperandRank},
        {"operand scale", &mutateOperandScale},
        {"operand zero point", &mutateOperandZeroPoint},
        {"operand lifetime", &mutateOperandLifetime},
        {"operand input/output", &mutateOperandInputOutput},
        {"operand add writer", &mutateOperandAddWriter},
        {"operation operand type", &mutateOperationOperandType},
        {"operation type", &mutateOperationType},
        {"operation input index", &mutateOperationInputIndex},
        {"operation output index", &mutateOperationOutputIndex},
        {"operation remove write", &mutateOperationRemoveWrite},
        {"remove operand", &mutateRemoveOperand},
        {"remove operation", &mutateRemoveOperation},
        {"remove operation input", &mutateRemoveOperationInput},
        {"remove operation output", &mutateRemoveOperationOutput},
        {"add operation input", &mutateAddOperationInput},
        {"add operation output", &mutateAddOperationOutput},
        {"execution preference", &mutateExecutionPreference},
        {"priority", &mutatePriority},
    };
    return kFamilies;
}

}  // namespace nncosim
