#include "golden/Executor.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "golden/ExecutionContext.h"
#include "golden/ops/Extension.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// Whether actual dimensions fit what a model declares (0 = any, empty = any rank).
bool fitsDeclared(const std::vector<uint32_t>& declared, const std::vector<uint32_t>& actual) {
    if (declared.empty()) return true;
    if (declared.size() != actual.size()) return false;
    for (size_t d = 0; d < declared.size(); ++d) {
        if (declared[d] != 0 && declared[d] != actual[d]) return false;
    }
    return true;
}

// A value that reads the bytes of another without owning them.
OperandValue borrow(const OperandValue& from) {
    OperandValue v;
    v.dimensions = from.dimensions;
    v.external = from.bytes();
    v.externalLength = from.length();
    v.present = from.present;
    return v;
}

TensorData toTensorData(const OperandValue& v) {
    return {v.dimensions, std::vector<uint8_t>(v.bytes(), v.bytes() + v.length())};
}

// Executes the subgraphs of one model for one request.
class Runner {
  public:
    Runner(const Model& model, const ExecuteOptions& options)
        : mModel(model), mOptions(options), mMemoryLeft(options.memoryLimitBytes) {}

    // Runs `subgraph` with `inputs` (one per inputIndexes; dimensions already checked by the
    // caller) and returns its outputs (one per outputIndexes). The main graph reports each
    // operation to the observer.
    Result<std::vector<OperandValue>> run(const Subgraph& subgraph,
                                          std::vector<OperandValue> inputs, bool isMain);

  private:
    Status initialize(const Subgraph& subgraph, std::vector<OperandValue>& values);
    Status runOperation(const Subgraph& subgraph, uint32_t index,
                        std::vector<OperandValue>& values);
    Status runIf(const Subgraph& subgraph, const Operation& op, uint32_t index,
                 std::vector<OperandValue>& values);
    Status runWhile(const Subgraph& subgraph, const Operation& op, uint32_t index,
                    std::vector<OperandValue>& values);
    // The referenced subgraph a SUBGRAPH operand names.
    Result<const Subgraph*> referenced(const Operand& operand, uint32_t index) const;
    // Moves a produced value into an operation output, checking it against the declaration.
    Status assign(const Operand& declared, uint32_t index, uint32_t output, OperandValue&& from,
                  OperandValue& to) const;

    const Model& mModel;
    const ExecuteOptions& mOptions;
    uint64_t mMemoryLeft;  // what operations may still allocate for their outputs
};

Status Runner::initialize(const Subgraph& subgraph, std::vector<OperandValue>& values) {
    values.assign(subgraph.operands.size(), {});
    for (size_t i = 0; i < subgraph.operands.size(); ++i) {
        const Operand& operand = subgraph.operands[i];
        OperandValue& v = values[i];
        switch (operand.lifetime) {
            case OperandLifeTime::CONSTANT_COPY:
            case OperandLifeTime::CONSTANT_REFERENCE: {
                const uint8_t* data = constantData(mModel, operand);
                if (!data) {
                    return fail(ErrorStatus::GENERAL_FAILURE, "operand ", i,
                                ": constant data out of bounds");
                }
                v.dimensions = operand.dimensions;
                v.present = true;
                // Operations read constants through typed pointers: realign odd offsets.
                if (reinterpret_cast<uintptr_t>(data) % alignof(float) != 0) {
                    v.storage.assign(data, data + operand.location.length);
                    v.owned = true;
                } else {
                    v.external = data;
                    v.externalLength = operand.location.length;
                }
                break;
            }
            case OperandLifeTime::SUBGRAPH:
                v.present = true;  // read by IF/WHILE through the operand's location
                break;
            default:
                break;  // temporaries, inputs, outputs and omitted operands start empty
        }
    }
    return okStatus();
}

Result<std::vector<OperandValue>> Runner::run(const Subgraph& subgraph,
                                              std::vector<OperandValue> inputs, bool isMain) {
    std::vector<OperandValue> values;
    NN_RETURN_IF_ERROR(initialize(subgraph, values));
    for (size_t i = 0; i < subgraph.inputIndexes.size(); ++i) {
        values[subgraph.inputIndexes[i]] = std::move(inputs[i]);
    }

    // Temporaries are freed after their last consumer.
    std::vector<uint32_t> usesLeft(subgraph.operands.size(), 0);
    for (const Operation& op : subgraph.operations) {
        for (uint32_t in : op.inputs) ++usesLeft[in];
    }

    for (uint32_t index = 0; index < subgraph.operations.size(); ++index) {
        const Operation& op = subgraph.operations[index];
        NN_RETURN_IF_ERROR(runOperation(subgraph, index, values));
        if (isMain && mOptions.observer) {
            std::vector<TensorData> outputs;
            for (uint32_t out : op.outputs) outputs.push_back(toTensorData(values[out]));
            mOptions.observer(index, outputs);
        }
        for (uint32_t in : op.inputs) {
            if (--usesLeft[in] == 0 &&
                subgraph.operands[in].lifetime == OperandLifeTime::TEMPORARY_VARIABLE) {
                values[in] = {};
            }
        }
    }

    std::vector<OperandValue> outputs;
    for (uint32_t out : subgraph.outputIndexes) {
        if (!values[out].present) {
            return fail(ErrorStatus::GENERAL_FAILURE, "subgraph output operand ", out,
                        " was never produced");
        }
        outputs.push_back(std::move(values[out]));
    }
    return outputs;
}

Status Runner::runOperation(const Subgraph& subgraph, uint32_t index,
                            std::vector<OperandValue>& values) {
    const Operation& op = subgraph.operations[index];
    if (op.type == OperationType::IF) return runIf(subgraph, op, index, values);
    if (op.type == OperationType::WHILE) return runWhile(subgraph, op, index, values);

    ExecutionContext ctx(mModel, subgraph, op, index, values, mMemoryLeft);
    const OperationExecutor executor = isExtension(op.type)
                                           ? findExtensionOperationExecutor(mModel, op.type)
                                           : findOperationExecutor(op.type);
    if (!executor) {
        return ctx.fail("golden: no reference implementation of ", nameOf(op.type));
    }
    for (uint32_t i = 0; i < op.inputs.size(); ++i) {
        const uint32_t operand = op.inputs[i];
        if (values[operand].present) continue;
        const OperandLifeTime lifetime = subgraph.operands[operand].lifetime;
        // Omitted: NO_VALUE in the model, or a subgraph input the request left without value.
        if (lifetime != OperandLifeTime::NO_VALUE && lifetime != OperandLifeTime::SUBGRAPH_INPUT) {
            return ctx.fail("input ", i, " (operand ", operand, ") has no value");
        }
        if (!acceptsOmittedInputs(op.type)) return ctx.fail("input ", i, " is omitted");
    }
    for (uint32_t out : op.outputs) values[out] = {};
    NN_RETURN_IF_ERROR(executor(ctx));
    for (uint32_t j = 0; j < op.outputs.size(); ++j) {
        if (!values[op.outputs[j]].present) {
            return ctx.fail("golden: the implementation did not produce output ", j);
        }
    }
    return okStatus();
}

Result<const Subgraph*> Runner::referenced(const Operand& operand, uint32_t index) const {
    if (operand.lifetime != OperandLifeTime::SUBGRAPH ||
        operand.location.offset >= mModel.referenced.size()) {
        return fail(ErrorStatus::GENERAL_FAILURE, "operation ", index,
                    ": operand does not name a referenced subgraph");
    }
    return &mModel.referenced[operand.location.offset];
}

Status Runner::assign(const Operand& declared, uint32_t index, uint32_t output, OperandValue&& from,
                      OperandValue& to) const {
    if (!fitsDeclared(declared.dimensions, from.dimensions)) {
        return fail(ErrorStatus::GENERAL_FAILURE, "operation ", index, ": output ", output,
                    " has shape ", toString(from.dimensions), " but the model declares ",
                    toString(declared.dimensions));
    }
    if (from.owned) {
        to = std::move(from);
    } else {  // a borrowed value (a WHILE that never iterated): copy its bytes
        to.dimensions = from.dimensions;
        to.storage.assign(from.bytes(), from.bytes() + from.length());
        to.owned = true;
        to.present = true;
    }
    return okStatus();
}

Status Runner::runIf(const Subgraph& subgraph, const Operation& op, uint32_t index,
                     std::vector<OperandValue>& values) {
    // Inputs: condition (TENSOR_BOOL8 [1]), then-branch, else-branch, branch inputs...
    const OperandValue& cond = values[op.inputs[0]];
    if (!cond.present || cond.length() < 1) {
        return fail(ErrorStatus::GENERAL_FAILURE, "operation ", index,
                    " (IF): condition has no value");
    }
    const uint32_t branchInput = cond.bytes()[0] != 0 ? 1 : 2;
    auto branch = referenced(subgraph.operands[op.inputs[branchInput]], index);
    if (!branch) return branch.status();
    const Subgraph& target = **branch;

    std::vector<OperandValue> inputs;
    for (size_t i = 3; i < op.inputs.size(); ++i) inputs.push_back(borrow(values[op.inputs[i]]));
    auto outputs = run(target, std::move(inputs), false);
    if (!outputs) return outputs.status();
    for (uint32_t j = 0; j < op.outputs.size(); ++j) {
        NN_RETURN_IF_ERROR(assign(subgraph.operands[op.outputs[j]], index, j,
                                  std::move((*outputs)[j]), values[op.outputs[j]]));
    }
    return okStatus();
}

Status Runner::runWhile(const Subgraph& subgraph, const Operation& op, uint32_t index,
                        std::vector<OperandValue>& values) {
    // Inputs: condition subgraph, body subgraph, loop inputs... The body maps all loop inputs
    // to new values of the first body-output-count of them; the condition reads all of them.
    auto cond = referenced(subgraph.operands[op.inputs[0]], index);
    if (!cond) return cond.status();
    auto body = referenced(subgraph.operands[op.inputs[1]], index);
    if (!body) return body.status();

    std::vector<OperandValue> state;
    for (size_t i = 2; i < op.inputs.size(); ++i) state.push_back(borrow(values[op.inputs[i]]));
    auto borrowAll = [&state] {
        std::vector<OperandValue> views;
        for (const OperandValue& v : state) views.push_back(borrow(v));
        return views;
    };

    const TimePoint start = Clock::now();
    while (true) {
        auto condOut = run(**cond, borrowAll(), false);
        if (!condOut) return condOut.status();
        if (condOut->empty() || condOut->front().length() < 1) {
            return fail(ErrorStatus::GENERAL_FAILURE, "operation ", index,
                        " (WHILE): the condition produced no value");
        }
        if (condOut->front().bytes()[0] == 0) break;
        if (Clock::now() - start > mOptions.loopTimeout) {
            return fail(
                ErrorStatus::MISSED_DEADLINE_TRANSIENT, "operation ", index,
                " (WHILE): loop timed out after ",
                std::chrono::duration_cast<std::chrono::milliseconds>(mOptions.loopTimeout).count(),
                " ms");
        }
        auto bodyOut = run(**body, borrowAll(), false);
        if (!bodyOut) return bodyOut.status();
        for (size_t i = 0; i < bodyOut->size() && i < state.size(); ++i) {
            state[i] = std::move((*bodyOut)[i]);
        }
    }
    for (uint32_t j = 0; j < op.outputs.size(); ++j) {
        NN_RETURN_IF_ERROR(assign(subgraph.operands[op.outputs[j]], index, j, std::move(state[j]),
                                  values[op.outputs[j]]));
    }
    return okStatus();
}

}  // namespace

// IF and WHILE run subgraphs, which the runner above does; the table's entries only say so.
Status executeIf(ExecutionContext& ctx) {
    return ctx.fail("IF runs in the executor's subgraph runner");
}
Status executeWhile(ExecutionContext& ctx) {
    return ctx.fail("WHILE runs in the executor's subgraph runner");
}

Result<std::vector<TensorData>> execute(const Model& model, const std::vector<TensorData>& inputs,
                                        const ExecuteOptions& options) {
    const Subgraph& main = model.main;
    if (inputs.size() != main.inputIndexes.size()) {
        return invalidArgument("golden: expected ", main.inputIndexes.size(), " inputs, got ",
                               inputs.size());
    }
    std::vector<OperandValue> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Operand& operand = main.operands[main.inputIndexes[i]];
        OperandValue v;
        if (inputs[i].dimensions.empty() && inputs[i].bytes.empty()) {
            values.push_back(std::move(v));  // omitted (NO_VALUE in the request)
            continue;
        }
        v.dimensions = inputs[i].dimensions.empty() ? operand.dimensions : inputs[i].dimensions;
        if (!fitsDeclared(operand.dimensions, v.dimensions)) {
            return invalidArgument("golden: input ", i, " has dimensions ", toString(v.dimensions),
                                   " but the model declares ", toString(operand.dimensions));
        }
        if (isTensorType(operand.type) &&
            (v.dimensions.empty() ||
             std::find(v.dimensions.begin(), v.dimensions.end(), 0u) != v.dimensions.end())) {
            return invalidArgument("golden: input ", i, " has unknown dimensions ",
                                   toString(v.dimensions));
        }
        const uint64_t expected = byteSize(operand.type, v.dimensions);
        if (inputs[i].bytes.size() != expected) {
            return invalidArgument("golden: input ", i, " has ", inputs[i].bytes.size(),
                                   " bytes, expected ", expected);
        }
        v.external = inputs[i].bytes.data();
        v.externalLength = inputs[i].bytes.size();
        v.present = true;
        values.push_back(std::move(v));
    }

    Runner runner(model, options);
    Result<std::vector<OperandValue>> outputs = Status{};
    try {
        outputs = runner.run(main, std::move(values), true);
    } catch (const std::bad_alloc&) {
        // A valid model can still ask for more memory than the machine has (Android reports
        // ANEURALNETWORKS_OUT_OF_MEMORY, a GENERAL_FAILURE).
        return fail(ErrorStatus::GENERAL_FAILURE, "golden: out of memory");
    }
    if (!outputs) return outputs.status();
    std::vector<TensorData> result;
    for (OperandValue& v : *outputs) {
        TensorData t;
        t.dimensions = std::move(v.dimensions);
        if (v.owned) {
            t.bytes = std::move(v.storage);
        } else {
            t.bytes.assign(v.bytes(), v.bytes() + v.length());
        }
        result.push_back(std::move(t));
    }
    return result;
}

}  // namespace nncosim::golden
