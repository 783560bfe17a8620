// Copying NPU bus beats (kDramBusBytes bytes) and narrow fields into and out of Verilated ports:
// Verilator holds ports up to 64 bits in integers and wider ones in VlWide word arrays. A packed
// array port (one beat per memory lane or client) holds element i at bits [i * width, ...).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "driver/NpuRegisters.h"

namespace nncosim::sim {

/// Clients of the NPU's memory port (npu_core_pkg::NumClients): a request lane's ID names one,
/// and each has its own read-response port.
inline constexpr uint32_t kMemClients = 4;
inline constexpr uint32_t kMemClientIdBits = 2;  // width of a lane's client ID
static_assert(1u << kMemClientIdBits == kMemClients);

/// Writes beat `element` of a packed array of beats.
template <typename Port>
void writePortBytes(Port& port, const uint8_t* bytes, uint32_t element = 0) {
    const size_t offset = size_t{element} * npu::kDramBusBytes;
    if constexpr (std::is_integral_v<Port>) {
        uint64_t value = port;
        std::memcpy(reinterpret_cast<uint8_t*>(&value) + offset, bytes, npu::kDramBusBytes);
        port = static_cast<Port>(value);
    } else {
        std::memcpy(reinterpret_cast<uint8_t*>(port.data()) + offset, bytes, npu::kDramBusBytes);
    }
}

/// Reads beat `element` of a packed array of beats.
template <typename Port>
void readPortBytes(const Port& port, uint8_t* bytes, uint32_t element = 0) {
    const size_t offset = size_t{element} * npu::kDramBusBytes;
    if constexpr (std::is_integral_v<Port>) {
        const uint64_t value = port;
        std::memcpy(bytes, reinterpret_cast<const uint8_t*>(&value) + offset, npu::kDramBusBytes);
    } else {
        std::memcpy(bytes, reinterpret_cast<const uint8_t*>(port.data()) + offset,
                    npu::kDramBusBytes);
    }
}

/// Element `index` of a packed array port of `width`-bit elements (width at most 32).
template <typename Port>
uint32_t portElement(const Port& port, uint32_t index, uint32_t width) {
    const uint32_t lsb = index * width;
    uint64_t bits;
    if constexpr (std::is_integral_v<Port>) {
        bits = static_cast<uint64_t>(port) >> lsb;
    } else {
        const uint32_t word = lsb / 32;
        const uint32_t shift = lsb % 32;
        bits = port[word] >> shift;
        if (shift + width > 32) {
            bits |= static_cast<uint64_t>(port[word + 1]) << (32 - shift);
        }
    }
    return static_cast<uint32_t>(bits & ((uint64_t{1} << width) - 1));
}

}  // namespace nncosim::sim
