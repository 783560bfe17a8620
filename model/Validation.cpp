#include "model/Validation.h"

#include <algorithm>
#include <functional>
#include <set>

#include "model/OperationValidation.h"

namespace nncosim {
namespace {

bool isNullPointer(const DataLocation& loc) {
    return std::visit([](auto* p) { return p == nullptr; }, loc.pointer);
}

bool isConstantLifetime(OperandLifeTime lt) {
    return lt == OperandLifeTime::CONSTANT_COPY || lt == OperandLifeTime::CONSTANT_REFERENCE ||
           lt == OperandLifeTime::POINTER;
}

/// Validation state of one model: sizes of its memories and the extension prefixes it declares.
class ModelValidator {
  public:
    explicit ModelValidator(const Model& model) : mModel(model) {
        for (const auto& pool : model.pools) mPoolSizes.push_back(pool ? pool->size() : 0);
        for (const auto& e : model.extensionNameToPrefix) mPrefixes.insert(e.prefix);
    }

    Result<FeatureLevel> run() {
        NN_RETURN_IF_ERROR(validatePools());
        NN_RETURN_IF_ERROR(validateExtensionPrefixes());
        NN_RETURN_IF_ERROR(checkNoReferenceCycles());
        for (size_t i = 0; i < mModel.referenced.size(); ++i)
            NN_RETURN_IF_ERROR(
                validateSubgraph(mModel.referenced[i], "referenced subgraph " + std::to_string(i)));
        NN_RETURN_IF_ERROR(validateSubgraph(mModel.main, "main graph"));
        if (!mModel.referenced.empty()) require(FeatureLevel::kV1_3);
        return mLevel;
    }

  private:
    void require(FeatureLevel level) { mLevel = std::max(mLevel, level); }

    Status validatePools() const {
        for (size_t i = 0; i < mModel.pools.size(); ++i) {
            if (!mModel.pools[i]) return invalidArgument("model pool ", i, " is null");
        }
        return okStatus();
    }

    Status validateExtensionPrefixes() {
        std::set<std::string> names;
        std::set<uint16_t> prefixes;
        for (const auto& e : mModel.extensionNameToPrefix) {
            if (!isValidExtensionName(e.name))
                return invalidArgument("extensionNameToPrefix: invalid extension name \"", e.name,
                                       "\" (lower-case reverse domain with at least one '.')");
            if (!names.insert(e.name).second)
                return invalidArgument("extensionNameToPrefix: duplicate name \"", e.name, "\"");
            if (!prefixes.insert(e.prefix).second)
                return invalidArgument("extensionNameToPrefix: duplicate prefix ", e.prefix);
            if (e.prefix == 0)
                return invalidArgument(
                    "extensionNameToPrefix: prefix 0 is reserved for NNAPI types");
            // The prefix is the high half of a signed 32-bit type, whose sign bit must be 0.
            if (e.prefix >= 0x8000)
                return invalidArgument("extensionNameToPrefix: prefix ", e.prefix, " of \"", e.name,
                                       "\" is above 32767");
        }
        if (!names.empty()) require(FeatureLevel::kV1_2);
        return okStatus();
    }

    Status checkNoReferenceCycles() const {
        const size_t n = mModel.referenced.size();
        std::vector<int> state(n, 0);  // 0 unvisited, 1 on the current path, 2 verified
        std::function<Status(size_t)> visit = [&](size_t index) -> Status {
            if (state[index] == 2) return okStatus();
            if (state[index] == 1)
                return invalidArgument("referenced subgraph ", index,
                                       " is part of a circular subgraph reference");
            state[index] = 1;
            for (const Operand& operand : mModel.referenced[index].operands) {
                if (operand.lifetime != OperandLifeTime::SUBGRAPH) continue;
                if (operand.location.offset >= n)
                    return invalidArgument("referenced subgraph ", index, " refers to subgraph ",
                                           operand.location.offset, " of ", n);
                NN_RETURN_IF_ERROR(visit(operand.location.offset));
            }
            state[index] = 2;
            return okStatus();
        };
        for (size_t i = 0; i < n; ++i) NN_RETURN_IF_ERROR(visit(i));
        return okStatus();
    }

    Status validateOperandType(const Operand& operand, const std::string& where) {
        const auto raw = static_cast<int32_t>(operand.type);
        if (isExtension(raw)) {
            if (mPrefixes.count(extensionPrefix(raw)) == 0)
                return invalidArgument(where, ": extension type ", raw, " uses prefix ",
                                       extensionPrefix(raw),
                                       " that extensionNameToPrefix does not declare");
            require(FeatureLevel::kV1_2);
            return okStatus();
        }
        if (!isValidOperandType(operand.type))
            return invalidArgument(where, ": invalid operand type ", raw);
        switch (operand.type) {
            case OperandType::BOOL:
            case OperandType::TENSOR_QUANT16_SYMM:
            case OperandType::TENSOR_FLOAT16:
            case OperandType::TENSOR_BOOL8:
            case OperandType::FLOAT16:
            case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
            case OperandType::TENSOR_QUANT16_ASYMM:
            case OperandType::TENSOR_QUANT8_SYMM:
                require(FeatureLevel::kV1_2);
                break;
            case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            case OperandType::SUBGRAPH:
                require(FeatureLevel::kV1_3);
                break;
            default:
                break;
        }
        return okStatus();
    }

    static Status validateDimensions(const Operand& operand, const std::string& where) {
        if (isScalarType(operand.type)) {
            if (!operand.dimensions.empty())
                return invalidArgument(where, ": scalar ", nameOf(operand.type),
                                       " has dimensions of rank ", operand.dimensions.size());
            return okStatus();
        }
        if (isConstantLifetime(operand.lifetime) && !isExtension(operand.type)) {
            if (operand.dimensions.empty())
                return invalidArgument(where, ": constant tensor must have a known rank");
            if (hasUnknownDimensions(operand))
                return invalidArgument(where,
                                       ": constant tensor must be fully specified, dimensions ",
                                       toString(operand.dimensions));
        }
        // Every length NNAPI carries is 32 bits (DataLocation, Memory); unknown dimensions count
        // as 1, the least any execution could give them.
        if (!isExtension(operand.type) &&
            knownByteSize(operand.type, operand.dimensions) > kMaxOperandBytes)
            return invalidArgument(where, ": ", nameOf(operand.type), " of dimensions ",
                                   toString(operand.dimensions), " needs ",
                                   byteSizeText(knownByteSize(operand.type, operand.dimensions)),
                                   ", more than 4 GiB");
        return okStatus();
    }

    static Status validateScaleAndZeroPoint(const Operand& operand, const std::string& where) {
        const float scale = operand.scale;
        const int32_t zp = operand.zeroPoint;
        const auto type = operand.type;
        auto zeroPointIn = [&](int32_t lo, int32_t hi) -> Status {
            if (zp < lo || zp > hi)
                return invalidArgument(where, ": ", nameOf(type), " zero point ", zp, " outside [",
                                       lo, ", ", hi, "]");
            return okStatus();
        };
        switch (type) {
            case OperandType::TENSOR_INT32:
                if (!(scale >= 0.0f))
                    return invalidArgument(where, ": TENSOR_INT32 with negative scale ", scale);
                return zp == 0
                           ? okStatus()
                           : invalidArgument(where, ": TENSOR_INT32 with non-zero zero point ", zp);
            case OperandType::TENSOR_QUANT8_ASYMM:
            case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            case OperandType::TENSOR_QUANT8_SYMM:
            case OperandType::TENSOR_QUANT16_ASYMM:
            case OperandType::TENSOR_QUANT16_SYMM:
                if (!(scale > 0.0f))
                    return invalidArgument(where, ": ", nameOf(type),
                                           " needs a positive scale, got ", scale);
                if (type == OperandType::TENSOR_QUANT8_ASYMM) return zeroPointIn(0, 255);
                if (type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) return zeroPointIn(-128, 127);
                if (type == OperandType::TENSOR_QUANT16_ASYMM) return zeroPointIn(0, 65535);
                return zeroPointIn(0, 0);
            case OperandType::OEM:
            case OperandType::TENSOR_OEM_BYTE:
                return okStatus();  // vendor-defined
            default:  // floats, bools, scalars, per-channel, subgraphs, extension types
                if (scale != 0.0f)
                    return invalidArgument(where, ": ", nameOf(type), " must have scale 0, got ",
                                           scale);
                return zeroPointIn(0, 0);
        }
    }

    static Status validateExtraParams(const Operand& operand, const std::string& where) {
        const bool none = std::holds_alternative<std::monostate>(operand.extraParams);
        if (isExtension(operand.type)) {
            if (std::holds_alternative<SymmPerChannelQuantParams>(operand.extraParams))
                return invalidArgument(where,
                                       ": extension operand must not have per-channel params");
            return okStatus();
        }
        if (operand.type == OperandType::OEM || operand.type == OperandType::TENSOR_OEM_BYTE)
            return okStatus();
        if (operand.type != OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
            if (!none)
                return invalidArgument(where, ": ", nameOf(operand.type),
                                       " must not have extra params");
            return okStatus();
        }
        const auto* channel = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams);
        if (!channel)
            return invalidArgument(where,
                                   ": TENSOR_QUANT8_SYMM_PER_CHANNEL without per-channel params");
        const size_t rank = operand.dimensions.size();
        if (channel->channelDim >= rank)
            return invalidArgument(where, ": per-channel channelDim ", channel->channelDim,
                                   " outside rank ", rank);
        const uint32_t channels = operand.dimensions[channel->channelDim];
        if (channels == 0)
            return invalidArgument(where, ": per-channel dimension ", channel->channelDim,
                                   " must be known");
        if (channel->scales.size() != channels)
            return invalidArgument(where, ": per-channel scales count ", channel->scales.size(),
                                   " differs from dimension ", channel->channelDim, " (", channels,
                                   ")");
        for (size_t i = 0; i < channel->scales.size(); ++i) {
            if (!(channel->scales[i] > 0.0f))
                return invalidArgument(where, ": per-channel scale[", i, "] = ", channel->scales[i],
                                       " is not positive");
        }
        return okStatus();
    }

    Status validateLocation(const Operand& operand, const std::string& where) const {
        const DataLocation& loc = operand.location;
        // Only a CONSTANT_REFERENCE may carry end padding (to align the next region of its pool).
        if (loc.padding != 0 && operand.lifetime != OperandLifeTime::CONSTANT_REFERENCE)
            return invalidArgument(where, ": data location padding must be 0 for ",
                                   nameOf(operand.lifetime));
        const uint64_t end = uint64_t{loc.offset} + loc.length;
        switch (operand.lifetime) {
            case OperandLifeTime::CONSTANT_COPY:
                if (!isNullPointer(loc) || loc.poolIndex != 0)
                    return invalidArgument(where,
                                           ": CONSTANT_COPY must have no pointer and pool index 0");
                if (end > mModel.operandValues.size())
                    return invalidArgument(where, ": CONSTANT_COPY location [", loc.offset, ", ",
                                           end, ") outside operandValues of ",
                                           mModel.operandValues.size(), " bytes");
                break;
            case OperandLifeTime::CONSTANT_REFERENCE:
                if (loc.poolIndex >= mPoolSizes.size())
                    return invalidArgument(where, ": CONSTANT_REFERENCE pool index ", loc.poolIndex,
                                           " of ", mPoolSizes.size(), " pools");
                if (end + loc.padding > mPoolSizes[loc.poolIndex])
                    return invalidArgument(where, ": CONSTANT_REFERENCE location [", loc.offset,
                                           ", ", end, ") with ", loc.padding,
                                           " bytes of padding outside pool ", loc.poolIndex, " of ",
                                           mPoolSizes[loc.poolIndex], " bytes");
                break;
            case OperandLifeTime::TEMPORARY_VARIABLE:
            case OperandLifeTime::SUBGRAPH_INPUT:
            case OperandLifeTime::SUBGRAPH_OUTPUT:
            case OperandLifeTime::NO_VALUE:
                if (!isNullPointer(loc) || loc.poolIndex != 0 || loc.offset != 0 || loc.length != 0)
                    return invalidArgument(where, ": ", nameOf(operand.lifetime),
                                           " must have an empty location");
                break;
            case OperandLifeTime::SUBGRAPH:
                if (!isNullPointer(loc) || loc.poolIndex != 0 || loc.length != 0)
                    return invalidArgument(where,
                                           ": SUBGRAPH location must hold only the subgraph index");
                if (loc.offset >= mModel.referenced.size())
                    return invalidArgument(where, ": subgraph index ", loc.offset, " of ",
                                           mModel.referenced.size(), " referenced subgraphs");
                break;
            case OperandLifeTime::POINTER:
                if (isNullPointer(loc) || loc.poolIndex != 0 || loc.offset != 0)
                    return invalidArgument(
                        where, ": POINTER must have a non-null pointer and no pool/offset");
                break;
        }
        // Constants must hold exactly their bytes.
        if (isConstantLifetime(operand.lifetime) && !isExtension(operand.type) &&
            operand.type != OperandType::OEM && operand.type != OperandType::TENSOR_OEM_BYTE) {
            const uint64_t expected = byteSize(operand.type, operand.dimensions);
            if (loc.length != expected)
                return invalidArgument(where, ": constant of type ", nameOf(operand.type),
                                       " and shape ", toString(operand.dimensions), " needs ",
                                       expected, " bytes, location has ", loc.length);
        }
        return okStatus();
    }

    Status validateOperand(const Operand& operand, const std::string& where) {
        NN_RETURN_IF_ERROR(validateOperandType(operand, where));
        const auto lt = static_cast<int32_t>(operand.lifetime);
        if (lt < 0 || lt > static_cast<int32_t>(OperandLifeTime::POINTER))
            return invalidArgument(where, ": invalid lifetime ", lt);
        if ((operand.type == OperandType::SUBGRAPH) !=
            (operand.lifetime == OperandLifeTime::SUBGRAPH))
            return invalidArgument(where, ": type ", nameOf(operand.type), " cannot have lifetime ",
                                   nameOf(operand.lifetime),
                                   " (SUBGRAPH type and lifetime go together)");
        NN_RETURN_IF_ERROR(validateDimensions(operand, where));
        NN_RETURN_IF_ERROR(validateScaleAndZeroPoint(operand, where));
        NN_RETURN_IF_ERROR(validateExtraParams(operand, where));
        NN_RETURN_IF_ERROR(validateLocation(operand, where));
        if (isTensorType(operand.type) && operand.dimensions.empty()) require(FeatureLevel::kV1_2);
        return okStatus();
    }

    static Status validateInputOutputList(const Subgraph& subgraph,
                                          const std::vector<uint32_t>& indexes,
                                          OperandLifeTime lifetime, const std::string& where) {
        const char* what = lifetime == OperandLifeTime::SUBGRAPH_INPUT ? "input" : "output";
        std::vector<bool> listed(subgraph.operands.size(), false);
        for (size_t i = 0; i < indexes.size(); ++i) {
            const uint32_t k = indexes[i];
            if (k >= subgraph.operands.size())
                return invalidArgument(where, ": ", what, " ", i, " refers to operand ", k, " of ",
                                       subgraph.operands.size());
            if (subgraph.operands[k].lifetime != lifetime)
                return invalidArgument(where, ": ", what, " ", i, " (operand ", k,
                                       ") has lifetime ", nameOf(subgraph.operands[k].lifetime),
                                       ", expected ", nameOf(lifetime));
            if (listed[k])
                return invalidArgument(where, ": operand ", k, " is listed as ", what, " twice");
            listed[k] = true;
        }
        for (size_t k = 0; k < subgraph.operands.size(); ++k) {
            if (subgraph.operands[k].lifetime == lifetime && !listed[k])
                return invalidArgument(where, ": operand ", k, " has lifetime ", nameOf(lifetime),
                                       " but is not in the subgraph's ", what, " list");
        }
        return okStatus();
    }

    Status validateOperations(const Subgraph& subgraph, const std::string& where) {
        const size_t operandCount = subgraph.operands.size();
        for (size_t i = 0; i < subgraph.operations.size(); ++i) {
            const Operation& op = subgraph.operations[i];
            for (const auto* list : {&op.inputs, &op.outputs}) {
                for (uint32_t k : *list) {
                    if (k >= operandCount)
                        return invalidArgument(where, ": operation ", i, " (", nameOf(op.type),
                                               ") refers to operand ", k, " of ", operandCount);
                }
            }
            const auto raw = static_cast<int32_t>(op.type);
            if (isExtension(raw)) {
                if (mPrefixes.count(extensionPrefix(raw)) == 0)
                    return invalidArgument(where, ": operation ", i, " has extension type ", raw,
                                           " whose prefix ", extensionPrefix(raw),
                                           " is not declared");
                require(FeatureLevel::kV1_2);
                continue;  // the driver that owns the extension validates it
            }
            OperationValidator validator = findOperationValidator(op.type);
            if (!validator)
                return invalidArgument(where, ": operation ", i, " has invalid type ", raw);
            OperationContext ctx(mModel, subgraph, op, static_cast<uint32_t>(i));
            Status st = validator(ctx);
            if (!st.ok()) return invalidArgument(where, ": ", st.message);
            require(ctx.featureLevel());
        }
        return okStatus();
    }

    static Status validateExecutionOrder(const Subgraph& subgraph, const std::string& where) {
        std::vector<bool> known(subgraph.operands.size());
        for (size_t k = 0; k < known.size(); ++k) {
            const auto lt = subgraph.operands[k].lifetime;
            known[k] =
                lt != OperandLifeTime::TEMPORARY_VARIABLE && lt != OperandLifeTime::SUBGRAPH_OUTPUT;
        }
        for (size_t i = 0; i < subgraph.operations.size(); ++i) {
            const Operation& op = subgraph.operations[i];
            for (size_t j = 0; j < op.inputs.size(); ++j) {
                if (!known[op.inputs[j]])
                    return invalidArgument(where, ": operation ", i, " input ", j, " (operand ",
                                           op.inputs[j], ") is read before it is written");
            }
            for (size_t j = 0; j < op.outputs.size(); ++j) {
                if (known[op.outputs[j]])
                    return invalidArgument(where, ": operation ", i, " output ", j, " (operand ",
                                           op.outputs[j],
                                           ") has already been written (or is not writable)");
                known[op.outputs[j]] = true;
            }
        }
        for (size_t k = 0; k < known.size(); ++k) {
            if (!known[k]) return invalidArgument(where, ": operand ", k, " is never written");
        }
        return okStatus();
    }

    Status validateSubgraph(const Subgraph& subgraph, const std::string& where) {
        if (subgraph.operands.empty()) return invalidArgument(where, " has no operands");
        if (subgraph.operations.empty()) return invalidArgument(where, " has no operations");
        for (size_t k = 0; k < subgraph.operands.size(); ++k)
            NN_RETURN_IF_ERROR(
                validateOperand(subgraph.operands[k], where + ": operand " + std::to_string(k)));
        // Structural checks first, so operation validators may rely on them.
        NN_RETURN_IF_ERROR(validateInputOutputList(subgraph, subgraph.inputIndexes,
                                                   OperandLifeTime::SUBGRAPH_INPUT, where));
        NN_RETURN_IF_ERROR(validateInputOutputList(subgraph, subgraph.outputIndexes,
                                                   OperandLifeTime::SUBGRAPH_OUTPUT, where));
        NN_RETURN_IF_ERROR(validateOperations(subgraph, where));
        return validateExecutionOrder(subgraph, where);
    }

    const Model& mModel;
    std::vector<size_t> mPoolSizes;
    std::set<uint16_t> mPrefixes;
    FeatureLevel mLevel = FeatureLevel::kV1_0;
};

Status validateArgumentLocation(const Request::Argument& arg,
                                const std::vector<uint64_t>& poolSizes, bool isOutput,
                                const std::string& where) {
    const DataLocation& loc = arg.location;
    switch (arg.lifetime) {
        case Request::Argument::LifeTime::POOL: {
            if (!isNullPointer(loc))
                return invalidArgument(where, ": POOL argument must not have a pointer");
            if (loc.poolIndex >= poolSizes.size())
                return invalidArgument(where, ": pool index ", loc.poolIndex, " of ",
                                       poolSizes.size(), " pools");
            const uint64_t end = uint64_t{loc.offset} + loc.length + loc.padding;
            const uint64_t size = poolSizes[loc.poolIndex];
            if (size > 0 && end > size)
                return invalidArgument(where, ": location [", loc.offset, ", ", end,
                                       ") outside pool ", loc.poolIndex, " of ", size, " bytes");
            if (size > 0 && loc.length == 0)
                return invalidArgument(
                    where, ": POOL argument of a shared memory must have a positive length");
            return okStatus();
        }
        case Request::Argument::LifeTime::NO_VALUE:
            if (!isNullPointer(loc) || loc.poolIndex || loc.offset || loc.length || loc.padding ||
                !arg.dimensions.empty())
                return invalidArgument(
                    where, ": NO_VALUE argument must have an empty location and no dimensions");
            return okStatus();
        case Request::Argument::LifeTime::POINTER:
            if (isNullPointer(loc))
                return invalidArgument(where, ": POINTER argument with a null pointer");
            if (loc.poolIndex || loc.offset)
                return invalidArgument(where, ": POINTER argument with a pool index or offset");
            if (loc.length == 0)
                return invalidArgument(where, ": POINTER argument with zero length");
            if (isOutput && !std::holds_alternative<void*>(loc.pointer))
                return invalidArgument(where, ": output POINTER argument must be writable");
            return okStatus();
    }
    return invalidArgument(where, ": invalid argument lifetime ",
                           static_cast<int32_t>(arg.lifetime));
}

Status validateArgumentsForModel(const std::vector<Request::Argument>& args,
                                 const std::vector<uint32_t>& indexes,
                                 const std::vector<Operand>& operands,
                                 const std::vector<uint64_t>& poolSizes, bool isOutput,
                                 bool allowUnspecifiedOutput) {
    const char* what = isOutput ? "output" : "input";
    if (args.size() != indexes.size())
        return invalidArgument("request has ", args.size(), " ", what, "s but the model has ",
                               indexes.size());
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string where = std::string("request ") + what + " " + std::to_string(i);
        const Request::Argument& arg = args[i];
        NN_RETURN_IF_ERROR(validateArgumentLocation(arg, poolSizes, isOutput, where));
        if (arg.lifetime == Request::Argument::LifeTime::NO_VALUE) continue;
        const Operand& operand = operands[indexes[i]];
        if (isExtension(operand.type)) continue;  // sizes of extension types are the driver's
        const auto modelRank = operand.dimensions.size();
        const auto requestRank = arg.dimensions.size();
        const bool unspecifiedOk = isOutput && allowUnspecifiedOutput;
        if (requestRank == 0) {
            if (isTensorType(operand.type) && modelRank == 0 && !unspecifiedOk)
                return invalidArgument(
                    where, ": the model leaves the rank unknown and the request does not give it");
            for (size_t d = 0; d < modelRank; ++d) {
                if (operand.dimensions[d] == 0 && !unspecifiedOk)
                    return invalidArgument(where, ": model dimension ", d,
                                           " is unknown and the request does not give it");
            }
        } else {
            if (isScalarType(operand.type))
                return invalidArgument(where, ": scalar operand given dimensions ",
                                       toString(arg.dimensions));
            if (modelRank != 0 && requestRank != modelRank)
                return invalidArgument(where, ": rank ", requestRank,
                                       " differs from the model's rank ", modelRank);
            for (size_t d = 0; d < requestRank; ++d) {
                if (modelRank != 0 && operand.dimensions[d] != 0 &&
                    arg.dimensions[d] != operand.dimensions[d])
                    return invalidArgument(where, ": dimension ", d, " is ", arg.dimensions[d],
                                           " but the model says ", operand.dimensions[d]);
                if (arg.dimensions[d] == 0 && !unspecifiedOk)
                    return invalidArgument(where, ": dimension ", d, " is 0 (unknown)");
            }
        }
        if (arg.location.length != 0) {
            auto dims = combineDimensions(operand.dimensions, arg.dimensions);
            if (!dims) return invalidArgument(where, ": ", dims.status().message);
            const uint64_t expected = byteSize(operand.type, *dims);
            const bool known = !dims->empty() || isScalarType(operand.type);
            // An output buffer too short for its (known) shape is valid: the execution reports
            // OUTPUT_INSUFFICIENT_SIZE with every output's shape (IPreparedModel 1.3). Longer
            // than the shape needs is invalid: the runtime passes the raw size as the length
            // and any extra space as padding.
            const bool shortOutput = isOutput && arg.location.length < expected;
            if (known && expected != 0 && arg.location.length != expected && !shortOutput)
                return invalidArgument(where, ": length ", arg.location.length, " but type ",
                                       nameOf(operand.type), " with shape ", toString(*dims),
                                       " needs ", expected, " bytes");
        }
    }
    return okStatus();
}

}  // namespace

Result<FeatureLevel> validateModel(const Model& model) {
    return ModelValidator(model).run();
}

Status validateRequest(const Request& request, const Model& model, bool allowUnspecifiedOutput) {
    std::vector<uint64_t> poolSizes;
    for (size_t i = 0; i < request.pools.size(); ++i) {
        const auto& pool = request.pools[i];
        if (const auto* token = std::get_if<MemoryDomainToken>(&pool)) {
            if (*token == 0)
                return invalidArgument("request pool ", i, " has the invalid buffer token 0");
            poolSizes.push_back(0);  // a driver-managed buffer: its size is the driver's to check
        } else {
            const auto& memory = std::get<SharedMemory>(pool);
            if (!memory) return invalidArgument("request pool ", i, " is a null memory");
            poolSizes.push_back(memory->size());
        }
    }
    NN_RETURN_IF_ERROR(validateArgumentsForModel(request.inputs, model.main.inputIndexes,
                                                 model.main.operands, poolSizes, /*isOutput=*/false,
                                                 allowUnspecifiedOutput));
    return validateArgumentsForModel(request.outputs, model.main.outputIndexes, model.main.operands,
                                     poolSizes,
                                     /*isOutput=*/true, allowUnspecifiedOutput);
}

Status validateExecutionPreference(ExecutionPreference p) {
    switch (p) {
        case ExecutionPreference::LOW_POWER:
        case ExecutionPreference::FAST_SINGLE_ANSWER:
        case ExecutionPreference::SUSTAINED_SPEED:
            return okStatus();
    }
    return invalidArgument("invalid ExecutionPreference ", static_cast<int32_t>(p));
}

Status validatePriority(Priority p) {
    switch (p) {
        case Priority::LOW:
        case Priority::MEDIUM:
        case Priority::HIGH:
            return okStatus();
    }
    return invalidArgument("invalid Priority ", static_cast<int32_t>(p));
}

Status validateMeasureTiming(MeasureTiming m) {
    if (m == MeasureTiming::NO || m == MeasureTiming::YES) return okStatus();
    return invalidArgument("invalid MeasureTiming ", static_cast<int32_t>(m));
}

Status validateDeadline(const OptionalTimePoint& deadline) {
    if (deadline && deadline->time_since_epoch().count() < 0)
        return invalidArgument("deadline lies before the clock's epoch");
    return okStatus();
}

Status validateDuration(const OptionalDuration& duration) {
    if (duration && duration->count() < 0)
        return invalidArgument("negative duration ", duration->count(), " ns");
    return okStatus();
}

Status validateLoopTimeout(const OptionalDuration& duration) {
    NN_RETURN_IF_ERROR(validateDuration(duration));
    if (duration && *duration > kMaxLoopTimeoutDuration)
        return invalidArgument("loop timeout ", duration->count(), " ns exceeds the maximum of ",
                               kMaxLoopTimeoutDuration.count(), " ns");
    return okStatus();
}

bool isValidExtensionName(std::string_view name) {
    const bool symbolsOk = std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
    });
    return symbolsOk && name.find('.') != std::string_view::npos;
}

Status validateExtension(const Extension& extension) {
    if (!isValidExtensionName(extension.name))
        return invalidArgument("extension name \"", extension.name,
                               "\" is not a lower-case reverse domain");
    std::set<uint16_t> types;
    for (const auto& info : extension.operandTypes) {
        if (!types.insert(info.type).second)
            return invalidArgument("extension ", extension.name, " declares operand type ",
                                   info.type, " twice");
        if (info.byteSize == 0)
            return invalidArgument("extension ", extension.name, " operand type ", info.type,
                                   " has byte size 0");
    }
    return okStatus();
}

Status validateBufferRole(const BufferRole& role) {
    if (!(role.probability > 0.0f && role.probability <= 1.0f))
        return invalidArgument("buffer role probability ", role.probability, " outside (0, 1]");
    return okStatus();
}

Result<std::vector<uint32_t>> combineDimensions(const std::vector<uint32_t>& a,
                                                const std::vector<uint32_t>& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    if (a.size() != b.size())
        return invalidArgument("incompatible ranks: ", toString(a), " vs ", toString(b));
    std::vector<uint32_t> out(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != 0 && b[i] != 0 && a[i] != b[i])
            return invalidArgument("incompatible dimension ", i, ": ", toString(a), " vs ",
                                   toString(b));
        out[i] = a[i] != 0 ? a[i] : b[i];
    }
    return out;
}

}  // namespace nncosim
