// `nncosim zoo NAME [--float32|--float16|--relaxed|--quant8|--per-channel] [--converter-style]
// [--input-size N] [--width W] [--seed S] -o FILE.json`: writes a MobileNet-v1/v2 or ResNet-18
// shaped classifier or a DeepLab- or SSD-like head with random inputs, and the golden's outputs as
// expected outputs when the golden can run it.
#include <chrono>
#include <iomanip>
#include <iostream>

#include "golden/Executor.h"
#include "model/ModelJson.h"
#include "model/Validation.h"
#include "testbench/Zoo.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct ZooOptions {
    std::string network;
    bool float32 = false;
    bool float16 = false;
    bool relaxed = false;
    bool quant8 = false;
    bool perChannel = false;
    uint32_t inputSize = 224;
    float width = 1.0f;
    uint32_t classes = 1000;
    uint32_t seed = 1;
    bool converterStyle = false;
    std::string output;
};

int runZoo(const ZooOptions& options) {
    zoo::ZooConfig config;
    config.network = *zoo::networkFromName(options.network);
    config.precision = options.perChannel ? zoo::Precision::kQuant8PerChannel
                       : options.quant8   ? zoo::Precision::kQuant8
                       : options.float16  ? zoo::Precision::kFloat16
                       : options.relaxed  ? zoo::Precision::kRelaxed
                                          : zoo::Precision::kFloat32;
    config.inputSize = options.inputSize;
    config.widthMultiplier = options.width;
    config.numClasses = options.classes;
    config.seed = options.seed;
    config.converterStyle = options.converterStyle;

    auto model = zoo::buildZooModel(config);
    if (!model) {
        std::cerr << "nncosim zoo: " << model.status().message << "\n";
        return 2;
    }
    auto level = validateModel(*model);
    if (!level) {
        std::cerr << "nncosim zoo: generated model is invalid: " << level.status().message << "\n";
        return 1;
    }
    // Inputs from a stream of their own, so they do not repeat the first weights.
    auto inputs = zoo::randomInputs(*model, options.seed ^ 0x9e3779b9u);
    if (!inputs) {
        std::cerr << "nncosim zoo: " << inputs.status().message << "\n";
        return 1;
    }

    CtsTest test;
    test.name = zoo::modelName(config);
    test.minSupportedVersion = *level;
    test.inputs = *inputs;
    const auto start = std::chrono::steady_clock::now();
    auto outputs = golden::execute(*model, *inputs);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (outputs) {
        test.expectedOutputs = std::move(*outputs);
        test.outputIgnored.assign(test.expectedOutputs.size(), false);
    } else {
        std::cerr << "nncosim zoo: the golden cannot run this model (" << outputs.status().message
                  << "); writing it without expected outputs\n";
    }
    const size_t operations = model->main.operations.size();
    const size_t constantBytes =
        model->operandValues.size() + (model->pools.empty() ? 0 : model->pools.front()->size());
    test.model = std::move(*model);
    if (Status status = writeCtsFile(options.output, test, test.name); !status) {
        std::cerr << "nncosim zoo: " << status.message << "\n";
        return 2;
    }
    std::cout << test.name << ": " << operations << " operations, " << constantBytes
              << " bytes of constants, "
              << "feature level " << nameOf(*level);
    if (!test.expectedOutputs.empty()) {
        std::cout << ", golden outputs in " << std::fixed << std::setprecision(3) << seconds
                  << " s";
    }
    std::cout << " -> " << options.output << "\n";
    return 0;
}

}  // namespace

void addZooCommand(CLI::App& app) {
    auto options = std::make_shared<ZooOptions>();
    CLI::App* cmd =
        app.add_subcommand("zoo",
                           "Write a MobileNet-v1/v2, ResNet-18, DeepLab-head or SSD-head "
                           "shaped model as JSON");
    std::vector<std::string> names;
    for (zoo::Network n : zoo::allNetworks()) names.push_back(zoo::nameOf(n));
    cmd->add_option("name", options->network, "Network")->required()->check(CLI::IsMember(names));
    auto* f32 =
        cmd->add_flag("--float32", options->float32, "Float32 weights and activations (default)");
    auto* q8 =
        cmd->add_flag("--quant8", options->quant8, "TENSOR_QUANT8_ASYMM, per-tensor weights");
    auto* pc = cmd->add_flag(
        "--per-channel", options->perChannel,
        "TENSOR_QUANT8_ASYMM, per-channel TENSOR_QUANT8_SYMM_PER_CHANNEL conv weights");
    auto* f16 = cmd->add_flag("--float16", options->float16,
                              "Float16 weights and activations (rounded from the float32 ones)");
    auto* relaxed =
        cmd->add_flag("--relaxed", options->relaxed,
                      "Float32, with relaxed computation: float16 range and precision allowed");
    f32->excludes(q8)->excludes(pc)->excludes(f16)->excludes(relaxed);
    q8->excludes(pc)->excludes(f16)->excludes(relaxed);
    pc->excludes(f16)->excludes(relaxed);
    f16->excludes(relaxed);
    cmd->add_option("--input-size", options->inputSize, "Input height and width")
        ->check(CLI::Range(1u, 4096u));
    cmd->add_option("--width", options->width, "Width multiplier (alpha) of every layer's channels")
        ->check(CLI::Range(0.01f, 8.0f));
    cmd->add_option("--classes", options->classes, "Classifier outputs (the heads have 21 and 91)")
        ->check(CLI::Range(1u, 100000u));
    cmd->add_option("--seed", options->seed, "Seed of weights and inputs");
    cmd->add_flag("--converter-style", options->converterStyle,
                  "As PyTorch -> TFLite converters write it: NCHW input and a TRANSPOSE, explicit "
                  "PADs before convolutions, MEAN as the global average");
    cmd->add_option("-o,--output", options->output, "Model JSON file to write (CTS format)")
        ->required();
    cmd->callback([options] { gExitStatus = runZoo(*options); });
}

}  // namespace nncosim::cli
