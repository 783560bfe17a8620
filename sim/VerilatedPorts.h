// Copying one NPU bus beat (kDramBusBytes bytes) into and out of a Verilated port: Verilator holds
// ports up to 64 bits in integers and wider ones in VlWide word arrays.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "driver/NpuRegisters.h"

namespace nncosim::sim {

template <typename Port>
void writePortBytes(Port& port, const uint8_t* bytes) {
    if constexpr (std::is_integral_v<Port>) {
        uint64_t value = 0;
        std::memcpy(&value, bytes, sizeof(Port));
        port = static_cast<Port>(value);
    } else {
        std::memcpy(port.data(), bytes, npu::kDramBusBytes);
    }
}

template <typename Port>
void readPortBytes(const Port& port, uint8_t* bytes) {
    if constexpr (std::is_integral_v<Port>) {
        const uint64_t value = port;
        std::memcpy(bytes, &value, npu::kDramBusBytes);
    } else {
        std::memcpy(bytes, port.data(), npu::kDramBusBytes);
    }
}

}  // namespace nncosim::sim
