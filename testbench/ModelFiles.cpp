#include "testbench/ModelFiles.h"

#include <algorithm>
#include <filesystem>

#include "testbench/tflite/TfliteImporter.h"

namespace nncosim {

Result<CtsFile> loadModelFile(const std::string& path, std::vector<std::string>* notes) {
    const std::string extension = std::filesystem::path(path).extension().string();
    if (extension == ".json") return readCtsFile(path);
    if (extension != ".tflite")
        return invalidArgument(path, ": unknown model file type '", extension,
                               "' (expected .json or .tflite)");
    auto imported = importTfliteFile(path);
    if (!imported) return imported.status();
    if (notes) notes->insert(notes->end(), imported->notes.begin(), imported->notes.end());
    CtsFile file;
    file.path = path;
    file.spec = "tflite";
    CtsTest test;
    test.name = std::filesystem::path(path).stem().string();
    test.model = std::move(imported->model);
    file.tests.push_back(std::move(test));
    return file;
}

Result<std::vector<std::string>> findModelFiles(const std::vector<std::string>& paths) {
    return findFiles(paths, {".json", ".tflite"});
}

}  // namespace nncosim
