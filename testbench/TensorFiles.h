// A model's inputs read from files and its outputs written to files: `nncosim run --input` and
// `--save-outputs`, `nncosim convert --input`. Tensors are NumPy .npy files (testbench/Npy.h)
// or, for inputs, raw bytes.
#pragma once

#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// How messages name main-graph input `position` of `model`: "input 0 'name' (operand 3,
/// TENSOR_FLOAT32 [1,28,28])"; the quoted name only when `name` is not empty (a TFLite tensor
/// name, say).
std::string inputLabel(const Model& model, uint32_t position, const std::string& name = "");

/// Reads the value of main-graph input `position` of `model` from `path`.
///
/// A file named `*.npy` must hold the input's dtype (npy::descrOf of its operand type: float32
/// for TENSOR_FLOAT32, int8 for TENSOR_QUANT8_ASYMM_SIGNED, uint8 for TENSOR_QUANT8_ASYMM...)
/// and its shape; an unknown dimension of the operand (0) takes the file's, an operand of
/// unknown rank any shape. Any other file is the input's raw bytes (little-endian, C order) and
/// must have exactly its size, which needs a fully known shape.
///
/// Fails with INVALID_ARGUMENT naming the input (inputLabel), the file and what was expected:
/// the dtype, the shape or the size; or why the file cannot be read.
Result<TensorData> readInputFile(const Model& model, uint32_t position, const std::string& path,
                                 const std::string& name = "");

/// One file per main-graph input, in order (readInputFile). `names` may name the inputs (TFLite
/// tensor names) or be empty. Fails with INVALID_ARGUMENT when the number of files differs from
/// the number of inputs, listing the inputs the model expects.
Result<std::vector<TensorData>> readInputFiles(const Model& model,
                                               const std::vector<std::string>& paths,
                                               const std::vector<std::string>& names = {});

/// Writes `tensor` (values of an operand of `type`) as a .npy file of the matching dtype and
/// the tensor's shape. Fails with INVALID_ARGUMENT when the type has no NumPy dtype, the bytes
/// do not fit the shape, or the file cannot be written.
Status writeTensorFile(const std::string& path, OperandType type, const TensorData& tensor);

}  // namespace nncosim
