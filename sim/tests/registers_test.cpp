// The generated register/descriptor header: encode and decode are inverses, fields land where
// the description puts them, and signed fields sign-extend.
#include <doctest/doctest.h>

#include "driver/NpuRegisters.h"

namespace nncosim::npu {
namespace {

TEST_CASE("sim_registers_descriptor_round_trip") {
    Descriptor d;
    d.opcode = Opcode::CONV;
    d.flags = static_cast<uint32_t>(DescFlag::LAST) | static_cast<uint32_t>(DescFlag::FENCE);
    d.aSigned = true;
    d.outSigned = true;
    d.tag = 0xdeadbeef;
    d.a = {0x1234, 3, 224, 3, 224, 1, 672, 0};
    d.out = {0x8000, 64, 112, 64, 112, 1, 7168, 0};
    d.wAddr = 0x40000;
    d.kernelW = 3;
    d.kernelH = 5;
    d.strideW = 2;
    d.strideH = 1;
    d.dilationW = 1;
    d.dilationH = 4;
    d.padLeft = 1;
    d.padTop = 2;
    d.aZeroPoint = -128;
    d.bZeroPoint = 255;
    d.outZeroPoint = -5;
    d.actMin = -128;
    d.actMax = 127;
    d.leftShift = 20;
    d.aMultiplier = -1073741824;
    d.outShift = -31;
    d.bShift = 31;

    const DescriptorWords w = d.encode();
    CHECK(w[0] == (1u | (3u << 8) | (1u << 16) | (1u << 18)));
    CHECK(w[1] == 0xdeadbeef);
    CHECK(w[2] == 0x1234);
    CHECK(w[3] == (3u | (224u << 16)));
    CHECK(w[20] == 0x40000);
    CHECK(w[25] == (0x180u | (0xffu << 16)));
    CHECK(w[31] == (0u | (31u << 8) | (33u << 16)));  // -31 in 6 bits is 33

    const Descriptor back = Descriptor::decode(w);
    CHECK(back.encode() == w);
    CHECK(back.opcode == Opcode::CONV);
    CHECK(back.aZeroPoint == -128);
    CHECK(back.bZeroPoint == 255);
    CHECK(back.outZeroPoint == -5);
    CHECK(back.outShift == -31);
    CHECK(back.bShift == 31);
    CHECK(back.aMultiplier == -1073741824);
    CHECK(back.out.stride2 == 7168);
    CHECK(back.a.count1 == 224);
}

TEST_CASE("sim_registers_map") {
    CHECK(reg::kId == 0x000);
    CHECK(reset::kId == kNpuId);
    CHECK(reset::kIrqEnable == (field::kIrqEnableDone | field::kIrqEnableError));
    CHECK(reset::kConfigArray == (kArrayRows | (kArrayCols << 8) | (kDramBusBytes << 16)));
    CHECK(kDescriptorWords * 4 == 128);
}

}  // namespace
}  // namespace nncosim::npu
