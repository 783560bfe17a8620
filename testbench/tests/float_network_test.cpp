// Float networks on the NPU: the zoo's MobileNet-v1 in float32, float16 and relaxed form through
// the host runtime on the functional model. With the driver's float figures from its calibration
// run, the runtime puts every operation on the NPU (float convolutions, depthwise convolutions,
// the average pool, the fully-connected classifier and the SOFTMAX), and every output is within
// the CTS tolerance of the golden (relaxed and float16 models the relaxed one). And the float
// RESIZE_BILINEAR, which the NPU computes as the golden does, step for step.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "driver/Compiler.h"
#include "golden/Executor.h"
#include "model/Accuracy.h"
#include "model/Builder.h"
#include "testbench/ModelRun.h"
#include "testbench/Zoo.h"
#include "testbench/runtime/HostRuntime.h"

using namespace nncosim;

namespace {

std::shared_ptr<NpuContext> functionalNpu() {
    sim::PlatformConfig platform;
    platform.npu = sim::NpuImplementation::kFunctional;
    auto npu = makeNpuContext(platform);
    REQUIRE_MESSAGE(npu.ok(), npu.status().message);
    return *npu;
}

}  // namespace

TEST_CASE("npu_float_mobilenet_within_tolerance") {
    const auto npu = functionalNpu();
    for (zoo::Precision precision :
         {zoo::Precision::kFloat32, zoo::Precision::kFloat16, zoo::Precision::kRelaxed}) {
        CAPTURE(zoo::nameOf(precision));
        zoo::ZooConfig config;
        config.precision = precision;
        config.inputSize = 96;  // a 3x3 map before the average pool
        config.widthMultiplier = 0.5f;
        config.numClasses = 100;
        auto model = zoo::buildZooModel(config);
        REQUIRE_MESSAGE(model.ok(), model.status().message);
        RuntimeOptions options;
        options.npu = npu;
        auto runtime = HostRuntime::create(*model, options);
        REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
        // Every operation, the closing SOFTMAX too, on the NPU in one partition.
        const auto& partitions = (*runtime)->partitions();
        REQUIRE(partitions.size() == 1);
        CHECK(partitions[0].npu);
        CHECK(partitions[0].operations.size() == model->main.operations.size());
        CHECK(model->main.operations.back().type == OperationType::SOFTMAX);

        auto inputs = zoo::randomInputs(*model, 7);
        REQUIRE(inputs.ok());
        auto outputs = (*runtime)->execute(*inputs);
        REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
        auto reference = golden::execute(*model, *inputs);
        REQUIRE(reference.ok());
        const uint32_t out = model->main.outputIndexes[0];
        const OperandType type = model->main.operands[out].type;
        const Comparison c =
            compareTensors(type, (*reference)[0].bytes.data(), (*outputs)[0].bytes.data(),
                           elementCount(model->main.operands[out].dimensions),
                           ctsTolerance(type, isRelaxed(*model)));
        INFO(c.describe());
        CHECK(c.ok());
        CHECK(c.elements == 100);
    }
}

TEST_CASE("npu_float_resize_bilinear_is_the_golden_s") {
    // Three channels, each corner option, NHWC and NCHW: float32 bit for bit, float16 within the
    // relaxed tolerance; one NPU partition. 5x7 to 9x12 runs the formula (float16 rounds every
    // step to binary16); 5x7 to 10x28 (factors 2 and 4) and a one-pixel input run on the array
    // where their sampling allows (float16 one-pixel inputs as phases). The first float32 pixel
    // holds -0, 1e38 and the smallest subnormal: zero products keep their signs.
    struct Shape {
        uint32_t inH, inW, outH, outW;
    };
    const auto npu = functionalNpu();
    const auto check = [&](OperandType type, const Shape& shape, int corners, bool nchw) {
        CAPTURE(nameOf(type));
        CAPTURE(shape.inW);
        CAPTURE(shape.outW);
        CAPTURE(corners);
        CAPTURE(nchw);
        ModelBuilder b;
        const auto dims = [&](uint32_t h, uint32_t w) {
            return nchw ? std::vector<uint32_t>{1, 3, h, w} : std::vector<uint32_t>{1, h, w, 3};
        };
        const uint32_t in = b.addInput(type, dims(shape.inH, shape.inW));
        const uint32_t out = b.addOutput(type, dims(shape.outH, shape.outW));
        b.addOperation(OperationType::RESIZE_BILINEAR,
                       {in, b.addInt32(int32_t(shape.outW)), b.addInt32(int32_t(shape.outH)),
                        b.addBool(nchw), b.addBool(corners == 1), b.addBool(corners == 2)},
                       {out});
        const Model model = b.build();
        auto program = driver::compileModel(model, {});
        REQUIRE_MESSAGE(program.ok(), program.status().message);
        const bool onArray = std::any_of(
            program->descriptors.begin(), program->descriptors.end(), [](const npu::Descriptor& d) {
                return d.opcode == npu::Opcode::CONV || d.opcode == npu::Opcode::DWCONV;
            });
        // Integer phases: factors 2 and 4 without corner options, or one pixel
        // (each output row and column a phase of its own); NHWC.
        const bool onePixel = shape.inW == 1;
        const bool phases = !nchw && ((shape.outW == 28 && corners == 0) || onePixel);
        const bool binary32 = type == OperandType::TENSOR_FLOAT32;
        CHECK(onArray == (phases || (binary32 && onePixel)));
        RuntimeOptions options;
        options.npu = npu;
        options.placement = Placement::kNpu;
        auto runtime = HostRuntime::create(model, options);
        REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
        auto inputs = randomModelInputs(model, 5);
        REQUIRE(inputs.ok());
        if (type == OperandType::TENSOR_FLOAT32) {
            const float extremes[3] = {-0.0f, 1e38f, std::numeric_limits<float>::denorm_min()};
            std::memcpy((*inputs)[0].bytes.data(), extremes, sizeof extremes);
        }
        auto outputs = (*runtime)->execute(*inputs);
        REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
        auto reference = golden::execute(model, *inputs);
        REQUIRE(reference.ok());
        if (type == OperandType::TENSOR_FLOAT32) {
            CHECK((*outputs)[0].bytes == (*reference)[0].bytes);
        } else {
            const Comparison c =
                compareTensors(type, (*reference)[0].bytes.data(), (*outputs)[0].bytes.data(),
                               shape.outH * shape.outW * 3, ctsTolerance(type, true));
            INFO(c.describe());
            CHECK(c.ok());
        }
    };
    for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16}) {
        for (const Shape& shape : {Shape{5, 7, 9, 12}, Shape{5, 7, 10, 28}, Shape{1, 1, 9, 12}}) {
            for (int corners = 0; corners < 3; ++corners) {
                check(type, shape, corners, false);
                check(type, shape, corners, true);
            }
        }
    }
}
