// Relaxed float32 models (relaxComputationFloat32toFloat16) run as their float16 form: binary16
// tensors on the device, the request's float32 tensors converted by the runtime. Checked on the
// compiled program and against the golden with the relaxed tolerance.
#include <cstring>
#include <set>

#include "driver/Compiler.h"
#include "driver/tests/TestUtil.h"
#include "golden/Executor.h"
#include "model/Accuracy.h"
#include "model/Builder.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

std::vector<float> ramp(size_t n, float scale, uint32_t seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = scale * (static_cast<float>((i * 37 + seed * 11) % 29) - 14.0f) / 14.0f;
    return v;
}

// [1, 8, 8, 16] -> DEPTHWISE_CONV_2D 3x3 (RELU6) -> CONV_2D 1x1 to 24 channels -> output. With
// `runtimeFilter` the depthwise filter is a model input, which the NPU takes in float32 only.
Model dwPw(bool relaxed, bool runtimeFilter) {
    ModelBuilder b;
    const auto f32 = OperandType::TENSOR_FLOAT32;
    const uint32_t in = b.addInput(f32, {1, 8, 8, 16});
    const uint32_t dwFilter = runtimeFilter ? b.addInput(f32, {1, 3, 3, 16})
                                            : b.addConstant(f32, {1, 3, 3, 16}, ramp(144, 0.5f, 1));
    const uint32_t mid = b.addOperand(f32, {1, 8, 8, 16});
    b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                   {in, dwFilter, b.addConstant(f32, {16}, ramp(16, 0.25f, 2)), b.addInt32(1),
                    b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(3)},
                   {mid});
    const uint32_t out = b.addOutput(f32, {1, 8, 8, 24});
    b.addOperation(OperationType::CONV_2D,
                   {mid, b.addConstant(f32, {24, 1, 1, 16}, ramp(384, 0.3f, 3)),
                    b.addConstant(f32, {24}, ramp(24, 0.1f, 4)), b.addInt32(1), b.addInt32(1),
                    b.addInt32(1), b.addInt32(0)},
                   {out});
    b.setRelaxed(relaxed);
    return b.build();
}

std::vector<TensorData> inputsOf(const Model& model) {
    std::vector<TensorData> inputs;
    for (uint32_t k : model.main.inputIndexes) {
        const auto& dims = model.main.operands[k].dimensions;
        const auto values = ramp(elementCount(dims), 2.0f, k);
        TensorData t{dims, std::vector<uint8_t>(values.size() * 4)};
        std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
        inputs.push_back(std::move(t));
    }
    return inputs;
}

// The formats of the program's CONV and DWCONV descriptors.
std::set<uint32_t> convFormats(const Program& p) {
    std::set<uint32_t> formats;
    for (const auto& d : p.descriptors) {
        if (d.opcode == npu::Opcode::CONV || d.opcode == npu::Opcode::DWCONV)
            formats.insert(d.format);
    }
    return formats;
}

// Runs `model` through the driver; the comparison of its output with the golden's.
Comparison runAgainstGolden(const IDevice& device, const Model& model) {
    auto run = runWithGolden(device, model, inputsOf(model));
    REQUIRE_MESSAGE(run.ok(), run.status().message);
    return compareTensors(
        OperandType::TENSOR_FLOAT32, run->golden[0].bytes.data(), run->device[0].data(),
        run->golden[0].bytes.size() / 4,
        ctsTolerance(OperandType::TENSOR_FLOAT32, model.relaxComputationFloat32toFloat16));
}

}  // namespace

TEST_CASE("driver_relaxed_runs_in_binary16") {
    auto device = makeTestDevice();
    const auto fp16 = static_cast<uint32_t>(npu::Format::FP16);
    const auto fp32 = static_cast<uint32_t>(npu::Format::FP32);

    // Relaxed: binary16 descriptors; the request's tensors stay float32 (4 bytes an element).
    const Model relaxed = dwPw(true, false);
    REQUIRE(validateModel(relaxed).ok());
    auto program = compileModel(relaxed, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    CHECK(convFormats(*program) == std::set<uint32_t>{fp16});
    REQUIRE(program->inputs.size() == 1);
    CHECK(program->inputs[0].binary16OnDevice);
    CHECK(program->inputs[0].size == 8 * 8 * 16 * 4);
    CHECK(program->outputs[0].binary16OnDevice);
    CHECK(program->outputs[0].size == 8 * 8 * 24 * 4);
    // The flag survives the compilation cache.
    auto copy = deserializeProgram(serializeProgram(*program), program->constants);
    REQUIRE(copy.ok());
    CHECK(copy->outputs[0].binary16OnDevice);
    const Comparison c = runAgainstGolden(*device.device, relaxed);
    CHECK_MESSAGE(c.ok(), c.mismatches, " mismatches, worst ", c.worstToleranceFraction);
    // binary16 rounding shows against the binary32 golden, within the relaxed tolerance.
    CHECK(c.maxAbsError > 1e-5);

    // The same model not relaxed: binary32, within the float32 tolerance.
    const Model strict = dwPw(false, false);
    auto strictProgram = compileModel(strict, {});
    REQUIRE(strictProgram.ok());
    CHECK(convFormats(*strictProgram) == std::set<uint32_t>{fp32});
    CHECK_FALSE(strictProgram->inputs[0].binary16OnDevice);
    CHECK(runAgainstGolden(*device.device, strict).ok());

    // A relaxed model whose weights are model inputs (packed at compile time, as float32 only)
    // stays in binary32.
    const Model runtimeFilter = dwPw(true, true);
    const auto runtimeInputs = inputsOf(runtimeFilter);
    auto runtimeProgram = compileModel(
        runtimeFilter, {}, {{runtimeFilter.main.inputIndexes[1], runtimeInputs[1].bytes}});
    REQUIRE_MESSAGE(runtimeProgram.ok(), runtimeProgram.status().message);
    CHECK(convFormats(*runtimeProgram) == std::set<uint32_t>{fp32});
    CHECK_FALSE(runtimeProgram->inputs[0].binary16OnDevice);
    CHECK(runAgainstGolden(*device.device, runtimeFilter).ok());
}
