// Device DRAM as a TLM-2.0 target: byte-addressed storage with a latency and a bandwidth.
//
// Loosely timed: b_transport moves the data at once (so later accesses see earlier writes) and
// annotates when the beat completes: reads after the latency, both kinds queued behind earlier
// beats on one data channel of bytesPerCycle. Accesses outside the memory fail with
// TLM_ADDRESS_ERROR_RESPONSE and touch nothing. transport_dbg is the host's untimed port.
#pragma once

#include <cstdint>
#include <memory>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

namespace nncosim::sim {

class DramModel : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<DramModel> socket;

    DramModel(const sc_core::sc_module_name& name, uint64_t bytes,
              const sc_core::sc_time& clockPeriod, uint32_t latencyCycles, uint32_t bytesPerCycle);
    ~DramModel() override;

    uint64_t size() const { return mBytes; }

    /// The storage, for comparisons made from inside the simulation (lockstep co-simulation),
    /// where transport_dbg would re-enter the platform.
    const uint8_t* data() const { return mData.get(); }

    /// Forgets queued bandwidth (a platform reset).
    void resetTiming() { mChannelFree = sc_core::SC_ZERO_TIME; }

  private:
    void bTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    unsigned int transportDbg(tlm::tlm_generic_payload& payload);
    bool access(tlm::tlm_generic_payload& payload);

    uint64_t mBytes;
    std::unique_ptr<uint8_t, void (*)(void*)> mData;
    sc_core::sc_time mClockPeriod;
    sc_core::sc_time mLatency;
    uint32_t mBytesPerCycle;
    sc_core::sc_time mChannelFree;  // when the data channel finishes its queued beats
};

}  // namespace nncosim::sim
