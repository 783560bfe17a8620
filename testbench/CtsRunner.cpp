#include "testbench/CtsRunner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <sstream>

#include "model/Accuracy.h"

namespace nncosim {
namespace {

/// One shared-memory pool per request argument, laid out as the NNAPI runtime would.
struct RequestBuffers {
    Request request;
    std::vector<SharedMemory> outputPools;
};

Result<RequestBuffers> makeRequest(const CtsTest& test,
                                   const std::vector<uint64_t>& outputLengths) {
    RequestBuffers rb;
    auto addPool = [&](size_t length) -> Result<uint32_t> {
        auto memory = Memory::create(std::max<size_t>(length, 1), "cts-request");
        if (!memory) return memory.status();
        rb.request.pools.push_back(memory.value());
        return static_cast<uint32_t>(rb.request.pools.size() - 1);
    };
    for (const TensorData& input : test.inputs) {
        Request::Argument arg;
        if (input.bytes.empty() && input.dimensions.empty()) {
            arg.lifetime = Request::Argument::LifeTime::NO_VALUE;
        } else {
            auto pool = addPool(input.bytes.size());
            if (!pool) return pool.status();
            auto& memory = std::get<SharedMemory>(rb.request.pools[*pool]);
            std::memcpy(memory->data(), input.bytes.data(), input.bytes.size());
            arg.location = {static_cast<const void*>(nullptr), *pool, 0,
                            static_cast<uint32_t>(input.bytes.size()), 0};
        }
        rb.request.inputs.push_back(arg);
    }
    for (uint64_t length : outputLengths) {
        auto pool = addPool(length);
        if (!pool) return pool.status();
        rb.outputPools.push_back(std::get<SharedMemory>(rb.request.pools[*pool]));
        Request::Argument arg;
        arg.location = {static_cast<const void*>(nullptr), *pool, 0, static_cast<uint32_t>(length),
                        0};
        rb.request.outputs.push_back(arg);
    }
    return rb;
}

/// RANDOM_MULTINOMIAL: compare the sampled class frequencies with the softmax of the logits.
std::string checkMultinomial(const CtsTest& test, const uint8_t* samples,
                             const std::vector<uint32_t>& dims) {
    const TensorData& logits = test.inputs.at(0);
    const Operand& logitsOperand = test.model.main.operands[test.model.main.inputIndexes[0]];
    const uint32_t batches = logits.dimensions.at(0), classes = logits.dimensions.at(1);
    const uint32_t draws = dims.at(1);
    for (uint32_t b = 0; b < batches; ++b) {
        std::vector<double> p(classes);
        double maxLogit = -INFINITY, sum = 0;
        for (uint32_t c = 0; c < classes; ++c) {
            p[c] = elementAsDouble(logitsOperand.type, logits.bytes.data(), b * classes + c);
            maxLogit = std::max(maxLogit, p[c]);
        }
        for (double& v : p) sum += (v = std::exp(v - maxLogit));
        std::vector<double> freq(classes, 0.0);
        for (uint32_t d = 0; d < draws; ++d) {
            int32_t k;
            std::memcpy(&k, samples + (b * draws + d) * 4, 4);
            if (k < 0 || static_cast<uint32_t>(k) >= classes)
                return "sample out of range: " + std::to_string(k);
            freq[k] += 1.0 / draws;
        }
        for (uint32_t c = 0; c < classes; ++c) {
            if (std::fabs(freq[c] - p[c] / sum) > test.multinomialTolerance)
                return "class " + std::to_string(c) + " frequency " + std::to_string(freq[c]) +
                       " vs probability " + std::to_string(p[c] / sum);
        }
    }
    return {};
}

/// Checks outputs and shapes against the test's expectations; returns a failure message or "".
std::string checkOutputs(const CtsTest& test, const Model& model, const RequestBuffers& rb,
                         const ExecutionOutcome& outcome) {
    const bool relaxed = isRelaxed(model);
    for (size_t i = 0; i < test.expectedOutputs.size(); ++i) {
        const TensorData& expected = test.expectedOutputs[i];
        const Operand& operand = model.main.operands[model.main.outputIndexes[i]];
        if (i >= outcome.outputShapes.size())
            return "no output shape reported for output " + std::to_string(i);
        const auto& shape = outcome.outputShapes[i].dimensions;
        const uint64_t count = elementCount(shape);
        const uint64_t expectedCount =
            expected.bytes.size() / std::max<uint32_t>(1, elementSize(operand.type));
        const bool shapeKnown = !expected.dimensions.empty() &&
                                std::find(expected.dimensions.begin(), expected.dimensions.end(),
                                          0u) == expected.dimensions.end();
        if (shapeKnown ? shape != expected.dimensions : count != expectedCount) {
            return "output " + std::to_string(i) + " has shape " + toString(shape) + ", expected " +
                   (shapeKnown ? toString(expected.dimensions)
                               : std::to_string(expectedCount) + " elements");
        }
        if (test.outputIgnored[i]) continue;
        const uint8_t* actual = rb.outputPools[i]->data();
        if (test.multinomialTolerance > 0) {
            std::string m = checkMultinomial(test, actual, shape);
            if (!m.empty()) return "output " + std::to_string(i) + ": " + m;
            continue;
        }
        Comparison c = compareTensors(operand.type, expected.bytes.data(), actual, expectedCount,
                                      ctsTolerance(operand.type, relaxed));
        if (!c.ok()) return "output " + std::to_string(i) + ": " + c.describe();
    }
    return {};
}

/// The test's model with every main-graph output's dimensions unknown (rank kept).
Model withUnknownOutputShapes(const Model& model) {
    Model m = model;
    for (uint32_t k : m.main.outputIndexes) {
        auto& dims = m.main.operands[k].dimensions;
        std::fill(dims.begin(), dims.end(), 0u);
    }
    return m;
}

using PreparedModel = Result<std::unique_ptr<PreparedBackendModel>>;

// `prepared`: `model` as the backend prepared it (once for all the variants that use it).
// `reportsShapes`: whether the execution reports output shapes (the fenced path does not: an
// insufficient output is then its status alone).
std::string runVariant(const CtsTest& test, const Model& model, PreparedModel& prepared,
                       bool insufficient, bool reportsShapes, Duration loopTimeout) {
    std::vector<uint64_t> lengths;
    // As Android's harness: zero-sized outputs still get a one-byte buffer.
    for (const TensorData& out : test.expectedOutputs)
        lengths.push_back(std::max<uint64_t>(out.bytes.size(), 1));
    if (insufficient) lengths[0] -= 1;
    // A model expected to fail may fail before its execution already.
    if (!prepared && test.expectFailure) return {};
    if (!prepared)
        return "prepare failed: " + nameOf(prepared.status().code) + ": " +
               prepared.status().message;
    auto rb = makeRequest(test, lengths);
    if (!rb) return "cannot build the request: " + rb.status().message;
    ExecutionOutcome outcome = (*prepared)->execute(rb->request, loopTimeout);
    if (test.expectFailure) {
        return outcome.status.ok() ? "expected the execution to fail, it succeeded" : "";
    }
    if (insufficient) {
        if (outcome.status.code != ErrorStatus::OUTPUT_INSUFFICIENT_SIZE)
            return "expected OUTPUT_INSUFFICIENT_SIZE for a too small output buffer, got " +
                   nameOf(outcome.status.code) + " " + outcome.status.message;
        if (!reportsShapes) return {};
        if (outcome.outputShapes.size() != test.expectedOutputs.size())
            return "OUTPUT_INSUFFICIENT_SIZE with " + std::to_string(outcome.outputShapes.size()) +
                   " output shapes for " + std::to_string(test.expectedOutputs.size()) + " outputs";
        if (outcome.outputShapes[0].isSufficient)
            return "OUTPUT_INSUFFICIENT_SIZE without output 0 marked insufficient";
        const auto& expectedDims = test.expectedOutputs[0].dimensions;
        if (!expectedDims.empty() && outcome.outputShapes[0].dimensions != expectedDims)
            return "OUTPUT_INSUFFICIENT_SIZE reported shape " +
                   toString(outcome.outputShapes[0].dimensions) + ", expected " +
                   toString(expectedDims);
        return {};
    }
    if (!outcome.status.ok()) return nameOf(outcome.status.code) + ": " + outcome.status.message;
    return checkOutputs(test, model, *rb, outcome);
}

}  // namespace

const char* verdictName(Verdict v) {
    switch (v) {
        case Verdict::PASSED:
            return "passed";
        case Verdict::FAILED:
            return "failed";
        case Verdict::UNSUPPORTED:
            return "unsupported";
    }
    return "?";
}

Verdict verdictFromName(const std::string& name) {
    return name == verdictName(Verdict::PASSED)        ? Verdict::PASSED
           : name == verdictName(Verdict::UNSUPPORTED) ? Verdict::UNSUPPORTED
                                                       : Verdict::FAILED;
}

std::vector<OperationType> testedOperations(const CtsTest& test) {
    const auto& ops = test.model.main.operations;
    const bool internalInputs = test.name.find("all_inputs_as_internal") != std::string::npos;
    std::vector<OperationType> types;
    for (size_t i = 0; i < ops.size(); ++i) {
        const bool feedingAdd =
            internalInputs && ops[i].type == OperationType::ADD && i + 1 < ops.size();
        if (!feedingAdd && std::find(types.begin(), types.end(), ops[i].type) == types.end())
            types.push_back(ops[i].type);
    }
    return types;
}

std::string testNumerics(const CtsTest& test) {
    bool quantized = false;
    std::vector<const Subgraph*> graphs{&test.model.main};
    for (const Subgraph& g : test.model.referenced) graphs.push_back(&g);
    for (const Subgraph* g : graphs) {
        for (const Operand& o : g->operands) {
            const std::string type = nameOf(o.type);
            if (type.find("FLOAT") != std::string::npos) return "float";
            quantized |= type.find("QUANT") != std::string::npos;
        }
    }
    return quantized ? "quantized" : "integer";
}

CtsTestResult runCtsTest(Backend& backend, const CtsTest& test, const std::string& file,
                         Duration loopTimeout, uint64_t memoryLimitBytes) {
    const auto start = std::chrono::steady_clock::now();
    CtsTestResult r;
    r.file = file;
    r.name = test.name;
    if (!test.readError.empty()) {
        r.message = "unreadable test: " + test.readError;
        return r;
    }
    if (Status st = checkMemoryLimit(test.model, memoryLimitBytes); !st.ok()) {
        r.message = st.message;
        return r;
    }
    r.operations = testedOperations(test);
    r.numerics = testNumerics(test);
    auto supported = backend.supportsModel(test.model);
    if (!supported) {
        r.message = "model rejected: " + supported.status().message;
    } else if (!*supported) {
        r.verdict = Verdict::UNSUPPORTED;
        r.message = backend.name() + " does not support every operation of the model";
    } else {
        // The insufficient-buffer variant needs an output 0 larger than one byte (as Android) and
        // of tensor type: a scalar's size is fully known, so a short buffer is INVALID_ARGUMENT.
        const auto& model = test.model;
        const bool hasOutputs = !test.expectedOutputs.empty() &&
                                test.expectedOutputs[0].bytes.size() > 1 &&
                                isTensorType(model.main.operands[model.main.outputIndexes[0]].type);
        // A buffer one byte short for an output whose shape the model fixes is
        // OUTPUT_INSUFFICIENT_SIZE too (VTS's mutation), on every execution path.
        const bool outputFixed =
            hasOutputs && !hasUnknownDimensions(model.main.operands[model.main.outputIndexes[0]]);
        struct Variant {
            const char* name;
            bool dynamic;
            bool insufficient;
        };
        const Variant variants[] = {{"", false, false},
                                    {"insufficient fully specified output buffer: ", false, true},
                                    {"dynamic output shape: ", true, false},
                                    {"insufficient output buffer: ", true, true}};
        const Model dynamicModel = withUnknownOutputShapes(test.model);
        std::optional<PreparedModel> prepared, preparedDynamic;  // each prepared once
        r.verdict = Verdict::PASSED;
        for (const Variant& v : variants) {
            if ((v.dynamic && test.expectFailure) || (v.insufficient && !hasOutputs)) continue;
            if (v.dynamic && !backend.reportsOutputShapes()) continue;  // the HAL defines neither
            if (v.insufficient && !v.dynamic &&
                (test.expectFailure || !outputFixed || !backend.writesRequestOutputs()))
                continue;
            std::string failure;
            try {
                auto& slot = v.dynamic ? preparedDynamic : prepared;
                const Model& variantModel = v.dynamic ? dynamicModel : test.model;
                if (!slot) slot.emplace(backend.prepare(variantModel));
                failure = runVariant(test, variantModel, *slot, v.insufficient,
                                     backend.reportsOutputShapes(), loopTimeout);
            } catch (const std::bad_alloc&) {
                failure = "out of memory";
            }
            if (!failure.empty()) {
                r.verdict = Verdict::FAILED;
                r.message = v.name + failure;
                break;
            }
        }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

}  // namespace nncosim
