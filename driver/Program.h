// The compiled form of a model: the NPU's command descriptors, the constants they read (packed
// weight streams, lookup tables, constant operands) and the layout of one job's device memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/NpuRegisters.h"
#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::driver {

/// What a compiled program depends on besides its model, so what anything kept from programs
/// (compilation caches, the calibration record behind the capabilities) must match: the
/// compiler's version and the NPU geometry it compiled for. Bump kCompilerVersion whenever
/// lowering changes what a program holds or how long it runs.
struct CompilerTarget {
    uint32_t compilerVersion = 0;
    uint32_t arrayRows = 0;
    uint32_t arrayCols = 0;
    uint32_t dramBusBytes = 0;
    uint32_t spadWords = 0;
    uint32_t accDepth = 0;
};
bool operator==(const CompilerTarget& a, const CompilerTarget& b);
inline bool operator!=(const CompilerTarget& a, const CompilerTarget& b) {
    return !(a == b);
}
/// E.g. "compiler 2, 16x16 array, 16-byte bus, 4096-word scratchpad, 1024-entry accumulators".
std::string compilerTargetText(const CompilerTarget& target);

inline constexpr uint32_t kCompilerVersion = 12;
/// This driver's compiler and NPU.
inline constexpr CompilerTarget kCompilerTarget{kCompilerVersion, npu::kArrayRows,
                                                npu::kArrayCols,  npu::kDramBusBytes,
                                                npu::kSpadWords,  npu::kAccDepth};

/// A model input or output in the job's memory.
struct ProgramIo {
    uint32_t offset = 0;  ///< arena-relative byte address
    uint32_t size = 0;    ///< bytes, as the request holds them
    std::vector<uint32_t> dimensions;
    /// A relaxed model's float32 tensor, held on the device as binary16 (size / 2 bytes there):
    /// the runtime rounds it on the way in and widens it on the way out.
    bool binary16OnDevice = false;
};

/// `count` float32 values as binary16, each rounded to nearest even (a relaxed model's
/// constants and inputs on the device).
std::vector<uint8_t> floatsToBinary16(const uint8_t* floats, size_t count);
/// binary16 values widened to float32, exactly.
std::vector<uint8_t> binary16ToFloats(const std::vector<uint8_t>& halves);

/// One job's device memory is an arena, laid out as
///   [inputs, outputs, intermediates][constants][descriptor chain][completion record]
/// Every address in `descriptors` is relative to the arena's base; the runtime adds the base
/// when it writes the chain, and sets the job's DMA window to exactly the arena.
struct Program {
    std::vector<npu::Descriptor> descriptors;  ///< TAG = index of the model operation
    std::vector<uint8_t> constants;            ///< placed at constantsOffset
    std::vector<ProgramIo> inputs;             ///< one per model input
    std::vector<ProgramIo> outputs;            ///< one per model output
    uint32_t constantsOffset = 0;              ///< arena-relative address of the constants
    uint32_t descriptorOffset = 0;             ///< arena-relative address of the chain
    uint32_t completionOffset = 0;
    uint32_t arenaSize = 0;
    uint64_t estimatedCycles = 0;
    std::vector<std::string> operationNames;  ///< per model operation, for dumps
};

/// The program without its constants (which the data cache holds) as bytes.
std::vector<uint8_t> serializeProgram(const Program& program);
/// Rebuilds a program from serializeProgram's bytes and its constants; fails with
/// GENERAL_FAILURE on any inconsistency (never trusts a size or an offset).
Result<Program> deserializeProgram(const std::vector<uint8_t>& bytes,
                                   std::vector<uint8_t> constants);

/// A readable listing: memory layout, then every descriptor with its fields and tile counts
/// per operation, and the estimated cycles.
std::string dumpProgram(const Program& program);

}  // namespace nncosim::driver
