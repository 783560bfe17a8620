// Runs one CTS test on a backend as Android's harness does: the test itself, its dynamic
// output shape variant and its insufficient-output-buffer variant.
#pragma once

#include <string>
#include <vector>

#include "model/CtsReader.h"
#include "testbench/Backend.h"

namespace nncosim {

enum class Verdict { PASSED, FAILED, UNSUPPORTED };
const char* verdictName(Verdict v);
/// The verdict verdictName names; anything else reads as FAILED (a result must not pass by
/// being unreadable).
Verdict verdictFromName(const std::string& name);

struct CtsTestResult {
    std::string file;
    std::string name;
    std::vector<OperationType> operations;  ///< the operations the test exercises
    std::string numerics;                   ///< testNumerics: float, quantized or integer
    Verdict verdict = Verdict::FAILED;
    std::string message;  ///< why it failed or is unsupported; empty when passed
    double seconds = 0.0;
};

/// The operation types a test exercises: the distinct types of its main graph, without the
/// ADDs that `_all_inputs_as_internal` variants insert to feed inputs through.
std::vector<OperationType> testedOperations(const CtsTest& test);

/// The test's numerics class: "float" when any operand (referenced subgraphs included) is
/// float32 or float16, else "quantized" when any is quantized, else "integer".
std::string testNumerics(const CtsTest& test);

/// Runs the test and its variants. An unreadable test (readError), a model whose tensors need
/// more than `memoryLimitBytes` (checkMemoryLimit) and running out of memory fail the test
/// with the reason; nothing throws.
CtsTestResult runCtsTest(Backend& backend, const CtsTest& test, const std::string& file,
                         Duration loopTimeout = kDefaultLoopTimeoutDuration,
                         uint64_t memoryLimitBytes = kDefaultMemoryLimitBytes);

}  // namespace nncosim
