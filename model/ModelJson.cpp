#include "model/ModelJson.h"

#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/OutputFile.h"

namespace nncosim {
namespace {

// Keys in the order the CTS files use, so written files read like the shipped ones.
using Json = nlohmann::ordered_json;

struct FormatError {
    std::string message;
};

/// A float as the JSON value that reads back to the same bits through a double parse (which
/// is how nlohmann, and so readCtsFile, parses numbers).
Json floatValue(float f) {
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
    char text[32];
    const auto end = std::to_chars(text, text + sizeof(text), f).ptr;
    double d = 0.0;
    std::from_chars(text, end, d);
    // The shortest float digits parsed as a double can, rarely, round to the neighbouring
    // float (double rounding); the exact double then is the safe choice.
    if (static_cast<float>(d) != f) d = f;
    return d;
}

template <typename T>
T load(const uint8_t* bytes, size_t index) {
    T value;
    std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
    return value;
}

/// The elements of `length` bytes of `type` as a JSON list (the inverse of the reader's encode).
Json decode(OperandType type, const uint8_t* bytes, size_t length) {
    const uint32_t size = elementSize(type);
    if (size == 0) throw FormatError{"cannot write data of type " + nameOf(type)};
    if (length % size != 0) {
        throw FormatError{std::to_string(length) + " bytes are not whole elements of " +
                          nameOf(type)};
    }
    const size_t count = length / size;
    Json out = Json::array();
    out.get_ref<Json::array_t&>().reserve(count);
    for (size_t i = 0; i < count; ++i) {
        switch (type) {
            case OperandType::FLOAT32:
            case OperandType::TENSOR_FLOAT32:
                out.push_back(floatValue(load<float>(bytes, i)));
                break;
            case OperandType::FLOAT16:
            case OperandType::TENSOR_FLOAT16:
                out.push_back(floatValue(static_cast<float>(load<Eigen::half>(bytes, i))));
                break;
            case OperandType::INT32:
            case OperandType::TENSOR_INT32:
                out.push_back(load<int32_t>(bytes, i));
                break;
            case OperandType::UINT32:
                out.push_back(load<uint32_t>(bytes, i));
                break;
            case OperandType::BOOL:
            case OperandType::TENSOR_BOOL8: {
                // true/false as the format spells booleans; other byte values stay numbers.
                const uint8_t v = bytes[i];
                if (v <= 1) {
                    out.push_back(v == 1);
                } else {
                    out.push_back(v);
                }
                break;
            }
            case OperandType::TENSOR_QUANT8_ASYMM:
            case OperandType::TENSOR_OEM_BYTE:
                out.push_back(bytes[i]);
                break;
            case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            case OperandType::TENSOR_QUANT8_SYMM:
            case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
                out.push_back(load<int8_t>(bytes, i));
                break;
            case OperandType::TENSOR_QUANT16_SYMM:
                out.push_back(load<int16_t>(bytes, i));
                break;
            case OperandType::TENSOR_QUANT16_ASYMM:
                out.push_back(load<uint16_t>(bytes, i));
                break;
            default:
                throw FormatError{"cannot write data of type " + nameOf(type)};
        }
    }
    return out;
}

/// Whether `dims` give a whole shape of `type` (no unknown rank, no unknown dimension).
bool isFullyKnown(OperandType type, const std::vector<uint32_t>& dims) {
    if (dims.empty()) return !isTensorType(type);
    return std::find(dims.begin(), dims.end(), 0u) == dims.end();
}

/// Whether known dimensions `a` may stand for the possibly unknown `b`.
bool isCompatible(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    if (b.empty()) return true;
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (b[i] != 0 && a[i] != b[i]) return false;
    }
    return true;
}

/// Data of a main-graph input or output, checked against its operand. The format has no shape
/// of its own for these values (readers take the operand's), so an input must have exactly its
/// operand's dimensions; an output may only fill in dimensions the operand leaves unknown.
Json ioData(const Operand& operand, const TensorData& data, bool isInput) {
    if (data.dimensions.empty() && data.bytes.empty()) return Json::array();
    const bool fits = isInput ? data.dimensions == operand.dimensions
                              : isCompatible(data.dimensions, operand.dimensions);
    if (!fits) {
        throw FormatError{std::string(isInput ? "input" : "output") + " dimensions " +
                          toString(data.dimensions) + " do not fit the operand's " +
                          toString(operand.dimensions)};
    }
    if (isFullyKnown(operand.type, data.dimensions) &&
        byteSize(operand.type, data.dimensions) != data.bytes.size()) {
        throw FormatError{std::to_string(data.bytes.size()) + " bytes for dimensions " +
                          toString(data.dimensions) + " of " + nameOf(operand.type)};
    }
    return decode(operand.type, data.bytes.data(), data.bytes.size());
}

class Writer {
  public:
    explicit Writer(const CtsTest& test) : mTest(test) {}

    Json model() {
        const Model& model = mTest.model;
        if (!model.extensionNameToPrefix.empty()) throw FormatError{"extensions cannot be written"};
        const auto& main = model.main;
        if (!mTest.inputs.empty() && mTest.inputs.size() != main.inputIndexes.size()) {
            throw FormatError{std::to_string(mTest.inputs.size()) + " inputs for " +
                              std::to_string(main.inputIndexes.size()) + " model inputs"};
        }
        if (!mTest.expectedOutputs.empty() &&
            mTest.expectedOutputs.size() != main.outputIndexes.size()) {
            throw FormatError{std::to_string(mTest.expectedOutputs.size()) +
                              " expected outputs for " + std::to_string(main.outputIndexes.size()) +
                              " model outputs"};
        }
        Json out;
        out["main"] = subgraph(main, /*isMain=*/true);
        out["referenced"] = Json::array();
        for (size_t i = 0; i < model.referenced.size(); ++i) {
            try {
                out["referenced"].push_back(subgraph(model.referenced[i], /*isMain=*/false));
            } catch (const FormatError& e) {
                throw FormatError{"referenced subgraph " + std::to_string(i) + ": " + e.message};
            }
        }
        out["isRelaxed"] = model.relaxComputationFloat32toFloat16;
        out["expectedMultinomialDistributionTolerance"] = floatValue(mTest.multinomialTolerance);
        out["expectFailure"] = mTest.expectFailure;
        out["minSupportedVersion"] = nameOf(mTest.minSupportedVersion);
        return out;
    }

  private:
    Json subgraph(const Subgraph& g, bool isMain) {
        std::vector<uint32_t> consumers(g.operands.size(), 0);
        Json operations = Json::array();
        for (const Operation& op : g.operations) {
            if (isExtension(op.type)) throw FormatError{"extension operations cannot be written"};
            for (uint32_t i : op.inputs) {
                if (i < consumers.size()) ++consumers[i];
            }
            operations.push_back(
                {{"type", nameOf(op.type)}, {"inputs", op.inputs}, {"outputs", op.outputs}});
        }
        // Which input or output of the test each main-graph operand carries.
        std::vector<const TensorData*> data(g.operands.size(), nullptr);
        std::vector<bool> isInput(g.operands.size(), false), ignored(g.operands.size(), false);
        if (isMain) {
            for (size_t k = 0; k < g.inputIndexes.size() && k < mTest.inputs.size(); ++k) {
                if (g.inputIndexes[k] < data.size()) {
                    data[g.inputIndexes[k]] = &mTest.inputs[k];
                    isInput[g.inputIndexes[k]] = true;
                }
            }
            for (size_t k = 0; k < g.outputIndexes.size(); ++k) {
                if (g.outputIndexes[k] >= data.size()) continue;
                if (k < mTest.expectedOutputs.size())
                    data[g.outputIndexes[k]] = &mTest.expectedOutputs[k];
                ignored[g.outputIndexes[k]] =
                    k < mTest.outputIgnored.size() && mTest.outputIgnored[k];
            }
        }
        Json operands = Json::array();
        for (size_t i = 0; i < g.operands.size(); ++i) {
            try {
                operands.push_back(
                    operand(g.operands[i], consumers[i], ignored[i], data[i], isInput[i]));
            } catch (const FormatError& e) {
                throw FormatError{"operand " + std::to_string(i) + ": " + e.message};
            }
        }
        Json out;
        out["operands"] = std::move(operands);
        out["operations"] = std::move(operations);
        out["inputIndexes"] = g.inputIndexes;
        out["outputIndexes"] = g.outputIndexes;
        return out;
    }

    Json operand(const Operand& o, uint32_t consumers, bool ignored, const TensorData* io,
                 bool isInput) {
        if (isExtension(o.type) || !isValidOperandType(o.type)) {
            throw FormatError{"extension operand types cannot be written"};
        }
        Json out;
        out["type"] = nameOf(o.type);
        out["dimensions"] = o.dimensions;
        out["numberOfConsumers"] = consumers;
        out["scale"] = floatValue(o.scale);
        out["zeroPoint"] = o.zeroPoint;
        out["lifetime"] = nameOf(o.lifetime);
        out["isIgnored"] = ignored;
        switch (o.lifetime) {
            case OperandLifeTime::CONSTANT_COPY:
            case OperandLifeTime::CONSTANT_REFERENCE: {
                const uint8_t* bytes = constantData(mTest.model, o);
                if (bytes == nullptr) throw FormatError{"constant outside its memory"};
                // Readers take a constant without data for an omitted operand.
                if (o.location.length == 0) throw FormatError{"constant without data"};
                out["data"] = decode(o.type, bytes, o.location.length);
                break;
            }
            case OperandLifeTime::SUBGRAPH:
                out["data"] = Json::array({o.location.offset});
                break;
            case OperandLifeTime::POINTER:
                throw FormatError{"POINTER lifetime cannot be written"};
            default:
                out["data"] = io ? ioData(o, *io, isInput) : Json::array();
                break;
        }
        if (const auto* channel = std::get_if<SymmPerChannelQuantParams>(&o.extraParams)) {
            Json scales = Json::array();
            for (float s : channel->scales) scales.push_back(floatValue(s));
            out["channelQuant"] = {{"scales", std::move(scales)},
                                   {"channelDim", channel->channelDim}};
        } else if (std::holds_alternative<std::vector<uint8_t>>(o.extraParams)) {
            throw FormatError{"extension parameters cannot be written"};
        }
        return out;
    }

    const CtsTest& mTest;
};

}  // namespace

Result<std::string> toCtsJson(const CtsTest& test, const std::string& spec) {
    const std::string specName = spec.empty() ? test.name : spec;
    Json doc;
    doc["spec"] = specName;
    doc["version"] = nameOf(test.minSupportedVersion);
    try {
        Json entry;
        entry["name"] = test.name.empty() ? specName : test.name;
        entry["model"] = Writer(test).model();
        doc["tests"] = Json::array({std::move(entry)});
    } catch (const FormatError& e) {
        return invalidArgument("cannot write model ", test.name, " as JSON: ", e.message);
    }
    return doc.dump();
}

Status writeCtsFile(const std::string& path, const CtsTest& test, const std::string& spec) {
    auto text = toCtsJson(test, spec.empty() ? std::filesystem::path(path).stem().string() : spec);
    if (!text) return text.status();
    return writeOutputFile(path, *text + "\n");
}

}  // namespace nncosim
