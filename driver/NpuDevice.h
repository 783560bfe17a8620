// The NNAPI device on the NPU: the IDevice implementation (with its prepared models, bursts,
// reusable executions and buffers) over sim/'s hardware-access interface. This and the I*.h
// interfaces are the device's API; the implementation's headers (DeviceCore.h, NpuPreparedModel.h,
// NpuExecution.h, NpuBurst.h, NpuBuffer.h, BusyGuard.h) are internal to the driver.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "driver/Cache.h"
#include "driver/Calibration.h"
#include "driver/EnergyModel.h"
#include "driver/HardwareAccess.h"
#include "driver/IDevice.h"

namespace nncosim::driver {

struct DeviceOptions {
    std::string name = "nncosim-npu";
    /// Key of the compilation-cache MAC. A device must keep one key for the cache files it
    /// writes to be accepted again; absent: a random key per device object, so caches written
    /// by another device object are rejected.
    std::optional<CacheKey> cacheKey;
    /// A file keeping the cache key across restarts (loadOrCreateCacheKey), used when cacheKey
    /// is absent; empty: none.
    std::string cacheKeyFile;
    /// Priority aging of the device queue (see DeviceQueue).
    Duration agingQuantum = std::chrono::milliseconds(100);
    /// The energy model's parameters behind Capabilities::powerUsage (driver/Calibration.h).
    EnergyParameters energy;
    /// The calibration run behind Capabilities' figures. One measured with another compiler or
    /// NPU geometry (checkCalibration) gives "no information", and makeNpuDevice says why on
    /// stderr.
    CalibrationRun calibration = kQuant8Calibration;
    /// The same for float32 tensors.
    CalibrationRun floatCalibration = kFloat32Calibration;
    /// The same for relaxed models and float16 tensors (binary16 on the device).
    CalibrationRun relaxedCalibration = kRelaxedCalibration;
};

/// A device driving `hardware`. Fails with DEVICE_UNAVAILABLE when the hardware is not the NPU
/// this driver was built for. The device owns the hardware: at most one device may drive one
/// HardwareAccess (its queue is what serializes jobs), so processes share one device object.
Result<SharedDevice> makeNpuDevice(std::shared_ptr<HardwareAccess> hardware,
                                   DeviceOptions options = {});

}  // namespace nncosim::driver
