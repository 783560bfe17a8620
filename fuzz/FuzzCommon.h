// Shared by the fuzz targets: limits that keep one input cheap (a fuzz input must never make a
// target allocate gigabytes or run for seconds), and the libFuzzer entry point's declaration.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nncosim::fuzz {

/// Models whose tensors need more than this in all are validated but never executed.
inline constexpr uint64_t kExecuteLimitBytes = uint64_t{1} << 20;
/// A WHILE loop of an executed model stops after this long (MISSED_DEADLINE_TRANSIENT).
inline constexpr std::chrono::milliseconds kLoopTimeout{5};
/// The deadline of an execution whose program the input wrote (a cache): a job the device
/// would run for minutes ends with MISSED_DEADLINE_TRANSIENT.
inline constexpr std::chrono::milliseconds kExecuteTimeout{300};

/// A fuzz input read as a sequence of little-endian integers; past its end every read is 0, so
/// any input decodes.
class ByteReader {
  public:
    ByteReader(const uint8_t* data, size_t size) : mData(data), mSize(size) {}
    bool empty() const { return mPos >= mSize; }
    uint8_t u8() { return mPos < mSize ? mData[mPos++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
    /// The next `n` bytes, fewer at the end of the input.
    std::vector<uint8_t> bytes(size_t n) {
        n = std::min(n, mSize - std::min(mPos, mSize));
        std::vector<uint8_t> out(mData + mPos, mData + mPos + n);
        mPos += n;
        return out;
    }
    /// What is left.
    std::vector<uint8_t> rest() { return bytes(mSize); }

  private:
    const uint8_t* mData;
    size_t mSize;
    size_t mPos = 0;
};

}  // namespace nncosim::fuzz

/// libFuzzer's entry point, defined once per target: must return 0 and must not crash, hang or
/// leak on any input.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
