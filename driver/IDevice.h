// A device driver (canonical IDevice; HAL 1.3 IDevice.hal; AIDL IDevice).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver/HalTypes.h"

namespace nncosim::driver {

/// The driver of one device. Implementations must be thread-safe: many threads may query,
/// prepare, allocate and execute at the same time.
class IDevice {
  public:
    virtual ~IDevice() = default;

    virtual const std::string& getName() const = 0;
    /// A non-empty token identifying the driver implementation (not the feature level).
    virtual const std::string& getVersionString() const = 0;
    virtual FeatureLevel getFeatureLevel() const = 0;
    virtual DeviceType getType() const = 0;
    /// Extensions whose every operation and operand type the driver fully supports.
    virtual const std::vector<Extension>& getSupportedExtensions() const = 0;
    virtual const Capabilities& getCapabilities() const = 0;
    /// Numbers of model-cache and data-cache files one prepared model needs (both at most
    /// kMaxNumberOfCacheFiles; both 0 would mean no compilation caching).
    virtual std::pair<uint32_t, uint32_t> getNumberOfCacheFilesNeeded() const = 0;
    /// Blocks until the device is not in a bad state; GENERAL_FAILURE when it cannot recover.
    virtual Status wait() const = 0;

    /// One entry per main-graph operation: true only when the device executes that operation,
    /// with its operand types and parameter values, exactly (quantized results bit-identical to
    /// the reference). IF and WHILE are true only when every operation of the referenced
    /// subgraphs is. False as well when the operation's known operands (for IF and WHILE, those
    /// of any operation of the referenced subgraphs) exceed the device's memory, and when its
    /// declared output shape contradicts the shape its inputs give (prepareModel rejects such a
    /// model), so that what is claimed prepares. Must fail with INVALID_ARGUMENT for an invalid
    /// model.
    virtual Result<std::vector<bool>> getSupportedOperations(const Model& model) const = 0;

    /// Prepares `model` asynchronously (HAL 1.3 prepareModel_1_3).
    ///
    /// The arguments (model, preference, priority, deadline) must be validated synchronously:
    /// on failure the status (INVALID_ARGUMENT, or MISSED_DEADLINE_* when the deadline has
    /// already passed) must be returned and also notified to `callback` with a null model.
    /// Otherwise NONE is returned, the model is prepared in the background and `callback` must
    /// be notified exactly once. A null callback is INVALID_ARGUMENT (and cannot be notified).
    ///
    /// `priority` orders the prepared model's work on the shared device against other prepared
    /// models. When preparation cannot end before `deadline`, it must be notified with
    /// MISSED_DEADLINE_TRANSIENT or MISSED_DEADLINE_PERSISTENT.
    ///
    /// Caching: when `modelCache` and `dataCache` hold exactly the numbers of files
    /// getNumberOfCacheFilesNeeded() returns, the driver may save the prepared model to them
    /// under `token`, truncating each file first and writing at absolute offsets (the
    /// descriptors may have any offset). Other counts, unusable files or failures to save must
    /// never fail the preparation. The client may close its descriptors once the callback is
    /// notified; the driver dups the ones it uses.
    virtual Status prepareModel(const Model& model, ExecutionPreference preference,
                                Priority priority, const OptionalTimePoint& deadline,
                                const std::vector<SharedHandle>& modelCache,
                                const std::vector<SharedHandle>& dataCache, const CacheToken& token,
                                std::shared_ptr<IPreparedModelCallback> callback) const = 0;

    /// Prepares a model from cache files written by prepareModel (HAL 1.3
    /// prepareModelFromCache_1_3), with the same synchronous-validation and callback contract.
    /// Wrong numbers of cache files must fail with INVALID_ARGUMENT. Any modification of the
    /// model cache, of the data cache, a token other than the one the files were saved with,
    /// or files written by another device must be detected and fail with GENERAL_FAILURE;
    /// no content of the files may crash the driver. When the deadline passes during the call,
    /// the callback must be notified with MISSED_DEADLINE_TRANSIENT and the call must return
    /// the same status.
    virtual Status prepareModelFromCache(
        const OptionalTimePoint& deadline, const std::vector<SharedHandle>& modelCache,
        const std::vector<SharedHandle>& dataCache, const CacheToken& token,
        std::shared_ptr<IPreparedModelCallback> callback) const = 0;

    /// Allocates a driver-managed buffer for the given roles of prepared models of this
    /// device. Must fail with INVALID_ARGUMENT when: `preparedModels` is empty or holds a model
    /// of another device; there is no role; a role's model or io index is out of range, its
    /// probability is outside (0, 1] or it is given twice; the roles' operands differ in type,
    /// scale, zero point or extra parameters (extension operand types included); or the
    /// dimensions of the roles and of `desc` are incompatible. A valid request for a buffer this
    /// driver does not support (an extension operand type, more than kMaxBufferBytes) must fail
    /// with GENERAL_FAILURE. A buffer whose shape is not fully specified gets its storage when
    /// a copyFrom or an execution first sets its shape.
    virtual Result<SharedBuffer> allocate(const BufferDesc& desc,
                                          const std::vector<SharedPreparedModel>& preparedModels,
                                          const std::vector<BufferRole>& inputRoles,
                                          const std::vector<BufferRole>& outputRoles) const = 0;
};

using SharedDevice = std::shared_ptr<const IDevice>;

}  // namespace nncosim::driver
