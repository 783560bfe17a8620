// Fuzz target: CTS JSON bytes -> parseCtsJson -> validateModel of every readable test; on the
// small valid ones the golden executor (with the test's inputs, under a memory limit) and the
// driver's checkOperationSupported, then compileModel when the NPU supports every operation (the
// program must serialize and deserialize back).
#include <cstdlib>
#include <string>

#include "driver/Compiler.h"
#include "driver/Program.h"
#include "fuzz/FuzzCommon.h"
#include "golden/Executor.h"
#include "model/CtsReader.h"
#include "model/Validation.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Result<CtsFile> file = parseCtsJson(text, "fuzz.json");
    if (!file.ok()) return 0;
    for (const CtsTest& test : file.value().tests) {
        if (!test.readError.empty()) continue;
        if (!validateModel(test.model).ok()) continue;
        if (!checkMemoryLimit(test.model, fuzz::kExecuteLimitBytes).ok()) continue;
        golden::ExecuteOptions options;
        options.loopTimeout = fuzz::kLoopTimeout;
        options.memoryLimitBytes = fuzz::kExecuteLimitBytes;
        (void)golden::execute(test.model, test.inputs, options);

        bool supported = !test.model.main.operations.empty();
        for (uint32_t i = 0; i < test.model.main.operations.size(); ++i)
            supported = driver::checkOperationSupported(test.model, i).ok() && supported;
        if (!supported || !driver::compileTimeInputs(test.model).empty()) continue;
        Result<driver::Program> program = driver::compileModel(test.model, {});
        if (!program.ok()) continue;
        if (!driver::deserializeProgram(driver::serializeProgram(program.value()),
                                        program.value().constants)
                 .ok())
            std::abort();
    }
    return 0;
}
