#include "model/Types.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <utility>

#include "model/Model.h"

namespace nncosim {

BootClock::time_point BootClock::now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return time_point(duration(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
}
namespace {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

#define NN_NAME(E, v)              \
    std::pair {                    \
        E::v, std::string_view(#v) \
    }

constexpr NameTable<ErrorStatus, 10> kErrorStatusNames{{
    NN_NAME(ErrorStatus, NONE),
    NN_NAME(ErrorStatus, DEVICE_UNAVAILABLE),
    NN_NAME(ErrorStatus, GENERAL_FAILURE),
    NN_NAME(ErrorStatus, OUTPUT_INSUFFICIENT_SIZE),
    NN_NAME(ErrorStatus, INVALID_ARGUMENT),
    NN_NAME(ErrorStatus, MISSED_DEADLINE_TRANSIENT),
    NN_NAME(ErrorStatus, MISSED_DEADLINE_PERSISTENT),
    NN_NAME(ErrorStatus, RESOURCE_EXHAUSTED_TRANSIENT),
    NN_NAME(ErrorStatus, RESOURCE_EXHAUSTED_PERSISTENT),
    NN_NAME(ErrorStatus, DEAD_OBJECT),
}};

constexpr NameTable<OperandType, 18> kOperandTypeNames{{
    NN_NAME(OperandType, FLOAT32),
    NN_NAME(OperandType, INT32),
    NN_NAME(OperandType, UINT32),
    NN_NAME(OperandType, TENSOR_FLOAT32),
    NN_NAME(OperandType, TENSOR_INT32),
    NN_NAME(OperandType, TENSOR_QUANT8_ASYMM),
    NN_NAME(OperandType, BOOL),
    NN_NAME(OperandType, TENSOR_QUANT16_SYMM),
    NN_NAME(OperandType, TENSOR_FLOAT16),
    NN_NAME(OperandType, TENSOR_BOOL8),
    NN_NAME(OperandType, FLOAT16),
    NN_NAME(OperandType, TENSOR_QUANT8_SYMM_PER_CHANNEL),
    NN_NAME(OperandType, TENSOR_QUANT16_ASYMM),
    NN_NAME(OperandType, TENSOR_QUANT8_SYMM),
    NN_NAME(OperandType, TENSOR_QUANT8_ASYMM_SIGNED),
    NN_NAME(OperandType, SUBGRAPH),
    NN_NAME(OperandType, OEM),
    NN_NAME(OperandType, TENSOR_OEM_BYTE),
}};

#define NN_COUNT_ONE(name, stem, value) +1
#define NN_OPERATION_NAME(name, stem, value) NN_NAME(OperationType, name),
constexpr NameTable<OperationType, 0 NN_FOR_EACH_OPERATION(NN_COUNT_ONE)> kOperationTypeNames{
    {NN_FOR_EACH_OPERATION(NN_OPERATION_NAME)}};
#undef NN_OPERATION_NAME
#undef NN_COUNT_ONE

constexpr NameTable<OperandLifeTime, 8> kLifeTimeNames{{
    NN_NAME(OperandLifeTime, TEMPORARY_VARIABLE),
    NN_NAME(OperandLifeTime, SUBGRAPH_INPUT),
    NN_NAME(OperandLifeTime, SUBGRAPH_OUTPUT),
    NN_NAME(OperandLifeTime, CONSTANT_COPY),
    NN_NAME(OperandLifeTime, CONSTANT_REFERENCE),
    NN_NAME(OperandLifeTime, NO_VALUE),
    NN_NAME(OperandLifeTime, SUBGRAPH),
    NN_NAME(OperandLifeTime, POINTER),
}};

constexpr NameTable<FeatureLevel, 9> kFeatureLevelNames{{
    {FeatureLevel::kV1_0, "V1_0"},
    {FeatureLevel::kV1_1, "V1_1"},
    {FeatureLevel::kV1_2, "V1_2"},
    {FeatureLevel::kV1_3, "V1_3"},
    {FeatureLevel::kAidlV1, "AIDL_V1"},
    {FeatureLevel::kAidlV2, "AIDL_V2"},
    {FeatureLevel::kAidlV3, "AIDL_V3"},
    {FeatureLevel::kAidlV4, "AIDL_V4"},
    {FeatureLevel::kExperimental, "EXPERIMENTAL"},
}};
#undef NN_NAME

template <typename E, size_t N>
std::string_view nameOf(const NameTable<E, N>& table, E value) {
    for (const auto& [v, name] : table)
        if (v == value) return name;
    return "<unknown>";
}

template <typename E, size_t N>
std::optional<E> valueOf(const NameTable<E, N>& table, std::string_view name) {
    for (const auto& [v, n] : table)
        if (n == name) return v;
    return std::nullopt;
}

}  // namespace

std::string nameOf(ErrorStatus v) {
    return std::string(nameOf(kErrorStatusNames, v));
}
std::string nameOf(OperandType v) {
    return std::string(nameOf(kOperandTypeNames, v));
}
std::string nameOf(OperationType v) {
    return std::string(nameOf(kOperationTypeNames, v));
}
std::string nameOf(OperandLifeTime v) {
    return std::string(nameOf(kLifeTimeNames, v));
}
std::string nameOf(FeatureLevel v) {
    return std::string(nameOf(kFeatureLevelNames, v));
}
std::optional<OperandType> operandTypeFromString(std::string_view n) {
    return valueOf(kOperandTypeNames, n);
}
std::optional<OperationType> operationTypeFromString(std::string_view n) {
    return valueOf(kOperationTypeNames, n);
}
std::optional<OperandLifeTime> lifeTimeFromString(std::string_view n) {
    return valueOf(kLifeTimeNames, n);
}
std::optional<FeatureLevel> featureLevelFromString(std::string_view n) {
    return valueOf(kFeatureLevelNames, n);
}

const std::vector<OperationType>& allOperationTypes() {
    static const std::vector<OperationType> all = [] {
        std::vector<OperationType> v;
        for (const auto& entry : kOperationTypeNames) v.push_back(entry.first);
        return v;
    }();
    return all;
}

bool isValidOperandType(OperandType t) {
    return std::any_of(kOperandTypeNames.begin(), kOperandTypeNames.end(),
                       [t](const auto& e) { return e.first == t; });
}

bool isScalarType(OperandType t) {
    switch (t) {
        case OperandType::FLOAT32:
        case OperandType::INT32:
        case OperandType::UINT32:
        case OperandType::BOOL:
        case OperandType::FLOAT16:
        case OperandType::SUBGRAPH:
        case OperandType::OEM:
            return true;
        default:
            return false;
    }
}

bool isTensorType(OperandType t) {
    return isValidOperandType(t) && !isScalarType(t);
}

bool isFloatType(OperandType t) {
    return t == OperandType::TENSOR_FLOAT32 || t == OperandType::FLOAT32 ||
           t == OperandType::TENSOR_FLOAT16 || t == OperandType::FLOAT16;
}

bool isQuantizedType(OperandType t) {
    switch (t) {
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
        case OperandType::TENSOR_QUANT16_ASYMM:
        case OperandType::TENSOR_QUANT16_SYMM:
            return true;
        default:
            return false;
    }
}

uint32_t elementSize(OperandType t) {
    switch (t) {
        case OperandType::FLOAT32:
        case OperandType::INT32:
        case OperandType::UINT32:
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_INT32:
            return 4;
        case OperandType::TENSOR_QUANT16_SYMM:
        case OperandType::TENSOR_QUANT16_ASYMM:
        case OperandType::TENSOR_FLOAT16:
        case OperandType::FLOAT16:
            return 2;
        case OperandType::BOOL:
        case OperandType::TENSOR_BOOL8:
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
        case OperandType::TENSOR_OEM_BYTE:
            return 1;
        default:
            return 0;
    }
}

uint64_t elementCount(const std::vector<uint32_t>& dims) {
    uint64_t n = 1;
    for (uint32_t d : dims) {
        if (d == 0) return 0;
        if (__builtin_mul_overflow(n, uint64_t{d}, &n)) return kSizeOverflow;
    }
    return n;
}

uint64_t byteSize(OperandType type, const std::vector<uint32_t>& dims) {
    uint64_t bytes = 0;
    return __builtin_mul_overflow(uint64_t{elementSize(type)}, elementCount(dims), &bytes)
               ? kSizeOverflow
               : bytes;
}

uint64_t knownByteSize(OperandType type, const std::vector<uint32_t>& dims) {
    std::vector<uint32_t> known;
    for (uint32_t d : dims) known.push_back(d == 0 ? 1 : d);
    return byteSize(type, known);
}

std::string byteSizeText(uint64_t bytes) {
    if (bytes == kSizeOverflow) return "more than 2^64 bytes";
    if (bytes < (uint64_t{1} << 30)) return std::to_string(bytes) + " bytes";
    char text[64];
    std::snprintf(text, sizeof(text), "%.1f GiB (%llu bytes)",
                  static_cast<double>(bytes) / (1 << 30), static_cast<unsigned long long>(bytes));
    return text;
}

Status checkMemoryLimit(const Model& model, uint64_t limitBytes) {
    uint64_t total = 0, largest = 0;
    std::string largestName;
    auto visit = [&](const Subgraph& g, const std::string& graphName) {
        for (size_t k = 0; k < g.operands.size(); ++k) {
            const Operand& operand = g.operands[k];
            if (isExtension(operand.type) || !isTensorType(operand.type)) continue;
            const uint64_t bytes = knownByteSize(operand.type, operand.dimensions);
            total = bytes > kSizeOverflow - total ? kSizeOverflow : total + bytes;
            if (bytes > largest) {
                largest = bytes;
                largestName = graphName + "operand " + std::to_string(k) + " (" +
                              nameOf(operand.type) + " " + toString(operand.dimensions) + ")";
            }
        }
    };
    visit(model.main, "");
    for (size_t i = 0; i < model.referenced.size(); ++i)
        visit(model.referenced[i], "subgraph " + std::to_string(i) + " ");
    if (total <= limitBytes) return okStatus();
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, largestName, " needs ",
                byteSizeText(largest), "; the model's tensors need ", byteSizeText(total),
                " in all, over the memory limit of ", byteSizeText(limitBytes),
                " (--memory-limit)");
}

bool hasUnknownDimensions(const Operand& operand) {
    if (isTensorType(operand.type) && operand.dimensions.empty()) return true;
    return std::any_of(operand.dimensions.begin(), operand.dimensions.end(),
                       [](uint32_t d) { return d == 0; });
}

std::string toString(const std::vector<uint32_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

const uint8_t* constantData(const Model& model, const Operand& operand) {
    const DataLocation& loc = operand.location;
    const uint64_t end = uint64_t{loc.offset} + loc.length;
    if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
        return end <= model.operandValues.size() ? model.operandValues.data() + loc.offset
                                                 : nullptr;
    }
    if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
        if (loc.poolIndex >= model.pools.size() || !model.pools[loc.poolIndex]) return nullptr;
        const Memory& pool = *model.pools[loc.poolIndex];
        return end <= pool.size() ? pool.data() + loc.offset : nullptr;
    }
    return nullptr;
}

}  // namespace nncosim
