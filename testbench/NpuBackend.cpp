// The NPU backends: the driver alone (`npu`) and the host runtime partitioning between the NPU
// and the golden (`auto`).
#include "driver/Callbacks.h"
#include "driver/IPreparedModel.h"
#include "model/RequestIo.h"
#include "model/Validation.h"
#include "testbench/Backend.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim {
namespace {

class NpuPreparedModel : public PreparedBackendModel {
  public:
    explicit NpuPreparedModel(driver::SharedPreparedModel prepared)
        : mPrepared(std::move(prepared)) {}

    ExecutionOutcome execute(const Request& request, Duration loopTimeout) override {
        driver::ExecutionResult result =
            mPrepared->execute(request, MeasureTiming::NO, {}, loopTimeout);
        return {std::move(result.status), std::move(result.outputShapes)};
    }

  private:
    const driver::SharedPreparedModel mPrepared;
};

class NpuBackend : public Backend {
  public:
    std::string name() const override { return "npu"; }

    Result<bool> supportsModel(const Model& model) override {
        auto npu = openNpu();
        if (!npu) return npu.status();
        auto supported = (*npu)->device->getSupportedOperations(model);
        if (!supported) return supported.status();
        for (bool s : *supported) {
            if (!s) return false;
        }
        return true;
    }

    Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) override {
        auto npu = openNpu();
        if (!npu) return npu.status();
        auto prepared = driver::prepareModelBlocking(*(*npu)->device, model);
        if (!prepared) return prepared.status();
        return std::unique_ptr<PreparedBackendModel>(new NpuPreparedModel(*prepared));
    }
};

class AutoPreparedModel : public PreparedBackendModel {
  public:
    explicit AutoPreparedModel(std::unique_ptr<HostRuntime> runtime)
        : mRuntime(std::move(runtime)) {}

    ExecutionOutcome execute(const Request& request, Duration loopTimeout) override {
        const Model& model = mRuntime->model();
        ExecutionOutcome out;
        out.status = validateRequest(request, model);
        if (!out.status.ok()) return out;
        auto inputs = readRequestInputs(model, request);
        if (!inputs) return {inputs.status(), {}};
        auto outputs = mRuntime->execute(*inputs, nullptr, loopTimeout);
        if (!outputs) return {outputs.status(), {}};
        out.status = writeRequestOutputs(model, request, *outputs, &out.outputShapes);
        return out;
    }

  private:
    const std::unique_ptr<HostRuntime> mRuntime;
};

class AutoBackend : public Backend {
  public:
    std::string name() const override { return "auto"; }

    Result<bool> supportsModel(const Model& model) override {
        auto level = validateModel(model);
        if (!level) return level.status();
        return true;
    }

    Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) override {
        auto runtime = HostRuntime::create(model, {});
        if (!runtime) return runtime.status();
        return std::unique_ptr<PreparedBackendModel>(new AutoPreparedModel(std::move(*runtime)));
    }
};

}  // namespace

std::unique_ptr<Backend> makeNpuBackend() {
    return std::make_unique<NpuBackend>();
}

std::unique_ptr<Backend> makeAutoBackend() {
    return std::make_unique<AutoBackend>();
}

}  // namespace nncosim
