// Canonical NNAPI HAL types (after Android's nnapi/Types.h), numeric values as in NNAPI.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/OperationList.h"

namespace nncosim {

/// Status codes of the HAL contract (values as in ErrorStatus.aidl).
enum class ErrorStatus : int32_t {
    NONE = 0,
    DEVICE_UNAVAILABLE = 1,
    GENERAL_FAILURE = 2,
    OUTPUT_INSUFFICIENT_SIZE = 3,
    INVALID_ARGUMENT = 4,
    MISSED_DEADLINE_TRANSIENT = 5,
    MISSED_DEADLINE_PERSISTENT = 6,
    RESOURCE_EXHAUSTED_TRANSIENT = 7,
    RESOURCE_EXHAUSTED_PERSISTENT = 8,
    DEAD_OBJECT = 10000,
};

enum class OperandType : int32_t {
    FLOAT32 = 0,
    INT32 = 1,
    UINT32 = 2,
    TENSOR_FLOAT32 = 3,
    TENSOR_INT32 = 4,
    TENSOR_QUANT8_ASYMM = 5,
    BOOL = 6,
    TENSOR_QUANT16_SYMM = 7,
    TENSOR_FLOAT16 = 8,
    TENSOR_BOOL8 = 9,
    FLOAT16 = 10,
    TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    TENSOR_QUANT16_ASYMM = 12,
    TENSOR_QUANT8_SYMM = 13,
    TENSOR_QUANT8_ASYMM_SIGNED = 14,
    SUBGRAPH = 15,
    OEM = 10000,
    TENSOR_OEM_BYTE = 10001,
};

enum class OperationType : int32_t {
#define NN_OPERATION_ENUMERATOR(name, stem, value) name = value,
    NN_FOR_EACH_OPERATION(NN_OPERATION_ENUMERATOR)
#undef NN_OPERATION_ENUMERATOR
};

/// NNAPI feature levels; the model's minimum level is what validation derives.
enum class FeatureLevel : int32_t {
    kV1_0 = 1,  // HAL 1.0, Android O-MR1
    kV1_1 = 2,
    kV1_2 = 3,
    kV1_3 = 4,
    kAidlV1 = 5,  // Android S
    kAidlV2 = 6,  // Android T
    kAidlV3 = 7,
    kAidlV4 = 8,
    kExperimental = 1000,
};

enum class OperandLifeTime : int32_t {
    TEMPORARY_VARIABLE = 0,
    SUBGRAPH_INPUT = 1,
    SUBGRAPH_OUTPUT = 2,
    CONSTANT_COPY = 3,
    CONSTANT_REFERENCE = 4,
    NO_VALUE = 5,
    SUBGRAPH = 6,
    POINTER = 7,
};

enum class ExecutionPreference : int32_t {
    LOW_POWER = 0,
    FAST_SINGLE_ANSWER = 1,
    SUSTAINED_SPEED = 2
};
enum class Priority : int32_t { LOW = 0, MEDIUM = 1, HIGH = 2 };
enum class MeasureTiming : int32_t { NO = 0, YES = 1 };
enum class DeviceType : int32_t { UNKNOWN = 0, OTHER = 1, CPU = 2, GPU = 3, ACCELERATOR = 4 };
enum class FusedActivation : int32_t { NONE = 0, RELU = 1, RELU1 = 2, RELU6 = 3 };

/// Float bounds of a fused activation; NONE is the finite float range, as Android's reference
/// clamps (an overflow to infinity ends at the largest float).
inline std::pair<float, float> activationRangeFloat(int32_t activation) {
    switch (static_cast<FusedActivation>(activation)) {
        case FusedActivation::RELU:
            return {0.0f, std::numeric_limits<float>::max()};
        case FusedActivation::RELU1:
            return {-1.0f, 1.0f};
        case FusedActivation::RELU6:
            return {0.0f, 6.0f};
        default:
            return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    }
}

inline constexpr ExecutionPreference kDefaultExecutionPreference =
    ExecutionPreference::FAST_SINGLE_ANSWER;
inline constexpr Priority kDefaultPriority = Priority::MEDIUM;

// Extension encoding: the high 15 bits of a 31-bit type value are the model's extension
// prefix, the low 16 bits the type within the extension.
inline constexpr int kExtensionTypeBits = 16;
inline constexpr int kExtensionPrefixBits = 15;
inline constexpr uint32_t kTypeWithinExtensionMask = (1u << kExtensionTypeBits) - 1;
inline constexpr bool isExtension(int32_t type) {
    return static_cast<uint32_t>(type) > kTypeWithinExtensionMask;
}
inline constexpr uint16_t extensionPrefix(int32_t type) {
    return static_cast<uint16_t>(static_cast<uint32_t>(type) >> kExtensionTypeBits);
}
inline constexpr uint16_t typeWithinExtension(int32_t type) {
    return static_cast<uint16_t>(static_cast<uint32_t>(type) & kTypeWithinExtensionMask);
}
inline constexpr int32_t makeExtensionType(uint16_t prefix, uint16_t type) {
    return static_cast<int32_t>((static_cast<uint32_t>(prefix) << kExtensionTypeBits) | type);
}
inline bool isExtension(OperandType t) {
    return isExtension(static_cast<int32_t>(t));
}
inline bool isExtension(OperationType t) {
    return isExtension(static_cast<int32_t>(t));
}

/// The clock of deadlines: the boot clock the HAL names (CLOCK_BOOTTIME: monotonic, and it keeps
/// counting while the system is suspended, unlike steady_clock).
struct BootClock {
    using rep = int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<BootClock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept;
};

// Time: deadlines are points on the boot clock; durations are nanoseconds.
using Clock = BootClock;
using TimePoint = Clock::time_point;
using OptionalTimePoint = std::optional<TimePoint>;
using Duration = std::chrono::nanoseconds;
using OptionalDuration = std::optional<Duration>;

/// WHILE loop timeout of a request: default 2 s, at most 15 s (NNAPI's constants).
inline constexpr Duration kDefaultLoopTimeoutDuration = std::chrono::seconds(2);
inline constexpr Duration kMaxLoopTimeoutDuration = std::chrono::seconds(15);

struct Timing {
    OptionalDuration timeOnDevice;  ///< absent when not measured
    OptionalDuration timeInDriver;
};

struct OutputShape {
    std::vector<uint32_t> dimensions;
    bool isSufficient = true;
};

struct PerformanceInfo {
    float execTime = std::numeric_limits<float>::max();  ///< relative to the CPU; lower is better
    float powerUsage = std::numeric_limits<float>::max();
};

struct Capabilities {
    struct OperandPerformance {
        OperandType type;
        PerformanceInfo info;
    };
    PerformanceInfo relaxedFloat32toFloat16PerformanceScalar;
    PerformanceInfo relaxedFloat32toFloat16PerformanceTensor;
    std::vector<OperandPerformance> operandPerformance;  ///< sorted by type
    PerformanceInfo ifPerformance;
    PerformanceInfo whilePerformance;
};

struct Extension {
    struct OperandTypeInformation {
        uint16_t type;
        bool isTensor;
        uint32_t byteSize;
    };
    std::string name;  ///< reverse-domain vendor name, e.g. "com.nncosim.npu"
    std::vector<OperandTypeInformation> operandTypes;
};

struct BufferRole {
    uint32_t modelIndex;  ///< index into the list of prepared models given to allocate()
    uint32_t ioIndex;     ///< input or output index of that model
    float probability;    ///< in (0, 1]
};

struct BufferDesc {
    std::vector<uint32_t> dimensions;
};

/// Token of a driver-managed buffer, usable as a request memory pool. 0 is never valid.
using MemoryDomainToken = uint32_t;

/// Cache token length of prepareModel / prepareModelFromCache (BYTE_SIZE_OF_CACHE_TOKEN).
inline constexpr size_t kByteSizeOfCacheToken = 32;
inline constexpr uint32_t kMaxNumberOfCacheFiles = 32;

// Names of enum values as NNAPI spells them (used by the JSON formats and messages).
std::string nameOf(ErrorStatus v);
std::string nameOf(OperandType v);
std::string nameOf(OperationType v);
std::string nameOf(OperandLifeTime v);
std::string nameOf(FeatureLevel v);
std::optional<OperandType> operandTypeFromString(std::string_view name);
std::optional<OperationType> operationTypeFromString(std::string_view name);
std::optional<OperandLifeTime> lifeTimeFromString(std::string_view name);
std::optional<FeatureLevel> featureLevelFromString(std::string_view name);  // "V1_0".."AIDL_V3"

/// All operation types NNAPI defines (0..105, OEM_OPERATION, DENSIFY), in value order.
const std::vector<OperationType>& allOperationTypes();

// Operand type properties.
bool isValidOperandType(OperandType t);  ///< a non-extension NNAPI type
bool isTensorType(OperandType t);
bool isScalarType(OperandType t);  ///< FLOAT32, INT32, UINT32, BOOL, FLOAT16, SUBGRAPH, OEM
bool isQuantizedType(OperandType t);
bool isFloatType(OperandType t);  ///< FLOAT32, FLOAT16, TENSOR_FLOAT32, TENSOR_FLOAT16
/// Bytes of one element; 0 for SUBGRAPH and OEM types of unknown size.
uint32_t elementSize(OperandType t);

}  // namespace nncosim
