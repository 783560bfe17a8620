// The host runtime: Android-like partitioning, partitions as models, CPU fallback on the golden
// next to the NPU (the Verilated RTL), per-operation NPU figures, and the auto backend through
// the conformance runner.
#include <doctest/doctest.h>

#include <map>
#include <numeric>

#include "driver/Compiler.h"
#include "golden/Executor.h"
#include "model/Validation.h"
#include "testbench/Backend.h"
#include "testbench/CtsRunner.h"
#include "testbench/ModelRun.h"
#include "testbench/runtime/HostRuntime.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;

/// Four ADDs: 0 (t0 = in + in), 1 (t1 = t0 + t0), 2 (t2 = t0 + in), 3 (out = t1 + t2).
Model diamondModel() {
    ModelBuilder b;
    const uint32_t in = b.addInput(kQ8, {1, 2, 2, 16}, 0.5f, 0);
    const uint32_t t0 = b.addOperand(kQ8, {1, 2, 2, 16}, 1.0f, 0);
    const uint32_t t1 = b.addOperand(kQ8, {1, 2, 2, 16}, 2.0f, 0);
    const uint32_t t2 = b.addOperand(kQ8, {1, 2, 2, 16}, 2.0f, 0);
    const uint32_t out = b.addOutput(kQ8, {1, 2, 2, 16}, 4.0f, 0);
    b.addOperation(OperationType::ADD, {in, in, b.addInt32(0)}, {t0});
    b.addOperation(OperationType::ADD, {t0, t0, b.addInt32(0)}, {t1});
    b.addOperation(OperationType::ADD, {t0, in, b.addInt32(0)}, {t2});
    b.addOperation(OperationType::ADD, {t1, t2, b.addInt32(0)}, {out});
    return b.build();
}

/// in -> 0 CONV_2D 3x3 -> t0 -> 1 SELECT (no NPU) -> t1 -> 2 MAX_POOL_2D 2x2 -> out0, and
/// t0 -> 3 ADD (t0 + t0) -> out1: the NPU, the CPU, the NPU again, and a branch the runtime
/// keeps on the NPU with the first convolution.
Model mixedModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, t0, 7);
    const uint32_t t1 = b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128);
    addCpuOnlySelect(b, t0.operand, {1, 8, 8, 16}, t1);
    const uint32_t out0 = b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f / 16, 128);
    std::vector<uint32_t> pool{t1};
    for (int32_t v : {0, 0, 0, 0, 2, 2, 2, 2, 0}) pool.push_back(b.addInt32(v));
    b.addOperation(OperationType::MAX_POOL_2D, pool, {out0});
    const uint32_t out1 = b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 8, 128);
    b.addOperation(OperationType::ADD, {t0.operand, t0.operand, b.addInt32(0)}, {out1});
    return b.build();
}

/// in -> 0 DEPTHWISE_CONV_2D 3x3 -> t0 -> 1 CONV_2D 1x1 -> out: a pair the driver fuses (the
/// depthwise result stays on chip).
Model depthwisePointwiseModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 12, 12, 32}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 12, 12, 32}, 1.0f / 16, 128), 1.0f / 16, 128};
    std::vector<uint8_t> weights(9 * 32);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i * 89 + 7);
    std::vector<int32_t> bias(32);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<int32_t>(i * 61 % 400) - 200;
    const uint32_t filter = b.addConstant(kQ8, {1, 3, 3, 32}, weights, 1.0f / 64, 128);
    const uint32_t biasOperand =
        b.addConstant(OperandType::TENSOR_INT32, {32}, bias, in.scale / 64, 0);
    std::vector<uint32_t> dw{in.operand, filter, biasOperand};
    for (int32_t v : {1, 1, 1, 1, 1, 1, 1, 0}) dw.push_back(b.addInt32(v));
    b.addOperation(OperationType::DEPTHWISE_CONV_2D, dw, {t0.operand});
    const QuantTensor out{b.addOutput(kQ8, {1, 12, 12, 48}, 1.0f / 8, 128), 1.0f / 8, 128};
    addConv(b, t0, 32, 48, 1, out, 11);
    return b.build();
}

std::vector<uint32_t> ops(std::initializer_list<uint32_t> list) {
    return list;
}

}  // namespace

TEST_CASE("host_runtime_partitions_like_android") {
    const Model model = diamondModel();
    REQUIRE(validateModel(model).ok());
    // Operation 1 on the CPU: the NPU takes 0 and then 2 (ready once 0 ran) before the runtime
    // switches to the CPU, and 3 waits for both.
    const std::vector<bool> onNpu{true, false, true, true};
    const auto partitions = partitionOperations(model, onNpu);
    REQUIRE(partitions.size() == 3);
    CHECK(partitions[0].npu);
    CHECK(partitions[0].operations == ops({0, 2}));
    CHECK_FALSE(partitions[1].npu);
    CHECK(partitions[1].operations == ops({1}));
    CHECK(partitions[2].npu);
    CHECK(partitions[2].operations == ops({3}));

    const auto single = singleOperationPartitions(model, onNpu);
    REQUIRE(single.size() == 4);
    CHECK(single[1].operations == ops({1}));
    CHECK_FALSE(single[1].npu);

    // t0 (operand 1) leaves partition 0 for operation 1; t1 and t2 meet in partition 2.
    const auto exported = exportedOperands(model, partitions, false);
    CHECK(exported[1]);
    CHECK(exported[2]);
    CHECK(exported[3]);
    CHECK(exported[4]);
    CHECK_FALSE(exported[0]);

    auto first = extractPartition(model, partitions[0].operations, exported);
    REQUIRE(first.ok());
    CHECK(first->inputs == ops({0}));
    CHECK(first->outputs == ops({1, 3}));
    CHECK(first->operations == ops({0, 2}));
    CHECK(validateModel(first->model).ok());
    auto last = extractPartition(model, partitions[2].operations, exported);
    REQUIRE(last.ok());
    CHECK(last->inputs == ops({2, 3}));
    CHECK(last->outputs == ops({4}));
    CHECK(validateModel(last->model).ok());

    // Each partition run on the golden and chained gives the whole model's result.
    std::vector<TensorData> inputs{{{1, 2, 2, 16}, std::vector<uint8_t>(64)}};
    std::iota(inputs[0].bytes.begin(), inputs[0].bytes.end(), uint8_t{1});
    auto whole = golden::execute(model, inputs);
    REQUIRE(whole.ok());
    std::vector<std::optional<TensorData>> values(model.main.operands.size());
    values[0] = inputs[0];
    for (const Partition& p : partitions) {
        auto part = extractPartition(model, p.operations, exported);
        REQUIRE(part.ok());
        std::vector<TensorData> in;
        for (uint32_t k : part->inputs) in.push_back(*values[k]);
        auto out = golden::execute(part->model, in);
        REQUIRE(out.ok());
        for (size_t i = 0; i < part->outputs.size(); ++i) values[part->outputs[i]] = (*out)[i];
    }
    CHECK(values[4]->bytes == (*whole)[0].bytes);

    // Every result exported: the partition of operation 1 alone still has an output.
    const auto all = exportedOperands(model, single, true);
    for (uint32_t k = 1; k < 5; ++k) CHECK(all[k]);
    CHECK_FALSE(extractPartition(model, ops({1}), std::vector<bool>(5, false)).ok());
}

TEST_CASE("host_runtime_auto_partitions_and_matches_golden") {
    const Model model = mixedModel();
    REQUIRE(validateModel(model).ok());
    // The test's premise: the driver takes everything but SELECT.
    for (uint32_t i : {0u, 2u, 3u})
        REQUIRE_MESSAGE(driver::checkOperationSupported(model, i).ok(), i);
    REQUIRE_FALSE(driver::checkOperationSupported(model, 1).ok());

    auto runtime = HostRuntime::create(model, {});
    REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
    const auto& partitions = (*runtime)->partitions();
    REQUIRE(partitions.size() == 3);
    CHECK(partitions[0].npu);
    CHECK(partitions[0].operations == ops({0, 3}));
    CHECK_FALSE(partitions[1].npu);
    CHECK(partitions[1].operations == ops({1}));
    CHECK(partitions[2].npu);
    CHECK(partitions[2].operations == ops({2}));
    CHECK((*runtime)->cpuReasons()[1].find("SELECT") != std::string::npos);

    auto inputs = randomModelInputs(model, 3);
    REQUIRE(inputs.ok());
    ExecutionRecord record;
    auto outputs = (*runtime)->execute(*inputs, &record);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    auto reference = golden::execute(model, *inputs);
    REQUIRE(reference.ok());
    REQUIRE(outputs->size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        CHECK((*outputs)[i].dimensions == (*reference)[i].dimensions);
        CHECK((*outputs)[i].bytes == (*reference)[i].bytes);
    }
    // The outputs are not degenerate: the comparison means something.
    const auto stats = checkTensor("output 0", 0, model.main.operands[model.main.outputIndexes[0]],
                                   false, (*outputs)[0], nullptr);
    CHECK(stats.device->max > stats.device->min);

    // Where things ran and what the NPU did.
    CHECK(record.operations[0].npu);
    CHECK_FALSE(record.operations[1].npu);
    CHECK(record.operations[2].npu);
    CHECK(record.operations[3].npu);
    REQUIRE(record.partitions.size() == 3);
    REQUIRE(record.partitions[0].job);
    REQUIRE(record.partitions[2].job);
    CHECK_FALSE(record.partitions[1].job);
    CHECK(record.npuCycles ==
          record.partitions[0].job->total.cycles + record.partitions[2].job->total.cycles);
    CHECK(record.npuCycles > 0);
    // The 3x3 convolution's multiply-accumulates, padding taps included (PERF_MACS).
    CHECK(record.partitions[0].job->total.macs >= 8 * 8 * 16 * 16 * 9);
}

TEST_CASE("host_runtime_attributes_counters_to_operations") {
    const Model model = mixedModel();
    RuntimeOptions options;
    options.profileSampleCycles = 64;
    auto runtime = HostRuntime::create(model, options);
    REQUIRE(runtime.ok());
    auto inputs = randomModelInputs(model, 5);
    REQUIRE(inputs.ok());
    ExecutionRecord record;
    REQUIRE((*runtime)->execute(*inputs, &record).ok());
    const NpuJobProfile& job = *record.partitions[0].job;
    // The shares of operations 0 and 3 add up to the job.
    REQUIRE(record.operations[0].counters);
    REQUIRE(record.operations[3].counters);
    NpuCounters sum = *record.operations[0].counters;
    sum.add(*record.operations[3].counters);
    CHECK(sum.cycles == job.total.cycles);
    CHECK(sum.macs == job.total.macs);
    CHECK(sum.dmaBytesWritten == job.total.dmaBytesWritten);
    // The convolution has the array's work; the ADD has none.
    CHECK(record.operations[0].counters->macs == job.total.macs);
    CHECK(record.operations[3].counters->macs == 0);
    CHECK(record.operations[3].counters->dmaBytesWritten >= 8 * 8 * 16);
    CHECK(record.operations[0].counters->utilization() > 0.0);
    CHECK_FALSE(record.operations[1].counters);

    // Sampling reads registers while the job runs but does not change its cycle count.
    auto plain = HostRuntime::create(model, {});
    REQUIRE(plain.ok());
    ExecutionRecord plainRecord;
    REQUIRE((*plain)->execute(*inputs, &plainRecord).ok());
    CHECK(plainRecord.npuCycles == record.npuCycles);
}

TEST_CASE("host_runtime_backends_in_the_cts_runner") {
    CtsTest test;
    test.name = "mixed";
    test.model = mixedModel();
    auto inputs = randomModelInputs(test.model, 11);
    REQUIRE(inputs.ok());
    test.inputs = *inputs;
    auto expected = golden::execute(test.model, test.inputs);
    REQUIRE(expected.ok());
    test.expectedOutputs = *expected;
    test.outputIgnored.assign(expected->size(), false);

    // auto runs it (dynamic output shapes and a short output buffer included); npu alone
    // cannot, since SELECT stays on the CPU.
    auto automatic = makeAutoBackend();
    CtsTestResult r = runCtsTest(*automatic, test, "host_runtime_test");
    CHECK_MESSAGE(r.verdict == Verdict::PASSED, r.message);
    auto npu = makeNpuBackend();
    CHECK(runCtsTest(*npu, test, "host_runtime_test").verdict == Verdict::UNSUPPORTED);

    // The convolution and the ADD alone: npu runs them too.
    CtsTest npuOnly = test;
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, t0, 7);
    const uint32_t out = b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 8, 128);
    b.addOperation(OperationType::ADD, {t0.operand, t0.operand, b.addInt32(0)}, {out});
    npuOnly.model = b.build();
    auto npuExpected = golden::execute(npuOnly.model, npuOnly.inputs);
    REQUIRE(npuExpected.ok());
    npuOnly.expectedOutputs = *npuExpected;
    npuOnly.outputIgnored.assign(1, false);
    r = runCtsTest(*npu, npuOnly, "host_runtime_test");
    CHECK_MESSAGE(r.verdict == Verdict::PASSED, r.message);
    r = runCtsTest(*automatic, npuOnly, "host_runtime_test");
    CHECK_MESSAGE(r.verdict == Verdict::PASSED, r.message);
}

TEST_CASE("host_runtime_zero_sized_input_falls_back_to_the_cpu") {
    // BOX_WITH_NMS_LIMIT keeps no box, so the ADD on the NPU would get zero-sized inputs, which
    // no request can carry: as Android's runtime, the whole model falls back to the CPU.
    auto file = readCtsFile(std::string(NNCOSIM_CTS_DIR) + "/V1_2/add_v1_2.json");
    REQUIRE(file.ok());
    const CtsTest* test = nullptr;
    for (const CtsTest& t : file->tests) {
        if (t.name == "add_v1_2_zero_sized_quant8") test = &t;
    }
    REQUIRE(test != nullptr);
    auto automatic = makeAutoBackend();
    const CtsTestResult r = runCtsTest(*automatic, *test, file->path);
    CHECK_MESSAGE(r.verdict == Verdict::PASSED, r.message);

    auto runtime = HostRuntime::create(test->model, {});
    REQUIRE(runtime.ok());
    const uint32_t add = static_cast<uint32_t>(test->model.main.operations.size() - 1);
    REQUIRE(test->model.main.operations[add].type == OperationType::ADD);
    CHECK((*runtime)->cpuReasons()[add].empty());  // planned for the NPU
    ExecutionRecord record;
    REQUIRE((*runtime)->execute(test->inputs, &record).ok());
    for (const OperationRecord& op : record.operations) {
        CHECK_FALSE(op.npu);
        CHECK(op.cpuReason.find("zero-sized") != std::string::npos);
    }
    REQUIRE_FALSE(record.partitions.empty());
    CHECK(record.partitions.back().operations.size() == test->model.main.operations.size());
}

TEST_CASE("host_runtime_fused_operations_report_as_one") {
    const Model model = depthwisePointwiseModel();
    REQUIRE(validateModel(model).ok());
    auto inputs = randomModelInputs(model, 9);
    REQUIRE(inputs.ok());
    auto reference = golden::execute(model, *inputs);
    REQUIRE(reference.ok());
    RuntimeOptions options;
    options.profileSampleCycles = 64;
    auto runtime = HostRuntime::create(model, options);
    REQUIRE(runtime.ok());
    ExecutionRecord record;
    auto outputs = (*runtime)->execute(*inputs, &record);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    CHECK((*outputs)[0].bytes == (*reference)[0].bytes);
    // The driver fused the pair: the depthwise layer's work is in the pointwise layer's share.
    const NpuJobProfile& job = *record.partitions.at(0).job;
    CHECK(job.fusedInto == std::map<uint32_t, uint32_t>{{0, 1}});
    REQUIRE(record.operations[0].fusedInto);
    CHECK(*record.operations[0].fusedInto == 1);
    CHECK_FALSE(record.operations[0].counters);
    REQUIRE(record.operations[1].counters);
    CHECK(record.operations[1].counters->cycles == job.total.cycles);
    CHECK(record.operations[1].counters->macs == job.total.macs);
    CHECK(job.total.macs >= 12 * 12 * 32 * 9 + 12 * 12 * 32 * 48);

    // With every result visible (the first-divergence search), the pair is not fused: each
    // operation has its own share and the intermediate tensor crosses the host.
    options.exposeIntermediates = true;
    auto exposed = HostRuntime::create(model, options);
    REQUIRE(exposed.ok());
    ExecutionRecord exposedRecord;
    REQUIRE((*exposed)->execute(*inputs, &exposedRecord).ok());
    CHECK(exposedRecord.partitions.at(0).job->fusedInto.empty());
    CHECK_FALSE(exposedRecord.operations[0].fusedInto);
    REQUIRE(exposedRecord.operations[0].counters);
    CHECK(exposedRecord.operations[0].counters->macs > 0);
    CHECK(exposedRecord.values[model.main.operations[0].outputs[0]].has_value());
    // The fused job is the faster one.
    CHECK(record.npuCycles < exposedRecord.npuCycles);

    // `nncosim run` names the fusion in its report.
    auto report = runModel("depthwise_pointwise", model, *inputs, RunOptions{});
    REQUIRE_MESSAGE(report.ok(), report.status().message);
    CHECK(report->passed());
    CHECK(formatReport(*report).find("fused with 1") != std::string::npos);
    CHECK(reportJson(*report)["operations"][0]["fused_into"] == 1);
}

TEST_CASE("host_runtime_profiles_every_job_of_a_control_flow_partition") {
    // A WHILE runs a job per condition and per body: the partition's figures are their sum,
    // and the lone WHILE operation has them all. Fibonacci with n = 5 runs 9 jobs, n = 1 one.
    auto file = readCtsFile(std::string(NNCOSIM_CTS_DIR) + "/V1_3/while_fib.json");
    REQUIRE(file.ok());
    std::map<std::string, uint64_t> cycles;
    for (const CtsTest& t : file->tests) {
        if (t.name != "while_fib_n_5_quant8" && t.name != "while_fib_n_1_unused_output_quant8")
            continue;
        RuntimeOptions options;
        options.placement = Placement::kNpu;
        auto runtime = HostRuntime::create(t.model, options);
        REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
        ExecutionRecord record;
        REQUIRE((*runtime)->execute(t.inputs, &record).ok());
        REQUIRE(record.partitions.size() == 1);
        REQUIRE(record.partitions[0].job);
        const NpuJobProfile& job = *record.partitions[0].job;
        CHECK(job.jobs == (t.name == "while_fib_n_5_quant8" ? 9u : 1u));
        CHECK(record.npuCycles == job.total.cycles);
        REQUIRE(record.operations[0].counters);
        CHECK(record.operations[0].counters->cycles == job.total.cycles);
        cycles[t.name] = job.total.cycles;
    }
    REQUIRE(cycles.size() == 2);
    CHECK(cycles["while_fib_n_5_quant8"] > 5 * cycles["while_fib_n_1_unused_output_quant8"]);
}
