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

/// A model input or output in the job's memory.
struct ProgramIo {
    uint32_t offset = 0;  ///< arena-relative byte address
    uint32_t size = 0;    ///< bytes
    std::vector<uint32_t> dimensions;
};

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
