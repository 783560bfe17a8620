// Imports TensorFlow Lite flatbuffers (.tflite, the format Android models ship in) as NNAPI
// models, mapping TFLite operators to NNAPI operations the way TFLite's NNAPI delegate does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// A converted model and what the user should know about the conversion.
struct TfliteImport {
    /// Main graph = TFLite subgraph 0. Inputs and outputs follow the subgraph's lists (constant
    /// inputs are dropped, as the delegate drops them). Constants of at most 128 bytes are
    /// CONSTANT_COPY, larger ones CONSTANT_REFERENCE in one shared-memory pool (NNAPI's
    /// ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES rule).
    Model model;
    std::vector<std::string> inputNames;   ///< TFLite tensor names of model.main.inputIndexes
    std::vector<std::string> outputNames;  ///< TFLite tensor names of model.main.outputIndexes
    /// Things that were not converted but did not stop the import (e.g. subgraphs other than 0).
    std::vector<std::string> notes;
};

/// Converts the bytes of a .tflite file. `origin` names the file in messages.
///
/// Layout: TFLite's NHWC tensors, OHWI convolution filters, 1HWO depthwise filters and [out,in]
/// fully-connected weights are NNAPI's layouts already, so data is never rearranged. uint8
/// tensors become TENSOR_QUANT8_ASYMM, int8 TENSOR_QUANT8_ASYMM_SIGNED (NNAPI 1.3, as the
/// delegate targets it), int8 with several scales TENSOR_QUANT8_SYMM_PER_CHANNEL along the
/// tensor's quantized_dimension, int32 TENSOR_INT32 (per-channel biases get scale 0), float16
/// TENSOR_FLOAT16, bool TENSOR_BOOL8, int16 TENSOR_QUANT16_SYMM; rank-0 tensors become [1].
///
/// Fails with INVALID_ARGUMENT naming the file and, where it applies, the operator index and
/// name or the tensor index: a truncated or foreign file, a schema version other than 3, an
/// operator or operator variant NNAPI has no form for, a tensor index out of range, a tensor
/// type NNAPI cannot represent. Never throws.
Result<TfliteImport> importTflite(const uint8_t* data, size_t size, const std::string& origin);

/// The file-level checks of importTflite: the bytes are a verified TFLite flatbuffer of schema
/// version 3 with at least one subgraph. What fails after these is the model's fault, not the
/// file's.
Status checkTfliteFile(const uint8_t* data, size_t size, const std::string& origin);

/// The bytes of a file.
Result<std::vector<uint8_t>> readTfliteFile(const std::string& path);

/// Reads and converts a .tflite file.
Result<TfliteImport> importTfliteFile(const std::string& path);

}  // namespace nncosim
