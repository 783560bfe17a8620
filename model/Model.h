// Canonical NNAPI Model and Request (after Android's nnapi/Types.h).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "model/Memory.h"
#include "model/Status.h"
#include "model/Types.h"

namespace nncosim {

/// Where an operand's or argument's bytes are. For CONSTANT_COPY the pool index is unused and
/// offset/length index Model::operandValues; for CONSTANT_REFERENCE and request POOL arguments
/// they index pools[poolIndex]. `pointer` is used only by request POINTER arguments.
struct DataLocation {
    std::variant<const void*, void*> pointer = static_cast<const void*>(nullptr);
    uint32_t poolIndex = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    uint32_t padding = 0;
};

struct SymmPerChannelQuantParams {
    std::vector<float> scales;
    uint32_t channelDim = 0;
};

/// Per-channel quantization for TENSOR_QUANT8_SYMM_PER_CHANNEL, raw bytes for extension types.
using ExtraParams = std::variant<std::monostate, SymmPerChannelQuantParams, std::vector<uint8_t>>;

struct Operand {
    OperandType type = OperandType::TENSOR_FLOAT32;
    std::vector<uint32_t> dimensions;  ///< 0 = unknown; empty = scalar or unknown rank
    float scale = 0.0f;
    int32_t zeroPoint = 0;
    OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
    DataLocation location;
    ExtraParams extraParams;
};

struct Operation {
    OperationType type = OperationType::ADD;
    std::vector<uint32_t> inputs;
    std::vector<uint32_t> outputs;
};

struct Subgraph {
    std::vector<Operand> operands;
    std::vector<Operation> operations;  ///< must be in a topological order
    std::vector<uint32_t> inputIndexes;
    std::vector<uint32_t> outputIndexes;
};

struct ExtensionNameAndPrefix {
    std::string name;
    uint16_t prefix = 0;
};

struct Model {
    Subgraph main;
    std::vector<Subgraph> referenced;    ///< targets of SUBGRAPH operands (IF/WHILE bodies)
    std::vector<uint8_t> operandValues;  ///< CONSTANT_COPY data
    std::vector<SharedMemory> pools;     ///< CONSTANT_REFERENCE data
    bool relaxComputationFloat32toFloat16 = false;
    std::vector<ExtensionNameAndPrefix> extensionNameToPrefix;
};

struct Request {
    struct Argument {
        enum class LifeTime : int32_t { POOL = 0, NO_VALUE = 1, POINTER = 2 };
        LifeTime lifetime = LifeTime::POOL;
        DataLocation location;
        std::vector<uint32_t> dimensions;  ///< empty = as in the model
    };
    /// A pool is shared memory or the token of a driver-managed buffer (IDevice::allocate).
    using MemoryPool = std::variant<SharedMemory, MemoryDomainToken>;

    std::vector<Argument> inputs;
    std::vector<Argument> outputs;
    std::vector<MemoryPool> pools;
};

/// A tensor's actual shape and its bytes (row-major, element type given by its operand): how
/// inputs, outputs and intermediates travel between the CTS reader, golden and the driver.
struct TensorData {
    std::vector<uint32_t> dimensions;
    std::vector<uint8_t> bytes;
};

// Shape helpers shared by every layer.
/// What elementCount and byteSize return when the count does not fit in 64 bits: larger than
/// any limit, so every size check against it fails instead of wrapping around to a small size.
inline constexpr uint64_t kSizeOverflow = UINT64_MAX;
/// Number of elements; 1 for scalars; 0 when a dimension is unknown; kSizeOverflow on overflow.
uint64_t elementCount(const std::vector<uint32_t>& dims);
/// Bytes of an operand of this type and shape (element size × count); 0 when unknown;
/// kSizeOverflow on overflow.
uint64_t byteSize(OperandType type, const std::vector<uint32_t>& dims);
/// The least number of bytes any operand of this type and partly known shape can have
/// (unknown dimensions counted as 1): what the 32-bit size limit is checked against.
uint64_t knownByteSize(OperandType type, const std::vector<uint32_t>& dims);
/// "12 bytes", "6.0 GiB (6442450944 bytes)", "more than 2^64 bytes" for kSizeOverflow.
std::string byteSizeText(uint64_t bytes);
/// The largest byte size an operand may have: NNAPI keeps every length in 32 bits.
inline constexpr uint64_t kMaxOperandBytes = UINT32_MAX;
/// What the tools let one model's tensors take by default (--memory-limit changes it): a third
/// of a 24 GiB machine, so that two parallel jobs never meet the OOM killer.
inline constexpr uint64_t kDefaultMemoryLimitBytes = uint64_t{8} << 30;
/// Refuses, before anything is allocated, a model whose tensors of known size (every operand
/// of every subgraph, unknown dimensions counted as 1) need more than `limitBytes` in all:
/// RESOURCE_EXHAUSTED_PERSISTENT naming the largest operand, its size and the total.
Status checkMemoryLimit(const Model& model, uint64_t limitBytes);
bool hasUnknownDimensions(const Operand& operand);
/// A printable shape, e.g. "[1,2,0,3]".
std::string toString(const std::vector<uint32_t>& dims);

/// Reads a constant operand's bytes (CONSTANT_COPY or CONSTANT_REFERENCE); null otherwise or
/// when the location is out of bounds.
const uint8_t* constantData(const Model& model, const Operand& operand);

}  // namespace nncosim
