// Reader of the NNAPI CTS test vectors (../shared/cts, format in its FORMAT.md).
#pragma once

#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// One CTS test: a complete model with its inputs and the expected outputs, in the model's
/// main-graph input/output order. CONSTANT_COPY data is in Model::operandValues and
/// CONSTANT_REFERENCE data in a shared-memory pool, as the NNAPI runtime would send them.
struct CtsTest {
    std::string name;
    Model model;
    std::vector<TensorData> inputs;           ///< empty (no dimensions, no bytes) when omitted
    std::vector<TensorData> expectedOutputs;  ///< dimensions are the true output shapes
    std::vector<bool> outputIgnored;          ///< do not compare this output's values
    bool expectFailure = false;               ///< the execution must fail (the model is valid)
    float multinomialTolerance = 0.0f;        ///< non-zero only for RANDOM_MULTINOMIAL
    FeatureLevel minSupportedVersion = FeatureLevel::kV1_0;
    /// Why the test could not be read (empty when it was): such a test has only its name (or
    /// "#<index>" when that is unreadable too) and must be reported as invalid or failed.
    std::string readError;
};

struct CtsFile {
    std::string path;
    std::string spec;
    std::string version;  ///< V1_0 ... AIDL_V3, experimental
    std::vector<CtsTest> tests;
};

/// Reads one CTS JSON file. Fails with INVALID_ARGUMENT naming the file when its bytes are not
/// JSON or it has no list of tests; a test that does not follow the format is returned with its
/// readError set (naming the operand or field), the others as usual.
Result<CtsFile> readCtsFile(const std::string& path);

/// Parses CTS JSON text (`origin` names it in messages).
Result<CtsFile> parseCtsJson(const std::string& text, const std::string& origin);

/// Every *.json file under the given files or directories (recursively), sorted; fails naming a
/// path that does not exist.
Result<std::vector<std::string>> findJsonFiles(const std::vector<std::string>& paths);

/// Every file with one of `extensions` (".json"...) under the given files or directories
/// (recursively; files given by name are taken whatever their extension), sorted; fails naming
/// a path that does not exist.
Result<std::vector<std::string>> findFiles(const std::vector<std::string>& paths,
                                           const std::vector<std::string>& extensions);

}  // namespace nncosim
