#include "sim/DramModel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace nncosim::sim {

DramModel::DramModel(const sc_core::sc_module_name& name, uint64_t bytes,
                     const sc_core::sc_time& clockPeriod, uint32_t latencyCycles,
                     uint32_t bytesPerCycle)
    : sc_core::sc_module(name),
      socket("socket"),
      mBytes(bytes),
      // calloc: untouched pages stay unallocated, so a large DRAM costs only what is used.
      mData(static_cast<uint8_t*>(std::calloc(bytes, 1)), &std::free),
      mClockPeriod(clockPeriod),
      mLatency(clockPeriod * static_cast<double>(latencyCycles)),
      mBytesPerCycle(std::max<uint32_t>(bytesPerCycle, 1)) {
    if (!mData) {
        throw std::bad_alloc();
    }
    socket.register_b_transport(this, &DramModel::bTransport);
    socket.register_transport_dbg(this, &DramModel::transportDbg);
}

DramModel::~DramModel() = default;

bool DramModel::access(tlm::tlm_generic_payload& payload) {
    const uint64_t address = payload.get_address();
    const unsigned int length = payload.get_data_length();
    if (address > mBytes || length > mBytes - address) {
        payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    uint8_t* memory = mData.get() + address;
    uint8_t* data = payload.get_data_ptr();
    const uint8_t* enables = payload.get_byte_enable_ptr();
    const unsigned int enableLength = payload.get_byte_enable_length();
    if (payload.is_read()) {
        std::memcpy(data, memory, length);
    } else if (payload.is_write()) {
        if (enables == nullptr) {
            std::memcpy(memory, data, length);
        } else {
            for (unsigned int i = 0; i < length; ++i) {
                if (enables[i % enableLength] == TLM_BYTE_ENABLED) {
                    memory[i] = data[i];
                }
            }
        }
    } else {
        payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return false;
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return true;
}

void DramModel::bTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    if (!access(payload)) {
        return;
    }
    // The beat occupies the channel for length / bandwidth cycles once earlier beats are done.
    const sc_core::sc_time now = sc_core::sc_time_stamp() + delay;
    const double cycles = static_cast<double>(payload.get_data_length()) / mBytesPerCycle;
    const sc_core::sc_time start = std::max(now, mChannelFree);
    mChannelFree = start + mClockPeriod * cycles;
    const sc_core::sc_time done = payload.is_read() ? start + mLatency : mChannelFree;
    delay = done - sc_core::sc_time_stamp();
}

unsigned int DramModel::transportDbg(tlm::tlm_generic_payload& payload) {
    return access(payload) ? payload.get_data_length() : 0;
}

}  // namespace nncosim::sim
