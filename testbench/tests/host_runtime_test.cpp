// The host runtime: Android-like partitioning, partitions as models, CPU fallback on the golden
// next to the NPU (the Verilated RTL), per-operation NPU figures, and the auto backend through
// the conformance runner.
#include <doctest/doctest.h>

#include <numeric>

#include "driver/Compiler.h"
#include "golden/Executor.h"
#include "model/Validation.h"
#include "testbench/Backend.h"
#include "testbench/CtsRunner.h"
#include "testbench/HostRuntime.h"
#include "testbench/ModelRun.h"
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

/// in -> 0 CONV_2D 3x3 -> t0 -> 1 SOFTMAX (no NPU) -> t1 -> 2 MAX_POOL_2D 2x2 -> out0, and
/// t0 -> 3 ADD (t0 + t0) -> out1: the NPU, the CPU, the NPU again, and a branch the runtime
/// keeps on the NPU with the first convolution.
Model mixedModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, t0, 7);
    const uint32_t t1 = b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 256, 0);
    b.addOperation(OperationType::SOFTMAX, {t0.operand, b.addFloat32(1.0f)}, {t1});
    const uint32_t out0 = b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f / 256, 0);
    std::vector<uint32_t> pool{t1};
    for (int32_t v : {0, 0, 0, 0, 2, 2, 2, 2, 0}) pool.push_back(b.addInt32(v));
    b.addOperation(OperationType::MAX_POOL_2D, pool, {out0});
    const uint32_t out1 = b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 8, 128);
    b.addOperation(OperationType::ADD, {t0.operand, t0.operand, b.addInt32(0)}, {out1});
    return b.build();
}

std::vector<uint32_t> ops(std::initializer_list<uint32_t> list) { return list; }

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
    // The test's premise: the driver takes everything but SOFTMAX.
    for (uint32_t i : {0u, 2u, 3u}) REQUIRE_MESSAGE(driver::checkOperationSupported(model, i).ok(), i);
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
    CHECK((*runtime)->cpuReasons()[1].find("SOFTMAX") != std::string::npos);

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
    const auto stats = checkTensor("output 0", 0, model.main.operands[model.main.outputIndexes[0]], false,
                                   (*outputs)[0], nullptr);
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
    CHECK(record.npuCycles == record.partitions[0].job->total.cycles + record.partitions[2].job->total.cycles);
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
    // cannot, since SOFTMAX stays on the CPU.
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
