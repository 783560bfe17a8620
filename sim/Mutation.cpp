// The mutation build's selector and activation probe: the DPI functions the schemata's
// npu_mut_pkg imports (sim/mutation/npu_mutate.py) and what the testbench reads of them.
#include "sim/Mutation.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#if NNCOSIM_MUTATION
#include "Vnpu_top__Dpi.h"
#endif

namespace nncosim::sim::mutation {
namespace {

// Mutant ids the probe can record (the generator numbers them from 1; a few thousand exist).
constexpr uint32_t kMaxMutants = 1u << 17;

std::array<std::atomic<bool>, kMaxMutants>& activations() {
    static auto* seen = new std::array<std::atomic<bool>, kMaxMutants>{};  // outlives the models
    return *seen;
}

// Each process of a probe run (a test and the nncosim workers it starts) writes its own file,
// PATH.PID.
void writeActivations() {
    const char* path = std::getenv(kProbeOutVariable);
    if (!path || !*path) return;
    std::ofstream out(std::string(path) + "." + std::to_string(getpid()));
    out << "# cycles " << cyclesSimulated() << "\n";
    for (uint32_t id : activated()) out << id << "\n";
}

uint32_t readSelection() {
    const char* value = std::getenv(kSelectVariable);
    if (!value || !*value) return 0;
    const std::string text(value);
    if (text == "probe") {
        std::atexit(writeActivations);
        return kProbe;
    }
    char* end = nullptr;
    const unsigned long id = std::strtoul(value, &end, 10);
    return (end && *end == '\0' && id < kProbe) ? static_cast<uint32_t>(id) : 0;
}

}  // namespace

bool isMutationBuild() {
#if NNCOSIM_MUTATION
    return true;
#else
    return false;
#endif
}

std::string manifestPath() {
#if NNCOSIM_MUTATION
    return NNCOSIM_MUTANTS_JSON;
#else
    return {};
#endif
}

uint32_t selected() {
    static const uint32_t selection = readSelection();
    return selection;
}

std::vector<uint32_t> activated() {
    std::vector<uint32_t> ids;
    const auto& seen = activations();
    for (uint32_t id = 0; id < kMaxMutants; ++id) {
        if (seen[id].load(std::memory_order_relaxed)) ids.push_back(id);
    }
    return ids;
}

std::atomic<uint64_t>& cycleCount() {
    static std::atomic<uint64_t> count{0};
    return count;
}

uint64_t cycleLimit() {
    static const uint64_t limit = [] {
        const char* value = std::getenv(kCycleLimitVariable);
        return value && *value ? std::strtoull(value, nullptr, 10) : 0ull;
    }();
    return limit;
}

void countCycles(uint64_t cycles) {
    const uint64_t total = cycleCount() += cycles;
    const uint64_t limit = cycleLimit();
    if (limit != 0 && total > limit) {
        std::fprintf(stderr, "nncosim: %s: the NPU simulated %llu cycles, more than %s=%llu\n",
                     kHangMessage, static_cast<unsigned long long>(total), kCycleLimitVariable,
                     static_cast<unsigned long long>(limit));
        std::fflush(stderr);
        std::_Exit(kHangExitStatus);
    }
}

uint64_t cyclesSimulated() {
    return cycleCount().load();
}

void recordActivation(uint32_t id) {
    if (id < kMaxMutants) activations()[id].store(true, std::memory_order_relaxed);
}

}  // namespace nncosim::sim::mutation

#if NNCOSIM_MUTATION
// The schemata's npu_mut_pkg: its selector, read once per model when it starts...
unsigned int npu_mut_selected() {
    return nncosim::sim::mutation::selected();
}
// ...and, in a probe run, each mutation point whose value would differ from the original.
void npu_mut_activated(unsigned int id) {
    nncosim::sim::mutation::recordActivation(id);
}
#endif
