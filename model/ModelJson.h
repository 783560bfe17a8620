// Writer of single models (with optional inputs and expected outputs) in the CTS JSON format
// (../shared/cts/FORMAT.md): the project's JSON format for models. readCtsFile() reads it back.
#pragma once

#include <string>

#include "model/CtsReader.h"
#include "model/Status.h"

namespace nncosim {

/// Serializes `test` as a CTS document holding that one test, named `spec` ("spec" and the
/// test's name default to test.name when empty).
///
/// Constants are written from where they live (Model::operandValues or Model::pools); the
/// main graph's SUBGRAPH_INPUT and SUBGRAPH_OUTPUT operands carry test.inputs and
/// test.expectedOutputs as their data (each may be empty, and an empty TensorData writes no
/// data). Floats are written with the fewest digits that read back to the same bits;
/// non-finite values as "inf", "-inf", "nan". Reading the text with parseCtsJson() gives back
/// the same graphs, operand types, shapes, quantization, constant values, inputs and outputs;
/// constants are laid out again (4-byte aligned, one reference pool), so offsets may differ.
///
/// Fails with INVALID_ARGUMENT when the test cannot be expressed in the format: extension
/// types, POINTER lifetimes, constants outside their pool, an input whose shape differs from
/// its operand's (the format takes input shapes from the model), data whose size does not fit
/// its operand.
Result<std::string> toCtsJson(const CtsTest& test, const std::string& spec = "");

/// Writes toCtsJson(test, spec) to `path`; `spec` defaults to the file's stem.
Status writeCtsFile(const std::string& path, const CtsTest& test, const std::string& spec = "");

}  // namespace nncosim
