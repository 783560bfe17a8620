// The mutation build's run-time selector (docs/verification-plan.md, Mutation analysis). The
// mutation build (-DNNCOSIM_MUTATION=ON) verilates the NPU from the mutant schemata that
// sim/mutation/npu_mutate.py generates: every mutation point of the RTL guarded by
// `npu_mut_pkg::sel`, which each Verilated model reads once, when it starts, from this process's
// selection. Other builds compile the same interface and report that they are not mutation builds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nncosim::sim::mutation {

/// The environment variable a process's selection comes from: unset, empty or "0" runs the design
/// as written, "N" mutant N, "probe" the design as written while recording activations.
inline constexpr const char* kSelectVariable = "NNCOSIM_MUTANT";
/// With "probe": where the process writes the activated mutants when it exits: PATH.PID (a line
/// "# cycles N" with the cycles it simulated, then one id a line, ascending), so that the
/// processes a test starts write files of their own.
inline constexpr const char* kProbeOutVariable = "NNCOSIM_MUTANT_PROBE_OUT";
/// The selector value of a probe run (npu_mut_pkg::Probe).
inline constexpr uint32_t kProbe = 0xFFFFFFFFu;
/// When set, the most cycles this process's RTL platforms may simulate together: past it the
/// process ends with kHangExitStatus and says so, so that a mutant that hangs the NPU costs a
/// bounded simulation, not a wall-clock limit (the campaign gives each check a multiple of what
/// its probe run simulated).
inline constexpr const char* kCycleLimitVariable = "NNCOSIM_MUTANT_CYCLE_LIMIT";
inline constexpr int kHangExitStatus = 86;
/// What a process that reached the limit prints.
inline constexpr const char* kHangMessage = "simulated-cycle limit reached";

/// True in a mutation build: the platform's NPU is the mutant schemata.
bool isMutationBuild();
/// The generator's manifest of this build's mutants (mutants.json), or "" when not a mutation
/// build.
std::string manifestPath();
/// The selection of this process (kSelectVariable), read once.
uint32_t selected();
/// Mutants activated so far in this process (probe runs only), ascending.
std::vector<uint32_t> activated();
/// Counts `cycles` more simulated by an RTL platform of this process (the limit above).
void countCycles(uint64_t cycles);
/// Cycles simulated so far by this process's RTL platforms.
uint64_t cyclesSimulated();

}  // namespace nncosim::sim::mutation
