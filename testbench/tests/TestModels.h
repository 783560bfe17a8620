// Small quantized models for the host runtime and `nncosim run` tests, with deterministic
// weights, small zoo networks, and running the nncosim executable for tests of the CLI.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/Builder.h"
#include "testbench/Zoo.h"

namespace nncosim::testing {

/// A small zoo network, for speed: 64x64 input, a quarter of the channels, 16 classes.
inline zoo::ZooConfig smallZooConfig(zoo::Network network, zoo::Precision precision) {
    zoo::ZooConfig config;
    config.network = network;
    config.precision = precision;
    config.inputSize = 64;
    config.widthMultiplier = 0.25f;
    config.numClasses = 16;
    return config;
}

/// The nncosim CLI built beside the test executables.
inline std::string nncosimBinary() {
#ifdef NNCOSIM_BINARY
    return NNCOSIM_BINARY;
#else
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "nncosim").string();
#endif
}

struct CliResult {
    int status = -1;     ///< exit status; -1 when killed by a signal
    std::string output;  ///< stdout and stderr
};

/// Runs `nncosim ARGS` in `dir` (ARGS as a shell would split them), its output logged there;
/// `prefix` is shell text run before it (e.g. "ulimit -v 1024 && ").
inline CliResult cli(const std::string& dir, const std::string& args,
                     const std::string& prefix = "") {
    const std::string log = dir + "/cli.log";
    const std::string command =
        "cd " + dir + " && " + prefix + nncosimBinary() + " " + args + " > " + log + " 2>&1";
    CliResult r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ifstream in(log);
    r.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return r;
}

inline nlohmann::json readJson(const std::string& path) {
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "missing ", path);
    return nlohmann::json::parse(in);
}

/// A fresh directory under the system's temporary directory.
inline std::string makeTempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    return mkdtemp(pattern.data()) ? pattern : std::string();
}

struct QuantTensor {
    uint32_t operand;
    float scale;
    int32_t zeroPoint;
};

/// CONV_2D (NHWC, uint8) with a k x k kernel, stride 1, SAME-style explicit padding and
/// weights drawn from `seed`; writes `out` (an operand the caller created).
inline void addConv(ModelBuilder& b, const QuantTensor& in, uint32_t inChannels,
                    uint32_t outChannels, uint32_t k, const QuantTensor& out, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> weights(outChannels * k * k * inChannels);
    for (auto& w : weights) w = static_cast<uint8_t>(rng());
    const float weightScale = 1.0f / 64;
    std::vector<int32_t> bias(outChannels);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {outChannels, k, k, inChannels}, weights,
                      weightScale, 128);
    const uint32_t biasOperand =
        b.addConstant(OperandType::TENSOR_INT32, {outChannels}, bias, in.scale * weightScale, 0);
    const int32_t pad = static_cast<int32_t>(k / 2);
    std::vector<uint32_t> inputs{in.operand, filter, biasOperand};
    for (int32_t v : {pad, pad, pad, pad, 1, 1, 0}) inputs.push_back(b.addInt32(v));
    b.addOperation(OperationType::CONV_2D, inputs, {out.operand});
}

/// SELECT of a tensor of `dims` against itself by a constant condition: an operation the NPU does
/// not run, for tests that need a CPU partition. `out` is `in` (same type and quantization).
inline void addCpuOnlySelect(ModelBuilder& b, uint32_t in, const std::vector<uint32_t>& dims,
                             uint32_t out) {
    std::vector<uint8_t> condition(elementCount(dims));
    for (size_t i = 0; i < condition.size(); ++i) condition[i] = i % 2;
    const uint32_t c = b.addConstant(OperandType::TENSOR_BOOL8, dims, condition);
    b.addOperation(OperationType::SELECT, {c, in, in}, {out});
}

}  // namespace nncosim::testing
