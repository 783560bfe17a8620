// Loading the model files users bring: the project's JSON format (CTS test vectors, which work
// for single models too) and TensorFlow Lite flatbuffers.
#pragma once

#include <string>
#include <vector>

#include "model/CtsReader.h"
#include "model/Status.h"

namespace nncosim {

/// Loads a model file by its extension: `.json` is read as CTS JSON; `.tflite` is imported
/// (testbench/tflite/TfliteImporter.h) as one test named after the file, with no inputs and no
/// expected outputs (spec "tflite"). Anything the import left out is appended to `notes` when
/// given. The TFLite tensor names of the main graph's inputs go to `inputNames` when given
/// (left empty for `.json`). Fails with INVALID_ARGUMENT naming the file for any other
/// extension.
Result<CtsFile> loadModelFile(const std::string& path, std::vector<std::string>* notes = nullptr,
                              std::vector<std::string>* inputNames = nullptr);

/// The test named `name` of `file` (the first test when `name` is empty). Fails naming the file
/// when there is no such test or the test could not be read (CtsTest::readError).
Result<const CtsTest*> selectTest(const CtsFile& file, const std::string& name);

/// The model files under the given files or directories: every file named directly, and every
/// `.json` and `.tflite` file found recursively in directories; sorted. Fails naming a path that
/// does not exist.
Result<std::vector<std::string>> findModelFiles(const std::vector<std::string>& paths);

}  // namespace nncosim
