// `nncosim convert MODEL.tflite -o MODEL.json [--input FILE...] [--seed S]`: writes an imported
// model as a CTS-format test (../shared/cts/FORMAT.md) with its inputs (the files given, or
// random as `run` draws them) and the golden's outputs as expected outputs, so that `cts`,
// `validate`, `run` and `regress` take it as a regression test.
#include <filesystem>
#include <iostream>

#include "golden/Executor.h"
#include "model/ModelJson.h"
#include "model/Validation.h"
#include "testbench/ModelFiles.h"
#include "testbench/ModelRun.h"
#include "testbench/TensorFiles.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct ConvertOptions {
    std::string path;
    std::string test;
    std::string output;
    std::vector<std::string> inputFiles;
    uint32_t seed = 1;
};

int runConvert(const ConvertOptions& options) {
    std::vector<std::string> notes, inputNames;
    auto file = loadModelFile(options.path, &notes, &inputNames);
    if (!file) {
        std::cerr << "nncosim convert: " << file.status().message << "\n";
        return 2;
    }
    for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
    auto selected = selectTest(*file, options.test);
    if (!selected) {
        std::cerr << "nncosim convert: " << selected.status().message << "\n";
        return 2;
    }
    CtsTest test;
    test.name = (*selected)->name;
    test.model = (*selected)->model;
    auto level = validateModel(test.model);
    if (!level) {
        std::cerr << "nncosim convert: invalid model: " << level.status().message << "\n";
        return 2;
    }
    test.minSupportedVersion = *level;

    std::string inputsText;
    if (!options.inputFiles.empty()) {
        auto inputs = readInputFiles(test.model, options.inputFiles, inputNames);
        if (!inputs) {
            std::cerr << "nncosim convert: " << inputs.status().message << "\n";
            return 2;
        }
        test.inputs = std::move(*inputs);
        inputsText = "inputs from " + std::to_string(options.inputFiles.size()) +
                     (options.inputFiles.size() == 1 ? " file" : " files");
        // The format takes input shapes from the model: the files fill unknown dimensions.
        for (size_t i = 0; i < test.inputs.size(); ++i)
            test.model.main.operands[test.model.main.inputIndexes[i]].dimensions =
                test.inputs[i].dimensions;
        // What is written must be a model `validate` accepts.
        auto withInputs = validateModel(test.model);
        if (!withInputs) {
            std::cerr << "nncosim convert: the inputs' shapes make the model invalid: "
                      << withInputs.status().message << "\n";
            return 2;
        }
        test.minSupportedVersion = *withInputs;
    } else {
        auto inputs = randomModelInputs(test.model, options.seed);
        if (!inputs) {
            std::cerr << "nncosim convert: " << inputs.status().message
                      << " (give the inputs with --input)\n";
            return 2;
        }
        test.inputs = std::move(*inputs);
        inputsText = "random inputs (seed " + std::to_string(options.seed) + ")";
    }

    auto outputs = golden::execute(test.model, test.inputs);
    if (!outputs) {
        std::cerr << "nncosim convert: the golden cannot run the model: "
                  << outputs.status().message << "\n";
        return 2;
    }
    test.expectedOutputs = std::move(*outputs);
    test.outputIgnored.assign(test.expectedOutputs.size(), false);
    if (Status st = writeCtsFile(options.output, test); !st.ok()) {
        std::cerr << "nncosim convert: " << st.message << "\n";
        return 2;
    }
    const size_t operations = test.model.main.operations.size();
    std::cout << test.name << ": " << operations
              << (operations == 1 ? " operation, " : " operations, ") << inputsText << ", "
              << test.expectedOutputs.size()
              << (test.expectedOutputs.size() == 1 ? " golden output" : " golden outputs")
              << ", feature level " << nameOf(*level) << " -> " << options.output << "\n";
    return 0;
}

}  // namespace

void addConvertCommand(CLI::App& app) {
    auto options = std::make_shared<ConvertOptions>();
    CLI::App* cmd = app.add_subcommand(
        "convert", "Write a model (.tflite) as a CTS test with inputs and golden outputs");
    cmd->add_option("model", options->path, "Model file (.tflite, or CTS JSON)")->required();
    cmd->add_option("-o,--output", options->output, "CTS JSON file to write")->required();
    cmd->add_option("--input", options->inputFiles,
                    "Input values, one file per model input in order: .npy (the input's dtype "
                    "and shape) or raw bytes of exactly the input's size (default: random)");
    cmd->add_option("--seed", options->seed, "Seed of random inputs (as `run --seed`)")
        ->capture_default_str();
    cmd->add_option("--test", options->test, "Test of a JSON file to convert (default: the first)");
    cmd->callback([options] { gExitStatus = runConvert(*options); });
}

}  // namespace nncosim::cli
