#include "model/CtsReader.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace nncosim {
namespace {

using nlohmann::json;

/// Thrown inside the parser and turned into an INVALID_ARGUMENT Status at the top.
struct FormatError {
    std::string message;
};

float toFloat(const json& v) {
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "inf") return std::numeric_limits<float>::infinity();
        if (s == "-inf") return -std::numeric_limits<float>::infinity();
        if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
        throw FormatError{"unknown float value \"" + s + "\""};
    }
    if (!v.is_number()) throw FormatError{"expected a number, got " + v.dump()};
    return v.get<float>();
}

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
    uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T>
T integer(const json& v) {
    if (v.is_boolean()) return static_cast<T>(v.get<bool>());
    if (!v.is_number_integer()) throw FormatError{"expected an integer, got " + v.dump()};
    const auto x = v.get<int64_t>();
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
        throw FormatError{"value " + std::to_string(x) + " out of range of its type"};
    return static_cast<T>(x);
}

/// Encodes a JSON value list as the bytes of `type`.
std::vector<uint8_t> encode(OperandType type, const json& values) {
    std::vector<uint8_t> out;
    if (!values.is_array()) throw FormatError{"data must be a list"};
    out.reserve(values.size() * std::max<uint32_t>(1, elementSize(type)));
    for (const json& v : values) {
        switch (type) {
            case OperandType::FLOAT32:
            case OperandType::TENSOR_FLOAT32:
                append(out, toFloat(v));
                break;
            case OperandType::FLOAT16:
            case OperandType::TENSOR_FLOAT16:
                append(out, Eigen::half(toFloat(v)));
                break;
            case OperandType::INT32:
            case OperandType::TENSOR_INT32:
                append(out, integer<int32_t>(v));
                break;
            case OperandType::UINT32:
                append(out, integer<uint32_t>(v));
                break;
            case OperandType::TENSOR_QUANT8_ASYMM:
            case OperandType::BOOL:
            case OperandType::TENSOR_BOOL8:
            case OperandType::TENSOR_OEM_BYTE:
                append(out, integer<uint8_t>(v));
                break;
            case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            case OperandType::TENSOR_QUANT8_SYMM:
            case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
                append(out, integer<int8_t>(v));
                break;
            case OperandType::TENSOR_QUANT16_SYMM:
                append(out, integer<int16_t>(v));
                break;
            case OperandType::TENSOR_QUANT16_ASYMM:
                append(out, integer<uint16_t>(v));
                break;
            default:
                throw FormatError{"cannot encode data of type " + std::string(nameOf(type))};
        }
    }
    return out;
}

/// A field that must be present, by reference (no copy of large data).
const json& member(const json& object, const char* name) {
    if (!object.is_object()) throw FormatError{"expected an object, got " + object.dump()};
    auto it = object.find(name);
    if (it == object.end()) throw FormatError{std::string("missing field \"") + name + "\""};
    return *it;
}

/// A field that must be a list.
const json& list(const json& object, const char* name) {
    const json& value = member(object, name);
    if (!value.is_array()) throw FormatError{std::string("\"") + name + "\" must be a list"};
    return value;
}

template <typename T>
struct IsIntegerList : std::false_type {};
template <typename T>
struct IsIntegerList<std::vector<T>> : std::is_integral<T> {};

/// A field's value; integers are range-checked (nlohmann's get<> wraps them silently: a
/// dimension of 4294967296 would become 0, "unknown").
template <typename T>
T field(const json& object, const char* name) {
    const json& value = member(object, name);
    try {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            return integer<T>(value);
        } else if constexpr (IsIntegerList<T>::value) {
            if (!value.is_array()) throw FormatError{"expected a list, got " + value.dump()};
            T out;
            for (const json& v : value) out.push_back(integer<typename T::value_type>(v));
            return out;
        } else {
            return value.get<T>();
        }
    } catch (const FormatError& e) {
        throw FormatError{std::string("field \"") + name + "\": " + e.message};
    } catch (const json::exception& e) {
        throw FormatError{std::string("field \"") + name + "\": " + e.what()};
    }
}

template <typename T>
T fieldOr(const json& object, const char* name, T fallback) {
    auto it = object.find(name);
    return it == object.end() ? fallback : field<T>(object, name);
}

/// Builds one test: constants into operandValues or the reference pool, inputs and expected
/// outputs from the main graph's data.
class TestBuilder {
  public:
    CtsTest build(const json& test) {
        CtsTest out;
        out.name = field<std::string>(test, "name");
        // Names reach terminals, line protocols and reports: no control characters.
        for (char c : out.name) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f)
                throw FormatError{"the test name holds control character " + std::to_string(u) +
                                  ": names must be printable text"};
        }
        const json& model = member(test, "model");
        const json none = json::array();
        const json& referenced = model.contains("referenced") ? list(model, "referenced") : none;
        out.model.main = readSubgraph(member(model, "main"), &out);
        for (const json& sub : referenced)
            out.model.referenced.push_back(readSubgraph(sub, nullptr));
        out.model.relaxComputationFloat32toFloat16 = fieldOr<bool>(model, "isRelaxed", false);
        out.expectFailure = fieldOr<bool>(model, "expectFailure", false);
        out.multinomialTolerance =
            fieldOr<float>(model, "expectedMultinomialDistributionTolerance", 0.0f);
        const auto version = fieldOr<std::string>(model, "minSupportedVersion", "UNKNOWN");
        if (auto level = featureLevelFromString(version)) out.minSupportedVersion = *level;
        out.model.operandValues = std::move(mValues);
        if (!mReferenceBytes.empty()) {
            auto pool = Memory::create(mReferenceBytes.size(), "cts-constants");
            if (!pool) throw FormatError{pool.status().message};
            std::copy(mReferenceBytes.begin(), mReferenceBytes.end(), pool.value()->data());
            out.model.pools.push_back(pool.value());
        }
        return out;
    }

  private:
    Subgraph readSubgraph(const json& sub, CtsTest* test) {
        Subgraph g;
        const json& operands = list(sub, "operands");
        std::vector<std::vector<uint8_t>> ioData(operands.size());
        for (size_t i = 0; i < operands.size(); ++i) {
            try {
                g.operands.push_back(readOperand(operands[i], &ioData[i]));
            } catch (const FormatError& e) {
                throw FormatError{"operand " + std::to_string(i) + ": " + e.message};
            }
        }
        for (const json& op : list(sub, "operations")) {
            const auto name = field<std::string>(op, "type");
            auto type = operationTypeFromString(name);
            if (!type) throw FormatError{"unknown operation type \"" + name + "\""};
            g.operations.push_back({*type, field<std::vector<uint32_t>>(op, "inputs"),
                                    field<std::vector<uint32_t>>(op, "outputs")});
        }
        g.inputIndexes = field<std::vector<uint32_t>>(sub, "inputIndexes");
        g.outputIndexes = field<std::vector<uint32_t>>(sub, "outputIndexes");
        if (test) {
            for (uint32_t k : g.inputIndexes) {
                if (k >= g.operands.size()) throw FormatError{"input index out of range"};
                // An input without data is omitted (NO_VALUE), as in Android's harness.
                if (ioData[k].empty()) {
                    test->inputs.emplace_back();
                } else {
                    test->inputs.push_back({g.operands[k].dimensions, std::move(ioData[k])});
                }
            }
            for (uint32_t k : g.outputIndexes) {
                if (k >= g.operands.size()) throw FormatError{"output index out of range"};
                test->expectedOutputs.push_back({g.operands[k].dimensions, std::move(ioData[k])});
                test->outputIgnored.push_back(fieldOr<bool>(operands[k], "isIgnored", false));
            }
        }
        return g;
    }

    Operand readOperand(const json& o, std::vector<uint8_t>* ioData) {
        Operand operand;
        const auto typeName = field<std::string>(o, "type");
        auto type = operandTypeFromString(typeName);
        if (!type) throw FormatError{"unknown operand type \"" + typeName + "\""};
        operand.type = *type;
        operand.dimensions = field<std::vector<uint32_t>>(o, "dimensions");
        operand.scale = fieldOr<float>(o, "scale", 0.0f);
        operand.zeroPoint = fieldOr<int32_t>(o, "zeroPoint", 0);
        const auto lifetimeName = field<std::string>(o, "lifetime");
        auto lifetime = lifeTimeFromString(lifetimeName);
        if (!lifetime) throw FormatError{"unknown lifetime \"" + lifetimeName + "\""};
        operand.lifetime = *lifetime;
        if (auto it = o.find("channelQuant"); it != o.end() && !it->is_null()) {
            operand.extraParams = SymmPerChannelQuantParams{
                field<std::vector<float>>(*it, "scales"), field<uint32_t>(*it, "channelDim")};
        }
        const json empty = json::array();
        const json& data = o.contains("data") ? o.at("data") : empty;
        // Android's harness sets a constant without data with setOperandValue(nullptr, 0),
        // which makes it an omitted operand (DENSIFY's unused metadata).
        if ((operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
             operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) &&
            data.empty()) {
            operand.lifetime = OperandLifeTime::NO_VALUE;
        }
        switch (operand.lifetime) {
            case OperandLifeTime::CONSTANT_COPY:
                operand.location = place(mValues, encode(operand.type, data));
                break;
            case OperandLifeTime::CONSTANT_REFERENCE:
                operand.location = place(mReferenceBytes, encode(operand.type, data));
                break;
            case OperandLifeTime::SUBGRAPH:
                if (data.size() != 1)
                    throw FormatError{"SUBGRAPH operand needs its subgraph index as data[0]"};
                operand.location.offset = integer<uint32_t>(data[0]);
                break;
            case OperandLifeTime::SUBGRAPH_INPUT:
            case OperandLifeTime::SUBGRAPH_OUTPUT:
                *ioData = encode(operand.type, data);
                break;
            default:
                break;
        }
        return operand;
    }

    /// Appends bytes 4-byte aligned (as the NNAPI runtime lays out constants).
    static DataLocation place(std::vector<uint8_t>& memory, const std::vector<uint8_t>& bytes) {
        memory.resize((memory.size() + 3) & ~size_t{3});
        DataLocation loc;
        loc.offset = static_cast<uint32_t>(memory.size());
        loc.length = static_cast<uint32_t>(bytes.size());
        memory.insert(memory.end(), bytes.begin(), bytes.end());
        return loc;
    }

    std::vector<uint8_t> mValues;
    std::vector<uint8_t> mReferenceBytes;
};

CtsTest unreadableTest(std::string name, std::string why) {
    CtsTest test;
    test.name = std::move(name);
    test.readError = std::move(why);
    return test;
}

}  // namespace

Result<CtsFile> parseCtsJson(const std::string& text, const std::string& origin) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return invalidArgument(origin, ": not valid JSON");
    CtsFile file;
    file.path = origin;
    const json* tests = nullptr;
    try {
        file.spec = fieldOr<std::string>(doc, "spec", "");
        file.version = fieldOr<std::string>(doc, "version", "");
        tests = &list(doc, "tests");
    } catch (const FormatError& e) {
        return invalidArgument(origin, ": ", e.message);
    }
    // A broken test is that test's error; the file's other tests are read as usual.
    for (size_t i = 0; i < tests->size(); ++i) {
        const json& test = (*tests)[i];
        std::string name = "(test " + std::to_string(i) + ")";
        if (test.is_object() && test.contains("name") && test["name"].is_string())
            name = test["name"].get<std::string>();
        if (std::any_of(name.begin(), name.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
            name = "(test " + std::to_string(i) + ")";
        try {
            file.tests.push_back(TestBuilder().build(test));
        } catch (const FormatError& e) {
            file.tests.push_back(unreadableTest(name, e.message));
        } catch (const json::exception& e) {
            file.tests.push_back(unreadableTest(name, e.what()));
        }
    }
    return file;
}

Result<CtsFile> readCtsFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return invalidArgument(path, ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    return parseCtsJson(text.str(), path);
}

Result<std::vector<std::string>> findJsonFiles(const std::vector<std::string>& paths) {
    return findFiles(paths, {".json"});
}

Result<std::vector<std::string>> findFiles(const std::vector<std::string>& paths,
                                           const std::vector<std::string>& extensions) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else if (fs::is_directory(p, ec)) {
            for (const auto& entry : fs::recursive_directory_iterator(p, ec)) {
                const std::string extension = entry.path().extension().string();
                if (entry.is_regular_file() &&
                    std::find(extensions.begin(), extensions.end(), extension) != extensions.end())
                    files.push_back(entry.path().string());
            }
        } else {
            return invalidArgument(p, ": no such file or directory");
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace nncosim
