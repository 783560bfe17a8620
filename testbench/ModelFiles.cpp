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
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else if (fs::is_directory(p, ec)) {
            for (const auto& entry : fs::recursive_directory_iterator(p, ec)) {
                const auto extension = entry.path().extension();
                if (entry.is_regular_file() && (extension == ".json" || extension == ".tflite"))
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
