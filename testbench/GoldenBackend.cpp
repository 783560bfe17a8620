// The golden reference as a Backend: request in, request outputs written, shapes reported.
#include "golden/Executor.h"
#include "model/RequestIo.h"
#include "model/Validation.h"
#include "testbench/Backend.h"

namespace nncosim {
namespace {

class GoldenPreparedModel : public PreparedBackendModel {
  public:
    explicit GoldenPreparedModel(Model model) : mModel(std::move(model)) {}

    ExecutionOutcome execute(const Request& request, Duration loopTimeout) override {
        ExecutionOutcome out;
        out.status = validateRequest(request, mModel);
        if (!out.status.ok()) return out;
        auto inputs = readRequestInputs(mModel, request);
        if (!inputs) return {inputs.status(), {}};
        golden::ExecuteOptions options;
        options.loopTimeout = loopTimeout;
        auto outputs = golden::execute(mModel, *inputs, options);
        if (!outputs) return {outputs.status(), {}};
        out.status = writeRequestOutputs(mModel, request, *outputs, &out.outputShapes);
        return out;
    }

  private:
    const Model mModel;
};

class GoldenBackend : public Backend {
  public:
    std::string name() const override { return "golden"; }
    Result<bool> supportsModel(const Model& model) override {
        auto level = validateModel(model);
        if (!level) return level.status();
        return true;
    }
    Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) override {
        auto level = validateModel(model);
        if (!level) return level.status();
        return std::unique_ptr<PreparedBackendModel>(new GoldenPreparedModel(model));
    }
};

}  // namespace

std::unique_ptr<Backend> makeGoldenBackend() {
    return std::make_unique<GoldenBackend>();
}

}  // namespace nncosim
