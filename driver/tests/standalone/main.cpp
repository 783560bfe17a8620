// Links nncosim_driver and nothing of sim/: proof that the driver builds and links without
// SystemC or Verilator (a driver for silicon would link the same way). Compiles a small quant8
// convolution and checks the program is there.
#include <cstdio>

#include "driver/Compiler.h"
#include "model/Builder.h"

int main() {
    using namespace nncosim;
    ModelBuilder b;
    const auto q8 = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t in = b.addInput(q8, {1, 4, 4, 16}, 0.5f, 128);
    const uint32_t filter =
        b.addConstant(q8, {16, 1, 1, 16}, std::vector<uint8_t>(256, 130), 0.25f, 128);
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_INT32, {16}, std::vector<int32_t>(16, 3), 0.125f, 0);
    std::vector<uint32_t> inputs{in, filter, bias};
    for (int32_t v : {0, 0, 0, 0, 1, 1, 0}) inputs.push_back(b.addInt32(v));
    const uint32_t out = b.addOutput(q8, {1, 4, 4, 16}, 1.0f, 128);
    b.addOperation(OperationType::CONV_2D, inputs, {out});
    auto program = driver::compileModel(b.build(), {});
    if (!program) {
        std::fprintf(stderr, "compile failed: %s\n", program.status().message.c_str());
        return 1;
    }
    std::printf("compiled without the platform: %zu descriptors\n", program->descriptors.size());
    return program->descriptors.empty() ? 1 : 0;
}
