// What `nncosim run` does with one model: execute it on a backend through the host runtime,
// compare every output with the golden, and on a mismatch find the first operation whose
// results diverge and dump the waves of that operation alone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/Accuracy.h"
#include "model/CtsReader.h"
#include "sim/Cosim.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim {

struct RunOptions {
    Placement placement = Placement::kAuto;
    /// The application's ExecutionPreference (RuntimeOptions::preference).
    ExecutionPreference preference = kDefaultExecutionPreference;
    bool compareGolden = true;
    /// On a divergence on the NPU, write the waves of the diverging operation here (empty: no
    /// waves).
    std::string wavesDir;
    /// NpuProfiler sampling for per-operation figures (0: per partition only).
    uint64_t sampleCycles = 256;
    bool findDivergence = true;
    /// The nncosim executable run for the waves (tracing is fixed when a process creates its
    /// platform, so the window is dumped by a process of its own) and the arguments it needs
    /// to see the same hardware (e.g. the fault options).
    std::string executable = "/proc/self/exe";
    std::vector<std::string> childArgs;
    /// `nncosim run` arguments that repeat this run exactly (model, test, backend, inputs,
    /// sampling): when the diverging operation behaves alone, its window inside this run is
    /// dumped by repeating the run (empty: no such fallback).
    std::vector<std::string> rerunArgs;
    /// Lockstep co-simulation: the process's NPU must be a sim::CosimPlatform with lockstep on
    /// (openNpu with PlatformConfig::cosim); the first divergence is reported in
    /// RunReport::cosim with waves of its descriptor (into wavesDir, "waves" when empty).
    bool cosim = false;
    /// Fast-forward: the main-graph operations before this one run on the functional model, the
    /// rest on the RTL (the process's NPU must be a sim::CosimPlatform).
    std::optional<uint32_t> rtlFrom;
};

struct TensorStats {
    uint64_t elements = 0;
    double min = 0.0, max = 0.0, mean = 0.0;
};

/// One tensor of the device compared with the golden's.
struct TensorCheck {
    std::string role;  ///< "output 0", "input 1"...
    uint32_t operand = 0;
    OperandType type = OperandType::TENSOR_FLOAT32;
    std::vector<uint32_t> shape;        ///< the device's
    std::vector<uint32_t> goldenShape;  ///< empty when not compared
    std::string origin;                 ///< where an operation input comes from ("constant"...)
    std::optional<TensorStats> device, golden;
    std::optional<Comparison> comparison;  ///< absent when not compared or shapes differ
    uint64_t maxUlpError = 0;              ///< float32 and float16 only
    bool compared = false;
    bool ok() const {
        return !compared || (shape == goldenShape && comparison && comparison->ok());
    }
};

struct Divergence {
    uint32_t operation = 0;
    OperationType type = OperationType::ADD;
    bool npu = false;
    /// How intermediates were made visible: "same partitions" (every result a partition
    /// output) or "one operation per partition".
    std::string method;
    uint32_t matchedBefore = 0;  ///< operations compared before it, all matching
    std::vector<TensorCheck> inputs, outputs;
};

struct WavesReport {
    std::string model;  ///< the operation alone as a model file (reproducer)
    std::string fst, gtkw, png;
    std::string command;     ///< how the waves were made (re-runnable)
    uint64_t jobCycles = 0;  ///< the operation's job alone, doorbell to interrupt
    bool reproducesAlone = false;
    /// Where the dump is: from the doorbell of the operation's job alone (windowStart 0) when
    /// it diverges alone, else from platform cycle windowStart of the repeated run (the
    /// operation's share of its partition's job, widened by one sampling period each side).
    uint64_t windowStart = 0;
    uint64_t windowCycles = 0;
    std::string error;  ///< why there are no waves
};

/// What lockstep co-simulation (and fast-forward) did, and the first divergence it found.
struct CosimReport {
    bool lockstep = false;
    std::optional<uint32_t> rtlFrom;  ///< main-graph operation the RTL started at
    sim::CosimStats stats;
    bool diverged = false;
    // The first divergence (when diverged).
    uint32_t partition = 0;
    std::optional<uint32_t> operation;  ///< main-graph operation of the descriptor's TAG
    OperationType type = OperationType::ADD;
    uint32_t descriptor = 0;
    std::string opcode;
    uint32_t flags = 0;
    std::string kind;     ///< output, stray write, missing retirement, job end
    std::string tile;     ///< the descriptor's tile in the operation's output
    std::string element;  ///< the first differing element
    uint32_t address = 0;
    int rtlValue = 0, modelValue = 0;
    uint64_t firstCycle = 0, retireCycle = 0, wrongWriteCycle = 0;
    std::string note;
    std::vector<sim::CosimDescriptor> jobDescriptors;
    std::optional<WavesReport> waves;
};

struct RunReport {
    std::string modelName;
    std::string backend;
    ExecutionPreference preference = kDefaultExecutionPreference;
    ExecutionRecord record;
    double wallSeconds = 0.0;
    uint64_t clockPeriodPs = 0;      ///< 0 when the NPU was not used
    uint32_t dramBytesPerCycle = 0;  ///< the NPU platform's DRAM bandwidth; 0: not used
    std::string npu;                 ///< "rtl" or "func" when the NPU was used
    bool cyclesEstimated = false;    ///< the functional model's cycles: cost-model estimates
    bool compared = false;
    std::vector<TensorCheck> outputs;
    /// The values of the main graph's outputs, in order: the device's, and the golden's when
    /// compared.
    std::vector<TensorData> outputValues, goldenValues;
    bool divergenceSearched = false;
    std::optional<Divergence> divergence;
    std::string divergenceNote;  ///< why no divergence is named despite a mismatch
    std::optional<WavesReport> waves;
    std::optional<CosimReport> cosim;
    bool passed() const;
};

/// Resolves `--rtl-from`'s spelling: an operation index ("42"), or an operation type with an
/// optional occurrence ("FULLY_CONNECTED" is the first, "CONV_2D:3" the fourth, "CONV_2D:-1" the
/// last). Fails with INVALID_ARGUMENT naming what the model has.
Result<uint32_t> resolveOperation(const Model& model, const std::string& spec);

/// Random inputs for every main-graph input from `seed`: floats uniform in [-1, 1], quantized
/// types over their whole range, int32 in [0, 4), booleans. Fails with INVALID_ARGUMENT for an
/// input of unknown dimensions.
Result<std::vector<TensorData>> randomModelInputs(const Model& model, uint32_t seed);

/// Compares a device tensor with the golden's: quantized and integer types identical, floats
/// by the CTS float rule (relaxed for relaxed or float16 models).
TensorCheck checkTensor(const std::string& role, uint32_t index, const Operand& operand,
                        bool relaxed, const TensorData& device, const TensorData* golden);

/// A fault of the NPU (sim::FaultOptions) from the `--fault` spelling: "write-bit:N[=0|1]" (a
/// DRAM write-data bit stuck at 1 unless =0), "requant-bit:N[=0|1]" (a requantization output
/// bit stuck) or "drop-write-beat:N". Fails with INVALID_ARGUMENT naming the accepted forms.
Result<sim::FaultOptions> parseFaultSpec(const std::string& spec);

/// Runs `model` on `inputs` as `options` say. Fails only when the model cannot run at all.
Result<RunReport> runModel(const std::string& name, const Model& model,
                           const std::vector<TensorData>& inputs, const RunOptions& options);

/// The coordinates of element `flat` (row-major) of a tensor of `dims`, e.g. "[0,12,3,40]".
std::string coordinates(const std::vector<uint32_t>& dims, uint64_t flat);

/// The readable report.
std::string formatReport(const RunReport& report);
/// The same as JSON.
nlohmann::json reportJson(const RunReport& report);

}  // namespace nncosim
