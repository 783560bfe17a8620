#include "testbench/tflite/TfliteImporter.h"

#include <fstream>
#include <iterator>

#include "testbench/tflite/Importer.h"

namespace nncosim {
namespace {

using namespace tflite_import;

}  // namespace

Status checkTfliteFile(const uint8_t* data, size_t size, const std::string& origin) {
    if (size < 8)
        return invalidArgument(origin, ": truncated file (", size,
                               " bytes), not a TensorFlow Lite model");
    if (!tfl::ModelBufferHasIdentifier(data))
        return invalidArgument(origin,
                               ": not a TensorFlow Lite flatbuffer (file identifier is not \"",
                               tfl::ModelIdentifier(), "\")");
    flatbuffers::Verifier verifier(data, size);
    if (!tfl::VerifyModelBuffer(verifier))
        return invalidArgument(
            origin, ": corrupt or truncated TensorFlow Lite flatbuffer (verification failed)");
    const tfl::Model* model = tfl::GetModel(data);
    if (model->version() != 3)
        return invalidArgument(origin, ": TFLite schema version ", model->version(),
                               " is not supported (expected 3)");
    if (!model->subgraphs() || model->subgraphs()->size() == 0)
        return invalidArgument(origin, ": the model has no subgraph");
    return okStatus();
}

Result<TfliteImport> importTflite(const uint8_t* data, size_t size, const std::string& origin) {
    try {
        return Importer(data, size, origin).run();
    } catch (const ImportError& e) {
        return invalidArgument(e.message);
    } catch (const std::exception& e) {  // e.g. the constant pool could not be created
        return fail(ErrorStatus::GENERAL_FAILURE, origin, ": ", e.what());
    }
}

Result<std::vector<uint8_t>> readTfliteFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return invalidArgument(path, ": cannot open file");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    if (file.bad()) return invalidArgument(path, ": read error");
    return bytes;
}

Result<TfliteImport> importTfliteFile(const std::string& path) {
    auto bytes = readTfliteFile(path);
    if (!bytes) return bytes.status();
    return importTflite(bytes->data(), bytes->size(), path);
}

}  // namespace nncosim
