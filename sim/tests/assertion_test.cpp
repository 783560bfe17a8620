// The RTL's SystemVerilog assertions are live: npu_fifo alone (Verilated with --assert, 8 bits x
// 4 words) is driven from C++ with a broken protocol, and the test checks that the assertion
// reports it. Legal traffic up to the edges (full, empty) reports nothing.
#include "Vnpu_fifo.h"
#include "verilated.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace nncosim::sim::testing {
namespace {

constexpr int kDepth = 4;  // -GDepth of Vnpu_fifo (sim/CMakeLists.txt)

// Captures what Verilator prints (assertion messages go to stdout) while it lives.
class CapturedOutput {
  public:
    CapturedOutput() : mFile(std::tmpfile()) {
        std::fflush(stdout);
        mSaved = dup(fileno(stdout));
        dup2(fileno(mFile), fileno(stdout));
    }
    ~CapturedOutput() { restore(); }

    std::string text() {
        restore();
        std::rewind(mFile);
        std::string text;
        char buffer[512];
        size_t n;
        while ((n = std::fread(buffer, 1, sizeof buffer, mFile)) > 0) {
            text.append(buffer, n);
        }
        return text;
    }

  private:
    void restore() {
        if (mSaved >= 0) {
            std::fflush(stdout);
            dup2(mSaved, fileno(stdout));
            close(mSaved);
            mSaved = -1;
        }
    }

    std::FILE* mFile;
    int mSaved = -1;
};

// The FIFO with its own context, so a failed assertion does not abort the test process: it
// prints its message and sets gotFinish() (Verilator's $stop without fatalOnError).
class Fifo {
  public:
    Fifo() : mModel(&mContext, "npu_fifo") {
        mContext.fatalOnError(false);
        mModel.rst_ni = 0;
        mModel.flush_i = 0;
        mModel.in_valid_i = 0;
        mModel.out_ready_i = 0;
        mModel.in_data_i = 0;
        cycle();
        mModel.rst_ni = 1;
        cycle();
    }

    // One clock cycle with these inputs; returns the output word seen before the edge.
    uint8_t step(bool push, uint8_t data, bool pop) {
        mModel.in_valid_i = push;
        mModel.in_data_i = data;
        mModel.out_ready_i = pop;
        mModel.clk_i = 0;
        mModel.eval();
        const uint8_t out = mModel.out_data_o;
        mModel.clk_i = 1;
        mModel.eval();
        return out;
    }

    bool full() {
        mModel.eval();
        return !mModel.in_ready_o;
    }
    bool empty() {
        mModel.eval();
        return !mModel.out_valid_o;
    }
    bool stopped() const { return mContext.gotFinish(); }

  private:
    void cycle() { step(false, 0, false); }

    VerilatedContext mContext;
    Vnpu_fifo mModel;
};

TEST_CASE("rtl_assertion_fires_on_broken_protocol") {
    SUBCASE("legal traffic to full and back to empty reports nothing") {
        Fifo fifo;
        CapturedOutput output;
        for (int i = 0; i < kDepth; ++i) {
            fifo.step(true, static_cast<uint8_t>(10 + i), false);
        }
        CHECK(fifo.full());
        for (int i = 0; i < kDepth; ++i) {
            CHECK(fifo.step(false, 0, true) == 10 + i);
        }
        CHECK(fifo.empty());
        // Offering nothing while full or taking nothing while empty is no violation either.
        fifo.step(false, 0, false);
        const std::string text = output.text();
        CAPTURE(text);
        CHECK_FALSE(fifo.stopped());
        CHECK(text.find("Assertion failed") == std::string::npos);
    }

    SUBCASE("a push into the full FIFO fires a_no_overflow") {
        Fifo fifo;
        CapturedOutput output;
        for (int i = 0; i < kDepth; ++i) {
            fifo.step(true, static_cast<uint8_t>(i), false);
        }
        REQUIRE(fifo.full());
        CHECK_FALSE(fifo.stopped());
        fifo.step(true, 99, false);  // the word would be lost
        const std::string text = output.text();
        CAPTURE(text);
        CHECK(fifo.stopped());
        CHECK(text.find("Assertion failed in npu_fifo.npu_fifo.a_no_overflow") !=
              std::string::npos);
    }

    SUBCASE("a pop of the empty FIFO fires a_no_underflow") {
        Fifo fifo;
        CapturedOutput output;
        REQUIRE(fifo.empty());
        fifo.step(false, 0, true);  // a response without a request
        const std::string text = output.text();
        CAPTURE(text);
        CHECK(fifo.stopped());
        CHECK(text.find("Assertion failed in npu_fifo.npu_fifo.a_no_underflow") !=
              std::string::npos);
    }
}

}  // namespace
}  // namespace nncosim::sim::testing
