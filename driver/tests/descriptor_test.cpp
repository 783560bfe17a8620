// What a descriptor means (driver/Descriptor.h): the rules that refuse one, as the NPU decodes
// them, and the program check debug builds of the compiler run.
#include <doctest/doctest.h>

#include <vector>

#include "driver/Compiler.h"
#include "driver/Descriptor.h"
#include "model/Builder.h"
#include "model/CtsReader.h"
#include "model/Validation.h"

using namespace nncosim;
using npu::Descriptor;
using npu::ErrorCode;

namespace {

/// An NHWC image of 16 channels, `size` x `size` pixels, at `addr`.
npu::TensorDesc image(uint32_t addr, uint32_t size) {
    npu::TensorDesc t;
    t.addr = addr;
    t.inner = 16;
    t.count1 = t.count2 = size;
    t.stride1 = 16;
    t.stride2 = 16 * size;
    return t;
}

/// A 3x3 DWCONV tile of 16 channels, 4x4 output pixels.
Descriptor depthwise() {
    Descriptor d;
    d.opcode = npu::Opcode::DWCONV;
    d.a = image(0x1000, 6);
    d.out = image(0x2000, 4);
    d.kernelH = d.kernelW = 3;
    d.strideH = d.strideW = d.dilationH = d.dilationW = 1;
    d.wAddr = 0x3000;
    d.actMin = -128, d.actMax = 127;
    return d;
}

}  // namespace

TEST_CASE("descriptor_error_refuses_what_the_npu_refuses") {
    const npu::ChainContext start;
    CHECK(npu::descriptorError(depthwise(), start) == ErrorCode::NONE);

    Descriptor d = depthwise();
    d.opcode = static_cast<npu::Opcode>(npu::kOpcodeCount);
    CHECK(npu::descriptorError(d, start) == ErrorCode::BAD_OPCODE);

    d = depthwise();
    d.strideW = 0;
    CHECK(npu::descriptorError(d, start) == ErrorCode::BAD_FIELD);

    // TAPS: kernel taps on array rows, a dilation of 1 across.
    d = depthwise();
    d.flags |= static_cast<uint32_t>(npu::DescFlag::TAPS);
    CHECK(npu::descriptorError(d, start) == ErrorCode::NONE);
    CHECK(npu::tapsFit(3, 3, 1, 1));
    d.dilationW = 2;
    CHECK(npu::descriptorError(d, start) == ErrorCode::BAD_FIELD);
    CHECK_FALSE(npu::tapsFit(3, 3, 1, 2));

    // A CHAIN_OUT result needs its reader: a chain that ends on one, or a descriptor after it
    // that does not take it, is refused where the RTL refuses it.
    Descriptor producer = depthwise();
    producer.flags |= static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT);
    Descriptor reader = depthwise();
    const std::vector<Descriptor> unread = {producer, reader};
    const npu::ChainError error = npu::chainError(unread.data(), unread.size());
    CHECK(error.index == 1);
    CHECK(error.code == ErrorCode::BAD_FIELD);
    CHECK(npu::chainError(unread.data(), 1).code == ErrorCode::NONE);
}

TEST_CASE("descriptor_every_compiled_program_decodes") {
    // What debug builds check inside the compiler, here in every build: a small network's program
    // is one the NPU decodes descriptor by descriptor.
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t in = b.addInput(type, {1, 8, 8, 16}, 0.05f, 128);
    std::vector<uint8_t> weights(16 * 3 * 3, 130);
    const uint32_t w = b.addConstant(type, {1, 3, 3, 16}, weights, 0.02f, 128);
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_INT32, {16}, std::vector<int32_t>(16, 7), 0.001f, 0);
    const uint32_t out = b.addOutput(type, {1, 8, 8, 16}, 0.1f, 128);
    b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                   {in, w, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                    b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                   {out});
    auto program = driver::compileModel(b.build(), {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    const auto& chain = program->descriptors;
    CHECK(npu::chainError(chain.data(), chain.size()).code == ErrorCode::NONE);
}

TEST_CASE("descriptor_cts_programs_decode") {
    // Every program the compiler writes for a claimed CTS model of the V1_0 set is one the NPU
    // decodes descriptor by descriptor (the debug builds' compiler check, in every build).
    size_t programs = 0;
    auto files = findJsonFiles({std::string(NNCOSIM_CTS_DIR) + "/V1_0"});
    REQUIRE(files.ok());
    for (const std::string& path : *files) {
        auto file = readCtsFile(path);
        if (!file) continue;
        for (const CtsTest& test : file->tests) {
            if (!test.readError.empty() || !validateModel(test.model).ok()) continue;
            bool supported = true;
            for (uint32_t i = 0; i < test.model.main.operations.size(); ++i)
                supported = supported && driver::checkOperationSupported(test.model, i).ok();
            if (!supported || !driver::compileTimeInputs(test.model).empty()) continue;
            auto program = driver::compileModel(test.model, {});
            if (!program) continue;
            const auto refused =
                npu::chainError(program->descriptors.data(), program->descriptors.size());
            CHECK_MESSAGE(refused.code == ErrorCode::NONE, test.name, ": descriptor ",
                          refused.index);
            ++programs;
        }
    }
    CHECK(programs > 150);  // 195 when written
}
