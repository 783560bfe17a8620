// The NNAPI validation rules a driver must enforce before it touches a model or a request.
// Every failure is INVALID_ARGUMENT with a message naming the rule and the operand/operation.
#pragma once

#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// Validates a whole model (operands, lifetimes, locations, subgraph inputs/outputs, execution
/// order, referenced subgraphs without cycles, every operation through its validator, extension
/// names and prefixes). Returns the minimum feature level the model needs.
Result<FeatureLevel> validateModel(const Model& model);

/// Stricter than NNAPI (which lets such models fail at execution): each main-graph operation's
/// output shape, computed from the known shapes by the shared per-operation code, must agree
/// with the shape the model declares. INVALID_ARGUMENT naming the operation, the output and both
/// shapes. For `validate --strict` and the driver's prepareModel. The model must be valid.
Status validateDeclaredShapes(const Model& model);

/// One entry per main-graph operation: false when validateDeclaredShapes would blame that
/// operation (its declared output shape contradicts the one computed from its inputs). A
/// driver must not claim such an operation when its preparation rejects the model for it.
std::vector<bool> declaredShapesAgree(const Model& model);

/// Validates a request on its own and against the model's main graph: argument counts and
/// lifetimes, pool indexes and bounds, dimensions compatible with the model, lengths (an input's
/// must equal its shape's byte size; an output's may be shorter, which the execution must report
/// as OUTPUT_INSUFFICIENT_SIZE, but not longer).
/// `allowUnspecifiedOutput`: outputs may leave dimensions unknown (true for all HAL 1.2+ paths).
Status validateRequest(const Request& request, const Model& model,
                       bool allowUnspecifiedOutput = true);

Status validateExecutionPreference(ExecutionPreference preference);
Status validatePriority(Priority priority);
Status validateMeasureTiming(MeasureTiming measure);
/// Deadlines must not lie before the clock's epoch; durations must not be negative.
Status validateDeadline(const OptionalTimePoint& deadline);
Status validateDuration(const OptionalDuration& duration);
/// Loop timeouts are durations of at most kMaxLoopTimeoutDuration.
Status validateLoopTimeout(const OptionalDuration& duration);
/// Lower-case letters, digits, '_' and '.', with at least one '.' (reverse domain).
bool isValidExtensionName(std::string_view name);
Status validateExtension(const Extension& extension);
Status validateBufferRole(const BufferRole& role);

/// The operand both sides agree on when one leaves dimensions unknown: same rank (or unknown)
/// and equal known dimensions. Fails naming the mismatch.
Result<std::vector<uint32_t>> combineDimensions(const std::vector<uint32_t>& a,
                                                const std::vector<uint32_t>& b);

}  // namespace nncosim
