// `nncosim compile MODEL [--test NAME] [--dump]`: runs the driver's compiler on a model (CTS
// JSON or .tflite) and prints which operations the NPU takes and the program it gets:
// descriptors, addresses, tile counts and estimated cycles.
#include <iostream>

#include "driver/Compiler.h"
#include "model/Validation.h"
#include "testbench/ModelFiles.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct CompileOptions {
    std::string path;
    std::string test;
    bool dump = false;
};

int runCompile(const CompileOptions& options) {
    auto file = loadModelFile(options.path);
    if (!file) {
        std::cerr << "nncosim compile: " << file.status().message << "\n";
        return 2;
    }
    auto selected = selectTest(*file, options.test);
    if (!selected) {
        std::cerr << "nncosim compile: " << selected.status().message << "\n";
        return 2;
    }
    const CtsTest* test = *selected;
    const Model& model = test->model;
    if (auto level = validateModel(model); !level) {
        std::cerr << "nncosim compile: invalid model: " << level.status().message << "\n";
        return 2;
    }
    std::cout << test->name << ": " << model.main.operations.size() << " operations\n";
    bool all = true;
    for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
        Status st = driver::checkOperationSupported(model, i);
        std::cout << "  " << i << " " << nameOf(model.main.operations[i].type) << ": "
                  << (st.ok() ? "NPU" : "not supported (" + st.message + ")") << "\n";
        all = all && st.ok();
    }
    if (!all) {
        std::cout << "not every operation runs on the NPU: no program\n";
        return 1;
    }
    auto program = driver::compileModel(model, {});
    if (!program) {
        std::cerr << "nncosim compile: " << program.status().message << "\n";
        return 1;
    }
    if (options.dump) {
        std::cout << driver::dumpProgram(*program);
    } else {
        std::cout << "NPU program: " << program->descriptors.size() << " descriptors, "
                  << program->constants.size() << " bytes of constants, arena "
                  << program->arenaSize << " bytes, estimated " << program->estimatedCycles
                  << " cycles (--dump lists the descriptors)\n";
    }
    return 0;
}

}  // namespace

void addCompileCommand(CLI::App& app) {
    auto options = std::make_shared<CompileOptions>();
    CLI::App* cmd =
        app.add_subcommand("compile", "Compile a model for the NPU and show the program");
    cmd->add_option("model", options->path, "Model file (CTS JSON or .tflite)")->required();
    cmd->add_option("--test", options->test, "Test of the file to compile (default: the first)");
    cmd->add_flag("--dump", options->dump, "Print every descriptor with its fields");
    cmd->callback([options] { gExitStatus = runCompile(*options); });
}

}  // namespace nncosim::cli
