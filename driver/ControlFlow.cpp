#include "driver/ControlFlow.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "driver/Compiler.h"
#include "driver/compiler/Lowering.h"
#include "model/Subgraphs.h"

namespace nncosim::driver {
namespace {

bool isControlFlow(OperationType type) {
    return type == OperationType::IF || type == OperationType::WHILE;
}

/// The referenced subgraphs an IF (its branches) or a WHILE (its condition and body) runs.
std::vector<uint32_t> subgraphsOf(const Subgraph& g, const Operation& op) {
    const size_t first = op.type == OperationType::IF ? 1 : 0;
    return {g.operands[op.inputs[first]].location.offset,
            g.operands[op.inputs[first + 1]].location.offset};
}

}  // namespace

bool hasControlFlow(const Model& model) {
    return std::any_of(model.main.operations.begin(), model.main.operations.end(),
                       [](const Operation& op) { return isControlFlow(op.type); });
}

Status controlFlowSupported(const Model& model, const Operation& op) {
    for (uint32_t k : subgraphsOf(model.main, op)) {
        const Model sub = subgraphModel(model, k);
        for (uint32_t i = 0; i < sub.main.operations.size(); ++i) {
            if (Status st = checkOperationSupported(sub, i); !st.ok())
                return unsupported(op, "subgraph " + std::to_string(k) + ", operation " +
                                           std::to_string(i) + ": " + st.message);
        }
    }
    return okStatus();
}

// A graph as steps: IF and WHILE operations, and the stretches of other operations between
// them, each a model of its own with its programs.
struct ControlFlowRunner::Graph {
    struct Step {
        const Operation* control = nullptr;  // IF or WHILE; null: a stretch
        std::unique_ptr<PartitionModel> stretch;
        std::unique_ptr<ProgramVariants> programs;
    };
    Model model;  // its main graph is this graph
    std::vector<Step> steps;

    explicit Graph(Model m) : model(std::move(m)) {
        const Subgraph& g = model.main;
        std::vector<uint32_t> stepOf(g.operations.size());
        std::vector<std::vector<uint32_t>> runs;
        for (uint32_t i = 0; i < g.operations.size(); ++i) {
            const bool control = isControlFlow(g.operations[i].type);
            if (control || runs.empty() || steps.back().control) {
                runs.emplace_back();
                steps.emplace_back();
                if (control) steps.back().control = &g.operations[i];
            }
            runs.back().push_back(i);
            stepOf[i] = static_cast<uint32_t>(runs.size() - 1);
        }
        const std::vector<bool> exported = exportedOperands(model, stepOf, false);
        for (size_t s = 0; s < steps.size(); ++s) {
            if (steps[s].control) continue;
            // A stretch none of whose results is used has nothing to run.
            auto part = extractPartition(model, runs[s], exported);
            if (!part) continue;
            steps[s].stretch = std::make_unique<PartitionModel>(std::move(*part));
            steps[s].programs = std::make_unique<ProgramVariants>(steps[s].stretch->model);
        }
    }
};

struct ControlFlowRunner::Execution {
    Duration loopTimeout;
    const RunJob& runJob;
    uint64_t cycles = 0;
    Duration hostTimeOnDevice{0};
};

ControlFlowRunner::ControlFlowRunner(const Model& model) {
    mGraphs.push_back(std::make_unique<Graph>(model));
    for (uint32_t k = 0; k < model.referenced.size(); ++k)
        mGraphs.push_back(std::make_unique<Graph>(subgraphModel(model, k)));
}

ControlFlowRunner::~ControlFlowRunner() = default;

Status ControlFlowRunner::precompile(uint64_t arenaCapacity) const {
    for (size_t k = 0; k < mGraphs.size(); ++k) {
        for (const Graph::Step& step : mGraphs[k]->steps) {
            if (!step.stretch) continue;
            const Model& stretch = step.stretch->model;
            if (!compileTimeInputs(stretch).empty()) continue;
            std::vector<TensorData> inputs;
            bool known = true;
            for (uint32_t i : stretch.main.inputIndexes) {
                const Operand& o = stretch.main.operands[i];
                known = known && !hasUnknownDimensions(o);
                inputs.push_back({o.dimensions, {}});
            }
            if (!known) continue;
            auto program = step.programs->get(inputs);
            if (!program) return program.status();
            if ((*program)->arenaSize > arenaCapacity)
                return fail(
                    ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the ",
                    k == 0 ? std::string("main graph") : "subgraph " + std::to_string(k - 1),
                    " needs ", byteSizeText((*program)->arenaSize),
                    " of device memory for one job, the device has ", byteSizeText(arenaCapacity));
        }
    }
    return okStatus();
}

JobOutcome ControlFlowRunner::run(const std::vector<TensorData>& inputs, Duration loopTimeout,
                                  const RunJob& runJob) const {
    Execution execution{loopTimeout, runJob};
    auto outputs = runGraph(0, inputs, execution);
    JobOutcome outcome;
    outcome.cycles = execution.cycles;
    outcome.hostTimeOnDevice = execution.hostTimeOnDevice;
    if (outputs)
        outcome.outputs = std::move(*outputs);
    else
        outcome.status = outputs.status();
    return outcome;
}

Result<std::vector<TensorData>> ControlFlowRunner::runGraph(size_t graph,
                                                            std::vector<TensorData> inputs,
                                                            Execution& execution) const {
    const Graph& G = *mGraphs.at(graph);
    const Subgraph& g = G.model.main;
    std::vector<std::optional<TensorData>> values(g.operands.size());
    for (size_t i = 0; i < inputs.size() && i < g.inputIndexes.size(); ++i)
        values[g.inputIndexes[i]] = std::move(inputs[i]);
    const auto value = [&](uint32_t k) -> Result<TensorData> {
        if (values[k]) return *values[k];
        const Operand& o = g.operands[k];
        const uint8_t* data = constantData(G.model, o);
        if (!data)
            return fail(ErrorStatus::GENERAL_FAILURE, "operand ", k, " of subgraph ", graph,
                        " has no value");
        return TensorData{o.dimensions, {data, data + o.location.length}};
    };
    const auto valuesOf = [&](auto first, auto last) -> Result<std::vector<TensorData>> {
        std::vector<TensorData> list;
        for (auto it = first; it != last; ++it) {
            auto v = value(*it);
            if (!v) return v.status();
            list.push_back(std::move(*v));
        }
        return list;
    };
    // A subgraph's index (a SUBGRAPH operand) as this runner's graph.
    const auto graphOf = [&](uint32_t operand) { return g.operands[operand].location.offset + 1; };

    for (const Graph::Step& step : G.steps) {
        if (step.stretch) {
            auto in = valuesOf(step.stretch->inputs.begin(), step.stretch->inputs.end());
            if (!in) return in.status();
            auto program = step.programs->get(*in);
            if (!program) return program.status();
            JobOutcome job = execution.runJob(**program, *in);
            execution.cycles += job.cycles;
            execution.hostTimeOnDevice += job.hostTimeOnDevice;
            if (!job.status.ok()) return job.status;
            for (size_t j = 0; j < job.outputs.size(); ++j)
                values[step.stretch->outputs[j]] = std::move(job.outputs[j]);
            continue;
        }
        if (!step.control) continue;  // a stretch with nothing used
        const Operation& op = *step.control;
        std::vector<TensorData> results;
        if (op.type == OperationType::IF) {
            auto condition = value(op.inputs[0]);
            if (!condition) return condition.status();
            if (condition->bytes.empty())
                return fail(ErrorStatus::GENERAL_FAILURE, "IF: the condition is empty");
            auto in = valuesOf(op.inputs.begin() + 3, op.inputs.end());
            if (!in) return in.status();
            auto out = runGraph(graphOf(op.inputs[condition->bytes[0] ? 1 : 2]), std::move(*in),
                                execution);
            if (!out) return out.status();
            results = std::move(*out);
        } else {
            // The body maps the loop's values to new values of its first outputs-count of them.
            auto state = valuesOf(op.inputs.begin() + 2, op.inputs.end());
            if (!state) return state.status();
            const auto start = Clock::now();
            for (;;) {
                auto condition = runGraph(graphOf(op.inputs[0]), *state, execution);
                if (!condition) return condition.status();
                if (condition->empty() || condition->front().bytes.empty())
                    return fail(ErrorStatus::GENERAL_FAILURE, "WHILE: the condition is empty");
                if (!condition->front().bytes[0]) break;
                if (Clock::now() - start > execution.loopTimeout)
                    return fail(
                        ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                        "WHILE: the loop was still running after ",
                        std::chrono::duration_cast<std::chrono::milliseconds>(execution.loopTimeout)
                            .count(),
                        " ms");
                auto body = runGraph(graphOf(op.inputs[1]), *state, execution);
                if (!body) return body.status();
                for (size_t i = 0; i < body->size() && i < state->size(); ++i)
                    (*state)[i] = std::move((*body)[i]);
            }
            results = std::move(*state);
        }
        if (results.size() < op.outputs.size())
            return fail(ErrorStatus::GENERAL_FAILURE, nameOf(op.type), ": ", results.size(),
                        " results for ", op.outputs.size(), " outputs");
        for (size_t j = 0; j < op.outputs.size(); ++j)
            values[op.outputs[j]] = std::move(results[j]);
    }
    return valuesOf(g.outputIndexes.begin(), g.outputIndexes.end());
}

}  // namespace nncosim::driver
