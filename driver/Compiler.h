// The compiler: which operations the NPU executes exactly, and the lowering of a model's main
// graph to an NPU program (tiling to the scratchpads and accumulator banks, weight-stream
// packing with per-channel requantization parameters, fused activations, lookup tables).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "driver/Program.h"
#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::driver {

/// Values of model inputs the compiler needs (weights and biases given as inputs), by operand
/// index of the main graph.
using InputValues = std::map<uint32_t, std::vector<uint8_t>>;

/// The main-graph input positions (indexes into Model::main.inputIndexes) whose values the
/// compiler packs into the program: weights and biases that the model passes as inputs. A model
/// with such inputs is compiled per execution, with their values.
std::vector<uint32_t> compileTimeInputs(const Model& model);

/// Whether the NPU executes main-graph operation `index` bit-exactly (the golden's
/// arithmetic): quantized 8-bit operands, NHWC layout, constant weights and parameters, and
/// parameter values within the descriptor fields. The model must be valid.
Status checkOperationSupported(const Model& model, uint32_t index);

/// Lowers the main graph of a valid model whose every operation is supported. `inputShapes`
/// gives one fully specified shape per model input (empty: the model's own dimensions);
/// `inputValues` the values of every compileTimeInputs() operand.
/// Fails with GENERAL_FAILURE when a shape met at compile time exceeds what the descriptors
/// can express, or for IF and WHILE, which run job by job (ControlFlow.h).
Result<Program> compileModel(const Model& model,
                             const std::vector<std::vector<uint32_t>>& inputShapes,
                             const InputValues& inputValues = {});

/// The programs of one model compiled when first needed, per input shapes and values of the
/// compile-time inputs; the last kMaxVariants are kept. Thread-safe. `model` must outlive it.
class ProgramVariants {
  public:
    explicit ProgramVariants(const Model& model);

    /// The program for these inputs (their shapes, and the values of compile-time inputs).
    Result<std::shared_ptr<const Program>> get(const std::vector<TensorData>& inputs) const;

  private:
    using Key = std::pair<std::vector<std::vector<uint32_t>>, std::vector<std::vector<uint8_t>>>;
    static constexpr size_t kMaxVariants = 16;
    const Model& mModel;
    const std::vector<uint32_t> mCompileTimeInputs;
    mutable std::mutex mMutex;
    mutable std::map<Key, std::shared_ptr<const Program>> mVariants;
};

}  // namespace nncosim::driver
