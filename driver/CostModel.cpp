#include "driver/CostModel.h"

#include <algorithm>

#include "driver/Descriptor.h"

namespace nncosim::driver {
namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

uint64_t estimateWindowCycles(const npu::Descriptor& d) {
    const auto has = [&](npu::DescFlag f) { return (d.flags & static_cast<uint32_t>(f)) != 0; };
    const uint64_t words = ceilDiv(d.a.inner, npu::kDramBusBytes);
    uint64_t load = has(npu::DescFlag::CHAIN_IN) ? 0 : uint64_t{d.a.count1} * d.a.count2 * words;
    if (has(npu::DescFlag::RESIDUAL))  // B, OUT's shape, loaded after A
        load += uint64_t{d.out.count1} * d.out.count2 * ceilDiv(d.out.inner, npu::kDramBusBytes);
    // A float array operation's vector is vw words. The next weight block streams while the
    // array runs the pixels of this one: 16 rows of a word (int8) or kFloatWeightRowWords, so a
    // step takes at least that many cycles (a fully connected layer's one pixel waits for them).
    const uint64_t vw = npu::vectorWords(d);
    uint64_t pixels = uint64_t{d.out.count1} * d.out.count2;
    if (npu::op::usesArray(d.opcode))
        pixels =
            std::max<uint64_t>(pixels, npu::kArrayRows * (vw > 1 ? npu::kFloatWeightRowWords : 1));
    const uint64_t blocks = ceilDiv(d.out.inner, npu::kArrayCols * vw);
    // Pooling: every tap of every input word; the array: every K step of every block.
    uint64_t steps = uint64_t{d.kernelH} * d.kernelW * words;
    if (npu::op::usesArray(d.opcode)) steps = blocks * npu::kernelSteps(d);
    return load + pixels * steps + 40;
}

uint64_t estimateDescriptorCycles(const npu::Descriptor& d) {
    if (npu::op::isWindow(d.opcode)) return estimateWindowCycles(d);
    if (d.opcode == npu::Opcode::NOP) return 1;
    const uint64_t rows = uint64_t{d.a.count1} * d.a.count2 * d.a.count3;
    const uint64_t words = rows * ceilDiv(d.a.inner, npu::kDramBusBytes);
    return words * (npu::op::usesB(d.opcode) ? 3 : 2) + 30;
}

}  // namespace nncosim::driver
