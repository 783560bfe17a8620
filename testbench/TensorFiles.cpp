#include "testbench/TensorFiles.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "testbench/Npy.h"

namespace nncosim {
namespace {

bool hasNpyExtension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".npy";
}

std::vector<uint64_t> wide(const std::vector<uint32_t>& dims) {
    return {dims.begin(), dims.end()};
}

/// The operand's shape as NumPy prints it, unknown dimensions as "?".
std::string expectedShapeText(const Operand& operand) {
    if (isTensorType(operand.type) && operand.dimensions.empty()) return "any shape";
    std::string s = "(";
    for (size_t i = 0; i < operand.dimensions.size(); ++i) {
        const uint32_t d = operand.dimensions[i];
        s += (i ? ", " : "") + (d == 0 ? std::string("?") : std::to_string(d));
    }
    if (operand.dimensions.size() == 1) s += ",";
    return s + ")";
}

}  // namespace

std::string inputLabel(const Model& model, uint32_t position, const std::string& name) {
    const uint32_t k = model.main.inputIndexes.at(position);
    const Operand& operand = model.main.operands.at(k);
    std::string s = "input " + std::to_string(position);
    if (!name.empty()) s += " '" + name + "'";
    return s + " (operand " + std::to_string(k) + ", " + nameOf(operand.type) + " " +
           toString(operand.dimensions) + ")";
}

Result<TensorData> readInputFile(const Model& model, uint32_t position, const std::string& path,
                                 const std::string& name) {
    if (position >= model.main.inputIndexes.size())
        return invalidArgument("the model has no input ", position);
    const Operand& operand = model.main.operands.at(model.main.inputIndexes[position]);
    const std::string label = inputLabel(model, position, name);
    const std::string descr = npy::descrOf(operand.type);
    if (descr.empty())
        return invalidArgument(label, ": inputs of type ", nameOf(operand.type),
                               " cannot be read from files");
    const std::string dtype = npy::dtypeName(descr);
    TensorData t;

    if (hasNpyExtension(path)) {
        // The header's dtype and shape are checked before the data is read: a file far larger
        // than the input is refused at once.
        const auto checkHeader = [&](const npy::Array& header) -> Status {
            if (header.descr != descr) {
                std::string hint;
                const bool quantized = operand.scale > 0.0f && dtype != "float32" &&
                                       dtype != "float16" && dtype != "int32";
                if (quantized && header.descr[1] == 'f') {
                    // Real values for a quantized input: say how to quantize them.
                    std::ostringstream q;
                    q << "; it is quantized with scale " << operand.scale << " and zero point "
                      << operand.zeroPoint << ": np.clip(np.round(a / " << operand.scale << ") + "
                      << operand.zeroPoint << ", ...).astype(np." << dtype << ")";
                    hint = q.str();
                } else if (dtype != "bool") {
                    hint = "; convert it with a.astype(np." + dtype + ")";
                }
                return invalidArgument(path, " holds ", npy::dtypeName(header.descr), ", expected ",
                                       dtype, " ('", descr, "')", hint);
            }
            const bool anyShape = isTensorType(operand.type) && operand.dimensions.empty();
            bool fits = anyShape || header.shape.size() == operand.dimensions.size();
            for (size_t i = 0; fits && !anyShape && i < header.shape.size(); ++i) {
                const uint32_t d = operand.dimensions[i];
                fits = header.shape[i] <= UINT32_MAX && (d == 0 || d == header.shape[i]);
            }
            if (!fits)
                return invalidArgument(path, " has shape ", npy::shapeText(header.shape),
                                       ", expected ", expectedShapeText(operand));
            return okStatus();
        };
        auto array = npy::readFile(path, checkHeader);
        if (!array) return invalidArgument(label, ": ", array.status().message);
        for (uint64_t d : array->shape) {
            if (d > UINT32_MAX)
                return invalidArgument(label, ": ", path, " has a dimension above 2^32");
            t.dimensions.push_back(static_cast<uint32_t>(d));
        }
        t.bytes = std::move(array->data);
        return t;
    }

    if (hasUnknownDimensions(operand))
        return invalidArgument(label, " has unknown dimensions: give a .npy file, whose shape ",
                               "fills them, instead of raw bytes (", path, ")");
    const uint64_t expected = byteSize(operand.type, operand.dimensions);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return invalidArgument(label, ": ", path, ": cannot read file (", ec.message(), ")");
    if (size != expected)
        return invalidArgument(label, ": ", path, " has ", size, " bytes, expected ", expected,
                               " (raw ", dtype, " ", expectedShapeText(operand),
                               ", little-endian, C order; or give a .npy file)");
    std::ifstream file(path, std::ios::binary);
    t.bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (!file.good() && !file.eof()) return invalidArgument(label, ": ", path, ": read error");
    if (t.bytes.size() != expected)
        return invalidArgument(label, ": ", path, ": read ", t.bytes.size(), " of ", expected,
                               " bytes");
    t.dimensions = operand.dimensions;
    return t;
}

Result<std::vector<TensorData>> readInputFiles(const Model& model,
                                               const std::vector<std::string>& paths,
                                               const std::vector<std::string>& names) {
    const size_t count = model.main.inputIndexes.size();
    auto nameOfInput = [&](size_t i) { return i < names.size() ? names[i] : std::string(); };
    if (paths.size() != count) {
        std::string expected;
        for (size_t i = 0; i < count; ++i)
            expected += "\n  " + inputLabel(model, static_cast<uint32_t>(i), nameOfInput(i));
        return invalidArgument(paths.size(), paths.size() == 1 ? " input file" : " input files",
                               " given, but the model has ", count,
                               count == 1 ? " input" : " inputs",
                               " (one --input per input, in order)", count ? ":" : "", expected);
    }
    std::vector<TensorData> inputs;
    for (size_t i = 0; i < count; ++i) {
        auto t = readInputFile(model, static_cast<uint32_t>(i), paths[i], nameOfInput(i));
        if (!t) return t.status();
        inputs.push_back(std::move(*t));
    }
    return inputs;
}

Status writeTensorFile(const std::string& path, OperandType type, const TensorData& tensor) {
    npy::Array array;
    array.descr = npy::descrOf(type);
    if (array.descr.empty())
        return invalidArgument(path, ": values of type ", nameOf(type), " have no NumPy dtype");
    array.shape = wide(tensor.dimensions);
    const uint64_t expected = byteSize(type, tensor.dimensions);
    if (tensor.bytes.size() != expected)
        return invalidArgument(path, ": ", tensor.bytes.size(), " bytes do not fit ", nameOf(type),
                               " ", toString(tensor.dimensions), " (", expected, " bytes)");
    array.data = tensor.bytes;
    return npy::writeFile(path, array);
}

}  // namespace nncosim
