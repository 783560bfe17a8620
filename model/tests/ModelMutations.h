// The mutation families of Android's VTS model validation (neuralnetworks/*/vts/functional/
// ValidateModel.cpp), restated for nncosim: each family turns one valid model into mutated
// copies that every conforming driver must reject with INVALID_ARGUMENT.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/Model.h"

namespace nncosim {

/// A mutated copy of a valid model, with the prepareModel arguments that go with it (the
/// preference and priority families leave the model intact and break those instead).
struct ModelMutation {
    std::string description;  ///< e.g. "operand 3 set to type TENSOR_FLOAT16"
    Model model;
    ExecutionPreference preference = kDefaultExecutionPreference;
    Priority priority = kDefaultPriority;
};

/// Receives each mutation as it is made; the mutation is only valid during the call, so large
/// models never have all their mutated copies alive at once.
using MutationSink = std::function<void(const ModelMutation&)>;

/// One family of mutations, named as the VTS test it restates.
struct MutationFamily {
    const char* name;
    /// Calls `sink` once per mutation of the main graph of `model`, which must be valid.
    void (*generate)(const Model& model, const MutationSink& sink);
};

/// Every family, in VTS order: execution order, operand type, rank, scale, zero point,
/// lifetime, input/output swap, extra writer, per-operation operand type, operation type,
/// operation input/output index, removed write, removed operand, removed operation, removed
/// and added operation inputs and outputs, execution preference, priority.
const std::vector<MutationFamily>& allMutationFamilies();

}  // namespace nncosim
