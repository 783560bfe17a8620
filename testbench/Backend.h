// What the conformance runner and `nncosim run` execute models on: the golden reference on the
// CPU, the driver on the NPU, or the host runtime partitioning between them. The interface
// mirrors the HAL: prepare a model once, then execute requests on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

struct ExecutionOutcome {
    Status status;
    std::vector<OutputShape> outputShapes;  ///< filled on success and on OUTPUT_INSUFFICIENT_SIZE
};

class PreparedBackendModel {
  public:
    virtual ~PreparedBackendModel() = default;
    /// Executes a request (validated by the callee) and writes its outputs.
    virtual ExecutionOutcome execute(const Request& request, Duration loopTimeout) = 0;
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    /// Whether every operation of the model's main graph can run on this backend.
    virtual Result<bool> supportsModel(const Model& model) = 0;
    virtual Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) = 0;
    /// Whether executions report output shapes and accept short output buffers (the CTS
    /// runner's dynamic-shape and insufficient-buffer variants need both).
    virtual bool reportsOutputShapes() const { return true; }
    /// Whether executions write the request's own output buffers, so that one too short for
    /// its output is OUTPUT_INSUFFICIENT_SIZE even when the model fixes its shape (false when
    /// the backend moves the request's tensors into buffers of its own).
    virtual bool writesRequestOutputs() const { return true; }
};

/// The HAL execution path the `npu` backend runs each execution on.
enum class ExecutionPath { SYNC, ASYNC, FENCED, BURST, REUSABLE };
/// Where the `npu` backend's requests keep their tensors: the caller's shared memory, or
/// driver-managed buffers (IDevice::allocate) filled with copyFrom and read with copyTo.
enum class RequestMemory { SHARED, DEVICE };

const char* nameOf(ExecutionPath path);
const char* nameOf(RequestMemory memory);

/// The Eigen golden reference executor on the CPU.
std::unique_ptr<Backend> makeGoldenBackend();

/// The driver on the NPU (the process's platform, HostRuntime.h's openNpu): supports a model
/// when the driver supports every operation; models are prepared with `preference`, requests go
/// to the driver as they are.
std::unique_ptr<Backend> makeNpuBackend(
    ExecutionPath path = ExecutionPath::SYNC, RequestMemory memory = RequestMemory::SHARED,
    ExecutionPreference preference = kDefaultExecutionPreference);

/// The host runtime (HostRuntime.h): the NPU where the driver supports an operation and its
/// figures for `preference` beat the CPU's, the golden on the CPU for the rest, as Android's
/// runtime partitions a model (RuntimeOptions::preference).
std::unique_ptr<Backend> makeAutoBackend(
    ExecutionPreference preference = kDefaultExecutionPreference);

}  // namespace nncosim
