#include "testbench/ModelFiles.h"

#include <algorithm>
#include <filesystem>

#include "testbench/tflite/TfliteImporter.h"

namespace nncosim {

Result<CtsFile> loadModelFile(const std::string& path, std::vector<std::string>* notes,
                              std::vector<std::string>* inputNames) {
    const std::string extension = std::filesystem::path(path).extension().string();
    if (extension == ".json") return readCtsFile(path);
    if (extension != ".tflite")
        return invalidArgument(path, ": unknown model file type '", extension,
                               "' (expected .json or .tflite)");
    auto bytes = readTfliteFile(path);
    if (!bytes) return bytes.status();
    // Unreadable only when the bytes are not a TFLite model at all; a model that does not
    // convert is its test's error.
    if (Status st = checkTfliteFile(bytes->data(), bytes->size(), path); !st.ok()) return st;
    CtsFile file;
    file.path = path;
    file.spec = "tflite";
    CtsTest test;
    test.name = std::filesystem::path(path).stem().string();
    auto imported = importTflite(bytes->data(), bytes->size(), path);
    if (imported) {
        if (notes) notes->insert(notes->end(), imported->notes.begin(), imported->notes.end());
        if (inputNames) *inputNames = imported->inputNames;
        test.model = std::move(imported->model);
    } else {
        test.readError = imported.status().message;
    }
    file.tests.push_back(std::move(test));
    return file;
}

Result<const CtsTest*> selectTest(const CtsFile& file, const std::string& name) {
    for (const CtsTest& test : file.tests) {
        if (!name.empty() && test.name != name) continue;
        if (!test.readError.empty())
            return invalidArgument(file.path, " test ", test.name, ": ", test.readError);
        return &test;
    }
    if (name.empty()) return invalidArgument(file.path, " has no test");
    return invalidArgument(file.path, " has no test named '", name, "'");
}

Result<std::vector<std::string>> findModelFiles(const std::vector<std::string>& paths) {
    return findFiles(paths, {".json", ".tflite"});
}

}  // namespace nncosim
