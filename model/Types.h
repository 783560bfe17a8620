// Canonical NNAPI HAL types (after Android's nnapi/Types.h), numeric values as in NNAPI.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
    ADD = 0,
    AVERAGE_POOL_2D = 1,
    CONCATENATION = 2,
    CONV_2D = 3,
    DEPTHWISE_CONV_2D = 4,
    DEPTH_TO_SPACE = 5,
    DEQUANTIZE = 6,
    EMBEDDING_LOOKUP = 7,
    FLOOR = 8,
    FULLY_CONNECTED = 9,
    HASHTABLE_LOOKUP = 10,
    L2_NORMALIZATION = 11,
    L2_POOL_2D = 12,
    LOCAL_RESPONSE_NORMALIZATION = 13,
    LOGISTIC = 14,
    LSH_PROJECTION = 15,
    LSTM = 16,
    MAX_POOL_2D = 17,
    MUL = 18,
    RELU = 19,
    RELU1 = 20,
    RELU6 = 21,
    RESHAPE = 22,
    RESIZE_BILINEAR = 23,
    RNN = 24,
    SOFTMAX = 25,
    SPACE_TO_DEPTH = 26,
    SVDF = 27,
    TANH = 28,
    BATCH_TO_SPACE_ND = 29,
    DIV = 30,
    MEAN = 31,
    PAD = 32,
    SPACE_TO_BATCH_ND = 33,
    SQUEEZE = 34,
    STRIDED_SLICE = 35,
    SUB = 36,
    TRANSPOSE = 37,
    ABS = 38,
    ARGMAX = 39,
    ARGMIN = 40,
    AXIS_ALIGNED_BBOX_TRANSFORM = 41,
    BIDIRECTIONAL_SEQUENCE_LSTM = 42,
    BIDIRECTIONAL_SEQUENCE_RNN = 43,
    BOX_WITH_NMS_LIMIT = 44,
    CAST = 45,
    CHANNEL_SHUFFLE = 46,
    DETECTION_POSTPROCESSING = 47,
    EQUAL = 48,
    EXP = 49,
    EXPAND_DIMS = 50,
    GATHER = 51,
    GENERATE_PROPOSALS = 52,
    GREATER = 53,
    GREATER_EQUAL = 54,
    GROUPED_CONV_2D = 55,
    HEATMAP_MAX_KEYPOINT = 56,
    INSTANCE_NORMALIZATION = 57,
    LESS = 58,
    LESS_EQUAL = 59,
    LOG = 60,
    LOGICAL_AND = 61,
    LOGICAL_NOT = 62,
    LOGICAL_OR = 63,
    LOG_SOFTMAX = 64,
    MAXIMUM = 65,
    MINIMUM = 66,
    NEG = 67,
    NOT_EQUAL = 68,
    PAD_V2 = 69,
    POW = 70,
    PRELU = 71,
    QUANTIZE = 72,
    QUANTIZED_16BIT_LSTM = 73,
    RANDOM_MULTINOMIAL = 74,
    REDUCE_ALL = 75,
    REDUCE_ANY = 76,
    REDUCE_MAX = 77,
    REDUCE_MIN = 78,
    REDUCE_PROD = 79,
    REDUCE_SUM = 80,
    ROI_ALIGN = 81,
    ROI_POOLING = 82,
    RSQRT = 83,
    SELECT = 84,
    SIN = 85,
    SLICE = 86,
    SPLIT = 87,
    SQRT = 88,
    TILE = 89,
    TOPK_V2 = 90,
    TRANSPOSE_CONV_2D = 91,
    UNIDIRECTIONAL_SEQUENCE_LSTM = 92,
    UNIDIRECTIONAL_SEQUENCE_RNN = 93,
    RESIZE_NEAREST_NEIGHBOR = 94,
    QUANTIZED_LSTM = 95,
    IF = 96,
    WHILE = 97,
    ELU = 98,
    HARD_SWISH = 99,
    FILL = 100,
    RANK = 101,
    BATCH_MATMUL = 102,
    PACK = 103,
    MIRROR_PAD = 104,
    REVERSE = 105,
    OEM_OPERATION = 10000,
    DENSIFY = 20000,  // experimental (NN_EXPERIMENTAL_FEATURE)
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

enum class ExecutionPreference : int32_t { LOW_POWER = 0, FAST_SINGLE_ANSWER = 1, SUSTAINED_SPEED = 2 };
enum class Priority : int32_t { LOW = 0, MEDIUM = 1, HIGH = 2 };
enum class MeasureTiming : int32_t { NO = 0, YES = 1 };
enum class DeviceType : int32_t { UNKNOWN = 0, OTHER = 1, CPU = 2, GPU = 3, ACCELERATOR = 4 };
enum class FusedActivation : int32_t { NONE = 0, RELU = 1, RELU1 = 2, RELU6 = 3 };

inline constexpr ExecutionPreference kDefaultExecutionPreference = ExecutionPreference::FAST_SINGLE_ANSWER;
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
inline bool isExtension(OperandType t) { return isExtension(static_cast<int32_t>(t)); }
inline bool isExtension(OperationType t) { return isExtension(static_cast<int32_t>(t)); }

// Time: deadlines are points on the steady clock; durations are nanoseconds.
using Clock = std::chrono::steady_clock;
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
/// Bytes of one element; 0 for SUBGRAPH and OEM types of unknown size.
uint32_t elementSize(OperandType t);

}  // namespace nncosim
