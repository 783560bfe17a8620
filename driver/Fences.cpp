// Fence placement (placeFences): a descriptor waits for the latest earlier one that writes a
// byte it reads, or reads weights it overwrites.
#include <algorithm>
#include <map>

#include "driver/ChainBuilder.h"

namespace nncosim::npu {

namespace {

// For each byte range, the latest descriptor that touched it (writes, or weight reads), kept as
// disjoint segments: a later touch repaints what it covers.
class LastToucher {
  public:
    void paint(uint64_t begin, uint64_t end, uint32_t index) {
        if (begin >= end) return;
        cut(begin);
        cut(end);
        mSegments.erase(mSegments.lower_bound(begin), mSegments.lower_bound(end));
        mSegments[begin] = {end, index};
    }
    /// The latest descriptor that touched a byte of [begin, end).
    std::optional<uint32_t> latest(uint64_t begin, uint64_t end) const {
        std::optional<uint32_t> found;
        if (begin >= end) return found;
        auto it = mSegments.upper_bound(begin);
        if (it != mSegments.begin()) --it;
        for (; it != mSegments.end() && it->first < end; ++it) {
            if (it->second.end > begin) found = std::max(found.value_or(0), it->second.index);
        }
        return found;
    }

  private:
    struct Segment {
        uint64_t end;
        uint32_t index;
    };
    // Splits the segment containing `at` so that one starts there.
    void cut(uint64_t at) {
        auto it = mSegments.upper_bound(at);
        if (it == mSegments.begin()) return;
        --it;
        if (it->first < at && it->second.end > at) {
            mSegments[at] = it->second;
            it->second.end = at;
        }
    }
    std::map<uint64_t, Segment> mSegments;  // by first byte
};

struct ByteRange {
    uint64_t begin = 0, end = 0;
};

ByteRange rangeOf(const TensorDesc& t) {
    const auto last = [](uint32_t count) { return uint64_t{count > 0 ? count - 1 : 0}; };
    return {t.addr, uint64_t{t.addr} + last(t.count1) * t.stride1 + last(t.count2) * t.stride2 +
                        last(t.count3) * t.stride3 + t.inner};
}

}  // namespace

void placeFences(std::vector<Descriptor>& chain) {
    constexpr uint32_t kMaxSkip = (1u << 7) - 1;  // FENCE_SKIP's width
    LastToucher writers, weightReaders;
    for (uint32_t i = 0; i < chain.size(); ++i) {
        Descriptor& d = chain[i];
        d.flags &= ~static_cast<uint32_t>(DescFlag::FENCE);
        d.fenceSkip = 0;
        if (d.opcode == Opcode::NOP) continue;
        std::vector<ByteRange> reads;
        if (op::usesA(d.opcode) && !(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_IN)))
            reads.push_back(rangeOf(d.a));
        if (readsB(d)) reads.push_back(rangeOf(d.b));
        const uint64_t weightBytes = weightStreamWords(d) * kDramBusBytes;
        const ByteRange weights{d.wAddr, d.wAddr + weightBytes};
        if (weightBytes > 0) reads.push_back(weights);
        const bool writes = !(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_OUT));
        const ByteRange out = rangeOf(d.out);

        std::optional<uint32_t> waitFor;
        const auto later = [&](std::optional<uint32_t> j) {
            if (j) waitFor = std::max(waitFor.value_or(0), *j);
        };
        for (const ByteRange& r : reads) later(writers.latest(r.begin, r.end));
        if (writes) later(weightReaders.latest(out.begin, out.end));
        if (waitFor) {
            d.flags |= static_cast<uint32_t>(DescFlag::FENCE);
            d.fenceSkip = std::min(i - 1 - *waitFor, kMaxSkip);
        }
        if (writes) writers.paint(out.begin, out.end, i);
        if (weightBytes > 0) weightReaders.paint(weights.begin, weights.end, i);
    }
}

}  // namespace nncosim::npu
