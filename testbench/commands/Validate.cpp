// `nncosim validate [--strict] [--summary FILE.json] PATH...`: checks every model (CTS JSON or
// .tflite) against the NNAPI validation rules (with --strict also the declared output shapes
// against the computed ones); one line per invalid model naming the rule.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/CtsReader.h"
#include "model/OutputFile.h"
#include "model/Validation.h"
#include "testbench/ModelFiles.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct ValidateOptions {
    std::vector<std::string> paths;
    std::string summaryPath;
    bool strict = false;  // also the declared shapes against the computed ones
};

int runValidate(const ValidateOptions& options) {
    auto files = findModelFiles(options.paths);
    if (!files) {
        std::cerr << "nncosim validate: " << files.status().message << "\n";
        return 2;
    }
    size_t total = 0, valid = 0, unreadable = 0;
    for (const auto& path : *files) {
        std::vector<std::string> notes;
        auto file = loadModelFile(path, &notes);
        for (const auto& note : notes) std::cout << "NOTE " << path << ": " << note << "\n";
        if (!file) {
            ++unreadable;
            std::cout << "UNREADABLE " << file.status().message << "\n";
            continue;
        }
        for (const auto& test : file->tests) {
            ++total;
            if (!test.readError.empty()) {
                std::cout << "INVALID " << path << " " << test.name << ": " << test.readError
                          << "\n";
                continue;
            }
            auto level = validateModel(test.model);
            if (level && options.strict) {
                if (Status st = validateDeclaredShapes(test.model); !st.ok()) level = st;
            }
            if (level) {
                ++valid;
            } else {
                std::cout << "INVALID " << path << " " << test.name << ": "
                          << level.status().message << "\n";
            }
        }
    }
    const size_t invalid = total - valid;
    std::cout << "validated " << total << " models in " << files->size() << " files: " << valid
              << " valid, " << invalid << " invalid"
              << (unreadable ? ", " + std::to_string(unreadable) + " files unreadable" : "")
              << "\n";
    if (!options.summaryPath.empty()) {
        nlohmann::json summary = {{"total", total},
                                  {"valid", valid},
                                  {"invalid", invalid},
                                  {"unreadable_files", unreadable}};
        if (Status written = writeOutputFile(options.summaryPath, summary.dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim validate: " << written.message << "\n";
            return 2;
        }
    }
    return invalid == 0 && unreadable == 0 ? 0 : 1;
}

}  // namespace

void addValidateCommand(CLI::App& app) {
    auto options = std::make_shared<ValidateOptions>();
    CLI::App* cmd = app.add_subcommand(
        "validate",
        "Check models (CTS JSON or .tflite files, or folders) against the NNAPI validation rules");
    cmd->add_option("paths", options->paths, "CTS JSON or .tflite files, or folders of them")
        ->required();
    cmd->add_option("--summary", options->summaryPath,
                    "Write {total, valid, invalid} as JSON to this file");
    cmd->add_flag("--strict", options->strict,
                  "Also reject output shapes the model declares that its operations contradict "
                  "(NNAPI lets those fail at execution)");
    cmd->callback([options] { gExitStatus = runValidate(*options); });
}

}  // namespace nncosim::cli
