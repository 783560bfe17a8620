// The compiler's graph rewrites and the operations they let the NPU claim, through the host
// runtime on the functional model: a PAD folded into the convolution after it (or copied),
// SQUEEZE and EXPAND_DIMS as views, the unary operations on the LUT unit, and the zoo's
// converter-style networks. Each rewritten model is bit-exact with the golden on the original
// model, and runs in fewer partitions than without the rewrite.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <set>

#include "driver/Compiler.h"
#include "driver/compiler/Lowering.h"
#include "golden/Executor.h"
#include "model/Accuracy.h"
#include "model/Builder.h"
#include "model/Validation.h"
#include "testbench/ModelRun.h"
#include "testbench/Zoo.h"
#include "testbench/runtime/HostRuntime.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

std::shared_ptr<NpuContext> npuOf(sim::NpuImplementation implementation) {
    sim::PlatformConfig config;
    config.npu = implementation;
    auto npu = makeNpuContext(config);
    REQUIRE_MESSAGE(npu.ok(), npu.status().message);
    return *npu;
}

std::shared_ptr<NpuContext> functionalNpu() {
    return npuOf(sim::NpuImplementation::kFunctional);
}

std::vector<bool> claims(const Model& model) {
    std::vector<bool> supported;
    for (uint32_t i = 0; i < model.main.operations.size(); ++i)
        supported.push_back(driver::checkOperationSupported(model, i).ok());
    return supported;
}

size_t countNpu(const std::vector<Partition>& partitions) {
    size_t n = 0;
    for (const Partition& p : partitions) n += p.npu;
    return n;
}

/// Runs `model` partitioned by the host runtime on the NPU (the functional model unless told),
/// checks every output is identical to the golden's (or, given a tolerance, within it), and
/// returns the partitions.
std::vector<Partition> runMatchingGolden(
    const Model& model, uint32_t seed = 3,
    sim::NpuImplementation npu = sim::NpuImplementation::kFunctional,
    Placement placement = Placement::kAuto, std::optional<Tolerance> within = std::nullopt) {
    REQUIRE(validateModel(model).ok());
    RuntimeOptions options;
    options.npu = npuOf(npu);
    options.placement = placement;
    auto runtime = HostRuntime::create(model, options);
    REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
    auto inputs = randomModelInputs(model, seed);
    REQUIRE(inputs.ok());
    auto outputs = (*runtime)->execute(*inputs);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    auto reference = golden::execute(model, *inputs);
    REQUIRE_MESSAGE(reference.ok(), reference.status().message);
    REQUIRE(outputs->size() == reference->size());
    for (size_t i = 0; i < outputs->size(); ++i) {
        INFO("output " << i);
        CHECK((*outputs)[i].dimensions == (*reference)[i].dimensions);
        const OperandType type = model.main.operands[model.main.outputIndexes[i]].type;
        if (within) {
            const auto& ref = (*reference)[i].bytes;
            REQUIRE((*outputs)[i].bytes.size() == ref.size());
            const Comparison c = compareTensors(type, ref.data(), (*outputs)[i].bytes.data(),
                                                ref.size() / elementSize(type), *within);
            CHECK_MESSAGE(c.ok(), c.mismatches, " mismatches");
        } else {
            CHECK((*outputs)[i].bytes == (*reference)[i].bytes);
        }
        // Not degenerate: the comparison means something (booleans: both values occur).
        const auto& bytes = (*outputs)[i].bytes;
        const size_t distinct = std::set<uint8_t>(bytes.begin(), bytes.end()).size();
        if (type == OperandType::TENSOR_BOOL8)
            CHECK(distinct == 2);
        else
            CHECK(distinct > 2);
    }
    return (*runtime)->partitions();
}

/// A small converter-style zoo network (smallZooConfig).
Model smallConverterStyle(zoo::Network network, zoo::Precision precision) {
    zoo::ZooConfig config = testing::smallZooConfig(network, precision);
    config.converterStyle = true;
    auto model = zoo::buildZooModel(config);
    REQUIRE(model.ok());
    return *model;
}

uint32_t padConstant(ModelBuilder& b, std::vector<int32_t> paddings) {
    return b.addConstant(OperandType::TENSOR_INT32, {4, 2}, paddings);
}

/// in [1, 9, 9, 16] -> 0 PAD (H 1+1, W 2+0) -> 1 CONV_2D 3x3 VALID -> out0, and
/// in -> 2 PAD_V2 (H 0+1, W 1+1, the zero point) -> 3 DEPTHWISE_CONV_2D 3x3/2 with explicit
/// padding (1, 0, 1, 0) -> out1, and in -> 4 PAD (H 1+1, W 1+1) -> 5 GROUPED_CONV_2D (2 groups)
/// 3x3 VALID -> out2. Every PAD folds.
Model padModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 9, 9, 16}, 1.0f / 128, 120), 1.0f / 128, 120};
    const QuantTensor padded{b.addOperand(kQ8, {1, 11, 11, 16}, 1.0f / 128, 120), 1.0f / 128, 120};
    b.addOperation(OperationType::PAD, {in.operand, padConstant(b, {0, 0, 1, 1, 2, 0, 0, 0})},
                   {padded.operand});
    const QuantTensor out0{b.addOutput(kQ8, {1, 9, 9, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    std::mt19937 rng(5);
    std::vector<uint8_t> weights(16 * 9 * 16);
    for (auto& w : weights) w = static_cast<uint8_t>(rng());
    std::vector<int32_t> bias(16);
    for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
    const uint32_t filter = b.addConstant(kQ8, {16, 3, 3, 16}, weights, 1.0f / 64, 128);
    const uint32_t biasOperand =
        b.addConstant(OperandType::TENSOR_INT32, {16}, bias, in.scale / 64, 0);
    b.addOperation(OperationType::CONV_2D,
                   {padded.operand, filter, biasOperand, b.addInt32(2), b.addInt32(1),
                    b.addInt32(1), b.addInt32(0)},
                   {out0.operand});

    const uint32_t padded2 = b.addOperand(kQ8, {1, 10, 11, 16}, 1.0f / 128, 120);
    b.addOperation(OperationType::PAD_V2,
                   {in.operand, padConstant(b, {0, 0, 0, 1, 1, 1, 0, 0}), b.addInt32(120)},
                   {padded2});
    std::vector<uint8_t> dwWeights(9 * 16);
    for (auto& w : dwWeights) w = static_cast<uint8_t>(rng());
    const uint32_t dwFilter = b.addConstant(kQ8, {1, 3, 3, 16}, dwWeights, 1.0f / 64, 128);
    const uint32_t out1 = b.addOutput(kQ8, {1, 5, 5, 16}, 1.0f / 16, 128);
    std::vector<uint32_t> dwInputs{padded2, dwFilter, biasOperand};
    for (int32_t v : {1, 0, 1, 0, 2, 2, 1, 0}) dwInputs.push_back(b.addInt32(v));
    b.addOperation(OperationType::DEPTHWISE_CONV_2D, dwInputs, {out1});

    const uint32_t padded3 = b.addOperand(kQ8, {1, 11, 11, 16}, 1.0f / 128, 120);
    b.addOperation(OperationType::PAD, {in.operand, padConstant(b, {0, 0, 1, 1, 1, 1, 0, 0})},
                   {padded3});
    std::vector<uint8_t> groupWeights(16 * 9 * 8);
    for (auto& w : groupWeights) w = static_cast<uint8_t>(rng());
    const uint32_t groupFilter = b.addConstant(kQ8, {16, 3, 3, 8}, groupWeights, 1.0f / 64, 128);
    const uint32_t out2 = b.addOutput(kQ8, {1, 9, 9, 16}, 1.0f / 16, 128);
    b.addOperation(OperationType::GROUPED_CONV_2D,
                   {padded3, groupFilter, biasOperand, b.addInt32(2), b.addInt32(1), b.addInt32(1),
                    b.addInt32(2), b.addInt32(0), b.addBool(false)},
                   {out2});
    return b.build();
}

}  // namespace

TEST_CASE("rewrite_pad_folds_into_convolutions") {
    const Model model = padModel();
    const std::vector<bool> supported = claims(model);
    CHECK(supported == std::vector<bool>(6, true));

    // One NPU partition; without the fold (the PADs on the CPU) the runtime needs two.
    const auto partitions = runMatchingGolden(model);
    CHECK(partitions.size() == 1);
    CHECK(countNpu(partitions) == 1);
    CHECK(partitionOperations(model, {false, true, false, true, false, true}).size() == 2);

    // The PADs cost nothing: no descriptor is tagged with them.
    auto program = driver::compileModel(model, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    for (const npu::Descriptor& d : program->descriptors)
        CHECK((d.tag == 1 || d.tag == 3 || d.tag == 5));
    CHECK(program->operationNames.size() == 6);
}

TEST_CASE("rewrite_pad_folds_where_it_can_and_runs_as_a_copy_elsewhere") {
    auto padThenConv = [](std::vector<int32_t> paddings, std::optional<int32_t> value,
                          bool padIsOutput, int32_t scheme, bool pool) {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {1, 4, 4, 16}, 0.5f, 10);
        std::vector<uint32_t> padDims = {1 + static_cast<uint32_t>(paddings[0] + paddings[1]),
                                         4 + static_cast<uint32_t>(paddings[2] + paddings[3]),
                                         4 + static_cast<uint32_t>(paddings[4] + paddings[5]),
                                         16 + static_cast<uint32_t>(paddings[6] + paddings[7])};
        const uint32_t padded = padIsOutput ? b.addOutput(kQ8, padDims, 0.5f, 10)
                                            : b.addOperand(kQ8, padDims, 0.5f, 10);
        std::vector<uint32_t> padInputs = {in, padConstant(b, paddings)};
        if (value) padInputs.push_back(b.addInt32(*value));
        b.addOperation(value ? OperationType::PAD_V2 : OperationType::PAD, padInputs, {padded});
        const uint32_t out = b.addOutput(kQ8, {}, 0.5f, 10);
        if (pool) {
            b.addOperation(OperationType::MAX_POOL_2D,
                           {padded, b.addInt32(scheme), b.addInt32(1), b.addInt32(1), b.addInt32(3),
                            b.addInt32(3), b.addInt32(0)},
                           {out});
        } else {
            // Weights of -1, 0 and 1 (zero point 10): sums that stay mostly inside the range.
            std::vector<uint8_t> weights(16 * padDims[3]);
            for (size_t i = 0; i < weights.size(); ++i)
                weights[i] = static_cast<uint8_t>(9 + i % 3);
            const uint32_t filter = b.addConstant(kQ8, {16, 1, 1, padDims[3]}, weights, 0.25f, 10);
            const uint32_t bias =
                b.addConstant(OperandType::TENSOR_INT32, {16}, std::vector<int32_t>(16, 3), 0.125f);
            b.addOperation(OperationType::CONV_2D,
                           {padded, filter, bias, b.addInt32(scheme), b.addInt32(1), b.addInt32(1),
                            b.addInt32(0)},
                           {out});
        }
        return b.build();
    };
    // Whether the PAD folds, and the model runs whole on the NPU either way, bit-exact with the
    // golden; a PAD that does not fold is copied (descriptors of its own), a folded one is not.
    auto check = [](const Model& model, bool folds) {
        REQUIRE(validateModel(model).ok());
        CHECK(claims(model) == std::vector<bool>{true, true});
        CHECK(runMatchingGolden(model).size() == 1);
        auto program = driver::compileModel(model, {});
        REQUIRE_MESSAGE(program.ok(), program.status().message);
        bool padCopied = false;
        for (const npu::Descriptor& d : program->descriptors) padCopied |= d.tag == 0;
        CHECK(padCopied == !folds);
        return driver::padFolds(model, 0);
    };
    const std::vector<int32_t> spatial = {0, 0, 1, 1, 1, 1, 0, 0};
    CHECK(check(padThenConv(spatial, std::nullopt, false, 2, false), true).ok());
    CHECK(check(padThenConv(spatial, 10, false, 2, false), true).ok());
    // Channels padded; a PAD_V2 value other than the zero point; the padded tensor also a model
    // output; a SAME convolution (its padding depends on the padded size); a max pool (NNAPI
    // leaves padding out of the maximum).
    const Status channels =
        check(padThenConv({0, 0, 1, 1, 1, 1, 0, 16}, std::nullopt, false, 2, false), false);
    CHECK(channels.message.find("height and width") != std::string::npos);
    CHECK_FALSE(check(padThenConv(spatial, 11, false, 2, false), false).ok());
    const Status output = check(padThenConv(spatial, std::nullopt, true, 2, false), false);
    CHECK(output.message.find("model output") != std::string::npos);
    CHECK_FALSE(check(padThenConv(spatial, std::nullopt, false, 1, false), false).ok());
    const Status pool = check(padThenConv(spatial, std::nullopt, false, 2, true), false);
    CHECK(pool.message.find("convolutions") != std::string::npos);
}

TEST_CASE("rewrite_squeeze_and_expand_dims_are_views") {
    // in -> 0 CONV_2D -> t0 [1, 4, 4, 16] -> 1 SQUEEZE (axis 0) -> [4, 4, 16] -> 2 EXPAND_DIMS
    // (axis 0) -> t2 [1, 4, 4, 16] -> 3 ADD (t2 + t0) -> out.
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 4, 4, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 4, 4, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, t0, 7);
    const uint32_t t1 = b.addOperand(kQ8, {4, 4, 16}, 1.0f / 16, 128);
    b.addOperation(OperationType::SQUEEZE,
                   {t0.operand, b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector{0})},
                   {t1});
    const uint32_t t2 = b.addOperand(kQ8, {1, 4, 4, 16}, 1.0f / 16, 128);
    b.addOperation(OperationType::EXPAND_DIMS, {t1, b.addInt32(0)}, {t2});
    const uint32_t out = b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f / 8, 128);
    b.addOperation(OperationType::ADD, {t2, t0.operand, b.addInt32(0)}, {out});
    const Model model = b.build();

    CHECK(claims(model) == std::vector<bool>{true, true, true, true});
    const auto partitions = runMatchingGolden(model);
    CHECK(partitions.size() == 1);
    CHECK(partitionOperations(model, {true, false, false, true}).size() == 3);
    auto program = driver::compileModel(model, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    for (const npu::Descriptor& d : program->descriptors) CHECK((d.tag == 0 || d.tag == 3));
}

TEST_CASE("rewrite_lookup_operations_match_golden") {
    // Every stored value through HARD_SWISH, RSQRT and CAST, unsigned and signed.
    for (OperandType type : {kQ8, kS8}) {
        const int32_t zero = type == kQ8 ? 128 : 0;
        for (OperationType op :
             {OperationType::HARD_SWISH, OperationType::RSQRT, OperationType::CAST}) {
            INFO(nameOf(op) << " " << nameOf(type));
            ModelBuilder b;
            const uint32_t in = b.addInput(type, {1, 256}, 0.05f, zero);
            const uint32_t out = b.addOutput(type, {1, 256}, 0.04f, zero - 3);
            b.addOperation(op, {in}, {out});
            const Model model = b.build();
            REQUIRE(validateModel(model).ok());
            CHECK(driver::checkOperationSupported(model, 0).ok());
            TensorData values{{1, 256}, std::vector<uint8_t>(256)};
            for (int v = 0; v < 256; ++v) values.bytes[v] = static_cast<uint8_t>(v);
            RuntimeOptions options;
            options.placement = Placement::kNpu;
            options.npu = functionalNpu();
            auto runtime = HostRuntime::create(model, options);
            REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
            auto outputs = (*runtime)->execute({values});
            REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
            auto reference = golden::execute(model, {values});
            REQUIRE(reference.ok());
            CHECK(outputs->at(0).bytes == reference->at(0).bytes);
        }
    }
}

TEST_CASE("rewrite_constant_operand_operations_on_the_lookup_unit") {
    // PRELU, MAXIMUM and MINIMUM whose other operand is a constant of one value (either side for
    // MAXIMUM and MINIMUM): every stored value, unsigned and signed, identical to the golden.
    for (OperandType type : {kQ8, kS8}) {
        const int32_t zero = type == kQ8 ? 128 : 0;
        for (OperationType op :
             {OperationType::PRELU, OperationType::MAXIMUM, OperationType::MINIMUM}) {
            for (bool constantFirst : {false, true}) {
                if (op == OperationType::PRELU && constantFirst) continue;
                INFO(nameOf(op) << " " << nameOf(type) << (constantFirst ? " constant first" : ""));
                ModelBuilder b;
                const uint32_t in = b.addInput(type, {1, 256}, 0.05f, zero);
                const uint8_t value = type == kQ8 ? 100 : 0xf0;  // below the zero point
                const uint32_t constant =
                    b.addConstant(type, {1, 1}, std::vector<uint8_t>{value}, 0.03f, zero + 5);
                const uint32_t out = b.addOutput(type, {1, 256}, 0.04f, zero - 3);
                b.addOperation(
                    op, constantFirst ? std::vector{constant, in} : std::vector{in, constant},
                    {out});
                const Model model = b.build();
                REQUIRE(validateModel(model).ok());
                REQUIRE(driver::checkOperationSupported(model, 0).ok());
                TensorData values{{1, 256}, std::vector<uint8_t>(256)};
                for (int v = 0; v < 256; ++v) values.bytes[v] = static_cast<uint8_t>(v);
                RuntimeOptions options;
                options.placement = Placement::kNpu;
                options.npu = functionalNpu();
                auto runtime = HostRuntime::create(model, options);
                REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
                auto outputs = (*runtime)->execute({values});
                REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
                auto reference = golden::execute(model, {values});
                REQUIRE(reference.ok());
                CHECK(outputs->at(0).bytes == reference->at(0).bytes);
                CHECK(std::set<uint8_t>(outputs->at(0).bytes.begin(), outputs->at(0).bytes.end())
                          .size() > 16);
            }
        }
    }
    // Claimed: an alpha of several values too (its two branches and a MAXPOOL, checked bit for bit
    // by the CTS's PRELU tests); not claimed: a constant that enlarges the other operand.
    auto claimed = [](std::vector<uint32_t> constantDims, std::vector<uint8_t> constant) {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {1, 4}, 0.05f, 128);
        const uint32_t c = b.addConstant(kQ8, constantDims, constant, 0.03f, 128);
        const uint32_t out = b.addOutput(kQ8, {}, 0.05f, 128);
        b.addOperation(OperationType::PRELU, {in, c}, {out});
        const Model model = b.build();
        REQUIRE(validateModel(model).ok());
        return driver::checkOperationSupported(model, 0).ok();
    };
    CHECK(claimed({4}, {7, 7, 7, 7}));
    CHECK(claimed({4}, {7, 7, 8, 7}));
    CHECK_FALSE(claimed({2, 4}, std::vector<uint8_t>(8, 7)));
}

namespace {

// An operation along an axis of a tensor, and whether the NPU claims it.
struct AxisCase {
    OperationType op;
    OperandType type;
    std::vector<uint32_t> dims;
    int32_t axis;
    bool claimed;
};

// Operation `index` of `model` is claimed as `c` says; a claimed model runs on the NPU bit for
// bit as the golden on three random inputs.
void checkAxisCase(const Model& model, uint32_t index, const AxisCase& c) {
    REQUIRE(validateModel(model).ok());
    CHECK(driver::checkOperationSupported(model, index).ok() == c.claimed);
    if (!c.claimed) return;
    for (uint32_t seed : {1u, 2u, 3u})
        runMatchingGolden(model, seed, sim::NpuImplementation::kFunctional, Placement::kNpu);
}

}  // namespace

TEST_CASE("npu_quantized_softmax_and_l2_normalization_rows") {
    // NORM rows, bit for bit with the golden: SOFTMAX along the last and a middle axis up to the
    // 511-element limit (512 is not claimed: the golden's shift would leave 32 bits), and
    // L2_NORMALIZATION in both of the golden's forms (int8 along the last axis, everything else).
    for (const AxisCase& c : {AxisCase{OperationType::SOFTMAX, kQ8, {3, 511}, -1, true},
                              AxisCase{OperationType::SOFTMAX, kS8, {2, 40, 3}, 1, true},
                              AxisCase{OperationType::SOFTMAX, kQ8, {2, 512}, -1, false},
                              AxisCase{OperationType::L2_NORMALIZATION, kS8, {4, 37}, -1, true},
                              AxisCase{OperationType::L2_NORMALIZATION, kS8, {4, 37, 2}, 1, true},
                              AxisCase{OperationType::L2_NORMALIZATION, kQ8, {4, 37}, 0, true}}) {
        CAPTURE(nameOf(c.op));
        CAPTURE(nameOf(c.type));
        CAPTURE(c.axis);
        const bool softmax = c.op == OperationType::SOFTMAX;
        const int32_t zero = c.type == kQ8 ? 128 : 0;
        ModelBuilder b;
        const uint32_t in = b.addInput(c.type, c.dims, 0.07f, zero + 3);
        const uint32_t out = softmax
                                 ? b.addOutput(c.type, c.dims, 1.0f / 256, c.type == kQ8 ? 0 : -128)
                                 : b.addOutput(c.type, c.dims, 1.0f / 128, zero);
        std::vector<uint32_t> inputs{in};
        if (softmax) inputs.push_back(b.addFloat32(0.8f));
        inputs.push_back(b.addInt32(c.axis));
        b.addOperation(c.op, inputs, {out});
        checkAxisCase(b.build(), 0, c);
    }
}

TEST_CASE("npu_argmax_argmin_find_the_first_extremum_as_the_golden") {
    // The input goes through an ADD into a coarse scale first, so that lines have many equal
    // values: the index must be the first of them. 256 elements along the axis are not claimed.
    for (const AxisCase& c : {AxisCase{OperationType::ARGMAX, kQ8, {3, 255}, -1, true},
                              AxisCase{OperationType::ARGMIN, kQ8, {2, 17, 5}, 1, true},
                              AxisCase{OperationType::ARGMAX, kS8, {6, 4}, 0, true},
                              AxisCase{OperationType::ARGMIN, kS8, {2, 3, 40}, -1, true},
                              AxisCase{OperationType::ARGMAX, kQ8, {2, 256}, 1, false}}) {
        CAPTURE(nameOf(c.op));
        CAPTURE(nameOf(c.type));
        CAPTURE(c.axis);
        const int32_t zero = c.type == kQ8 ? 128 : 0;
        ModelBuilder b;
        const uint32_t in = b.addInput(c.type, c.dims, 0.1f, zero);
        const uint32_t zeros =
            b.addConstant(c.type, {1}, std::vector<uint8_t>{uint8_t(zero)}, 0.1f, zero);
        const uint32_t coarse = b.addOperand(c.type, c.dims, 3.0f, zero);
        b.addOperation(OperationType::ADD, {in, zeros, b.addInt32(0)}, {coarse});
        std::vector<uint32_t> outDims = c.dims;
        outDims.erase(outDims.begin() + (c.axis < 0 ? c.axis + c.dims.size() : c.axis));
        const uint32_t out = b.addOutput(OperandType::TENSOR_INT32, outDims);
        b.addOperation(c.op, {coarse, b.addInt32(c.axis)}, {out});
        checkAxisCase(b.build(), 1, c);
    }
}

TEST_CASE("npu_quant_resize_bilinear_is_the_golden_s") {
    // Quantized resizes, bit for bit: power-of-two upsamplings of uint8 on the array (a 2x2 DWCONV
    // per output phase), other one-pixel inputs (a 1x1 float CONV per output row sums the
    // formula's terms) and upsamplings by integer factors (a float DWCONV per output column phase)
    // on the array too, everything else through the binary32 formula; with NNAPI's quantization
    // the NPU claims them all. Each takes the path it is meant to.
    enum Path { kFormula, kDwconv, kConv, kPhases };
    struct Case {
        OperandType type;
        uint32_t inH, inW, outH, outW;
        int corners;
        bool nchw;
        Path path;
        uint32_t images = 1, channels = 3;
    };
    constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
    constexpr auto kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    for (const Case& c :
         {Case{kU8, 5, 7, 10, 28, 0, false, kDwconv}, Case{kU8, 3, 4, 24, 4, 0, false, kDwconv},
          Case{kU8, 2, 2, 16, 16, 0, false, kDwconv},        // weights up to 8 x 8
          Case{kU8, 1, 2, 16, 32, 0, false, kPhases},        // x16: weights beyond int8
          Case{kU8, 1, 1, 16, 32, 0, false, kFormula},       // one pixel, dyadic: a broadcast copy
          Case{kU8, 5, 7, 15, 21, 0, false, kFormula},       // x3: 1/3 rounds, the phases differ
          Case{kU8, 5, 7, 10, 14, 1, false, kFormula},       // align_corners
          Case{kU8, 5, 7, 10, 14, 2, false, kFormula},       // half-pixel centers
          Case{kU8, 5, 7, 10, 14, 0, true, kFormula},        // NCHW
          Case{kI8, 5, 7, 10, 14, 0, false, kPhases},        // int8: not dyadic
          Case{kI8, 6, 2, 6, 32, 0, false, kPhases, 2, 37},  // x1 x16, two images, 37 channels
          Case{kI8, 5, 7, 9, 12, 0, false, kFormula},        // no integer factors
          Case{kU8, 1, 1, 56, 56, 0, false, kConv, 2, 40},   // one pixel, any factor
          Case{kU8, 1, 1, 9, 23, 2, false, kConv}, Case{kU8, 1, 1, 6, 5, 1, true, kConv},
          Case{kI8, 1, 1, 28, 20, 0, false, kConv}, Case{kI8, 1, 1, 7, 7, 2, true, kConv}}) {
        CAPTURE(nameOf(c.type));
        CAPTURE(c.outH);
        CAPTURE(c.outW);
        CAPTURE(c.corners);
        CAPTURE(c.nchw);
        ModelBuilder b;
        const auto dims = [&](uint32_t h, uint32_t w) {
            return c.nchw ? std::vector<uint32_t>{c.images, c.channels, h, w}
                          : std::vector<uint32_t>{c.images, h, w, c.channels};
        };
        const int32_t zeroPoint = c.type == kU8 ? 128 : 0;
        const uint32_t in = b.addInput(c.type, dims(c.inH, c.inW), 0.5f, zeroPoint);
        const uint32_t out = b.addOutput(c.type, dims(c.outH, c.outW), 0.5f, zeroPoint);
        b.addOperation(
            OperationType::RESIZE_BILINEAR,
            {in, b.addInt32(static_cast<int32_t>(c.outW)), b.addInt32(static_cast<int32_t>(c.outH)),
             b.addBool(c.nchw), b.addBool(c.corners == 1), b.addBool(c.corners == 2)},
            {out});
        const Model model = b.build();
        auto program = driver::compileModel(model, {});
        REQUIRE_MESSAGE(program.ok(), program.status().message);
        Path path = kFormula;
        bool gather = false;  // the low bytes of the binary32 results gathered on the array
        for (const npu::Descriptor& d : program->descriptors) {
            const bool binary32 = d.format == uint32_t(npu::Format::FP32);
            if (d.opcode == npu::Opcode::DWCONV) path = binary32 ? kPhases : kDwconv;
            if (d.opcode == npu::Opcode::CONV && binary32) path = kConv;
            gather |= d.opcode == npu::Opcode::CONV && !binary32;
        }
        CHECK(path == c.path);
        const bool broadcast = c.inH * c.inW == 1 && c.path == kFormula;
        CHECK(gather == (!c.nchw && c.path != kDwconv && !broadcast));
        for (uint32_t seed : {1u, 2u})
            runMatchingGolden(model, seed, sim::NpuImplementation::kFunctional, Placement::kNpu);
    }
}

TEST_CASE("rewrite_mean_truncates_on_the_pool_unit") {
    // MEAN over H and W on the NPU (an AVGPOOL truncating toward zero like NNAPI's) for map
    // sizes whose count is odd, even, a power of two and 1, both keep_dims forms (40 channels:
    // two whole blocks and a part; 40x40 pools its channels in slices); extremes and random
    // values.
    struct Case {
        OperandType type;
        uint32_t h, w;
        bool keepDims;
    };
    for (const Case& c : {Case{kQ8, 7, 7, false}, Case{kQ8, 4, 5, true}, Case{kQ8, 8, 8, false},
                          Case{kQ8, 1, 1, true}, Case{kQ8, 13, 11, false}, Case{kQ8, 40, 40, false},
                          Case{kS8, 7, 7, false}, Case{kS8, 4, 5, true}, Case{kS8, 1, 1, false},
                          Case{kS8, 40, 40, true}}) {
        INFO(nameOf(c.type) << " " << c.h << "x" << c.w << (c.keepDims ? " keep" : ""));
        ModelBuilder b;
        const uint32_t in = b.addInput(c.type, {2, c.h, c.w, 40}, 0.1f, 100);
        const uint32_t out = b.addOutput(
            c.type, c.keepDims ? std::vector<uint32_t>{2, 1, 1, 40} : std::vector<uint32_t>{2, 40},
            0.1f, 100);
        b.addOperation(OperationType::MEAN,
                       {in, b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector{2, -3}),
                        b.addInt32(c.keepDims)},
                       {out});
        const Model model = b.build();
        REQUIRE(validateModel(model).ok());
        REQUIRE(driver::checkOperationSupported(model, 0).ok());
        TensorData values{{2, c.h, c.w, 40}, std::vector<uint8_t>(2 * c.h * c.w * 40)};
        std::mt19937 rng(c.h * 31 + c.w);
        for (size_t i = 0; i < values.bytes.size(); ++i) {
            const uint32_t channel = i % 40;  // channels 0 and 1: the type's maximum and minimum
            values.bytes[i] = static_cast<uint8_t>(channel == 0   ? driver::typeMax(c.type)
                                                   : channel == 1 ? driver::typeMin(c.type)
                                                                  : rng());
        }
        RuntimeOptions options;
        options.placement = Placement::kNpu;
        options.npu = functionalNpu();
        auto runtime = HostRuntime::create(model, options);
        REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
        auto outputs = (*runtime)->execute({values});
        REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
        auto reference = golden::execute(model, {values});
        REQUIRE(reference.ok());
        CHECK(outputs->at(0).dimensions == reference->at(0).dimensions);
        CHECK(outputs->at(0).bytes == reference->at(0).bytes);
    }
    // Other axes run on a copy with the reduced axes outermost.
    for (auto [type, axes] : {std::pair{kS8, std::vector{1}}, std::pair{kQ8, std::vector{1}}}) {
        ModelBuilder b;
        const uint32_t in = b.addInput(type, {1, 4, 4, 16}, 0.1f, 0);
        const uint32_t out = b.addOutput(type, {}, 0.1f, 0);
        b.addOperation(
            OperationType::MEAN,
            {in,
             b.addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(axes.size())}, axes),
             b.addInt32(0)},
            {out});
        const Model model = b.build();
        REQUIRE(validateModel(model).ok());
        CHECK(driver::checkOperationSupported(model, 0).ok());
    }
}

TEST_CASE("rewrite_converter_style_zoo_networks") {
    // Small converter-style networks: every PAD folds, MEAN, the input TRANSPOSE, the quantized
    // RESIZE_BILINEAR and SOFTMAX run on the NPU, so each is one NPU partition; outputs are
    // bit-exact with the golden on the original model, in fewer partitions than with PAD and MEAN
    // on the CPU.
    struct Case {
        zoo::Network network;
        size_t partitions, npuPartitions, partitionsWithoutRewrites;
    };
    for (const Case& c :
         {Case{zoo::Network::kMobileNetV2, 1, 1, 39}, Case{zoo::Network::kDeepLabHead, 1, 1, 7},
          Case{zoo::Network::kSsdHead, 1, 1, 11}}) {
        CAPTURE(static_cast<int>(c.network));
        const Model model = smallConverterStyle(c.network, zoo::Precision::kQuant8);
        std::vector<bool> supported = claims(model);
        std::vector<bool> withoutRewrites = supported;
        size_t pads = 0;
        for (uint32_t i = 0; i < supported.size(); ++i) {
            const OperationType t = model.main.operations[i].type;
            if (t == OperationType::PAD || t == OperationType::MEAN) {
                pads += t == OperationType::PAD;
                CHECK(supported[i]);
                withoutRewrites[i] = false;
            }
        }
        CHECK(pads > 0);
        const auto partitions = runMatchingGolden(model);
        CHECK(partitions.size() == c.partitions);
        CHECK(countNpu(partitions) == c.npuPartitions);
        CHECK(partitionOperations(model, withoutRewrites).size() == c.partitionsWithoutRewrites);
    }
}

TEST_CASE("rewrite_float_pads_fold_and_long_rows_copy") {
    // A float converter-style MobileNet-v2: its PADs (+0) fold into the convolutions, so the
    // input TRANSPOSE is read as planes and no PAD or TRANSPOSE emits a descriptor; the outputs
    // are within the float32 tolerance of the golden (the NPU sums in its own order).
    const Model model = smallConverterStyle(zoo::Network::kMobileNetV2, zoo::Precision::kFloat32);
    size_t pads = 0;
    for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
        if (model.main.operations[i].type != OperationType::PAD) continue;
        ++pads;
        CHECK_MESSAGE(driver::padFolds(model, i).ok(), driver::padFolds(model, i).message);
    }
    CHECK(pads > 0);
    auto program = driver::compileModel(model, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    for (const npu::Descriptor& d : program->descriptors) {
        const OperationType t = model.main.operations[d.tag].type;
        CHECK((t != OperationType::PAD && t != OperationType::TRANSPOSE));
    }
    CHECK(countNpu(runMatchingGolden(model, 3, sim::NpuImplementation::kFunctional, Placement::kNpu,
                                     ctsTolerance(OperandType::TENSOR_FLOAT32, false))) == 1);

    // A float PAD that does not fold (a max pool reads it) is a copy; its rows of 112 pixels x
    // 96 binary32 channels (43,008 bytes) are longer than a buffer and copy in parts.
    ModelBuilder b;
    const auto f32 = OperandType::TENSOR_FLOAT32;
    const uint32_t in = b.addInput(f32, {1, 3, 112, 96});
    const uint32_t padded = b.addOperand(f32, {1, 5, 112, 96});
    b.addOperation(OperationType::PAD, {in, padConstant(b, {0, 0, 1, 1, 0, 0, 0, 0})}, {padded});
    const uint32_t out = b.addOutput(f32, {1, 3, 110, 96});
    b.addOperation(OperationType::MAX_POOL_2D,
                   {padded, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(3),
                    b.addInt32(3), b.addInt32(0)},
                   {out});
    const Model copy = b.build();
    CHECK_FALSE(driver::padFolds(copy, 0).ok());
    CHECK(runMatchingGolden(copy, 5, sim::NpuImplementation::kFunctional, Placement::kNpu).size() ==
          1);
}

TEST_CASE("npu_concatenation_of_slabs_longer_than_a_row") {
    // Along axis 1 of [1, rows, 250]: each input is one slab of rows x 250 bytes, more than a
    // descriptor row's 16-bit INNER, copied in column chunks.
    ModelBuilder b;
    const uint32_t a = b.addInput(kQ8, {1, 300, 250}, 0.5f, 100);
    const uint32_t c = b.addInput(kQ8, {1, 100, 250}, 0.25f, 3);
    const uint32_t out = b.addOutput(kQ8, {1, 400, 250}, 0.5f, 100);
    b.addOperation(OperationType::CONCATENATION, {a, c, b.addInt32(1)}, {out});
    const Model model = b.build();
    CHECK(claims(model) == std::vector<bool>{true});
    const auto partitions = runMatchingGolden(model);
    CHECK(partitions.size() == 1);
    CHECK(countNpu(partitions) == 1);  // prepared on the NPU, not fallen back to the CPU

    // Float elements are copied as they are: float32 and float16 along the channels of NHWC
    // maps (a DeepLab head's ASPP branches).
    for (const OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16}) {
        CAPTURE(nameOf(type));
        ModelBuilder f;
        const uint32_t x = f.addInput(type, {1, 7, 9, 24});
        const uint32_t y = f.addInput(type, {1, 7, 9, 40});
        const uint32_t joined = f.addOutput(type, {1, 7, 9, 64});
        f.addOperation(OperationType::CONCATENATION, {x, y, f.addInt32(3)}, {joined});
        const Model copy = f.build();
        CHECK(claims(copy) == std::vector<bool>{true});
        CHECK(countNpu(runMatchingGolden(copy, 7, sim::NpuImplementation::kFunctional,
                                         Placement::kNpu)) == 1);
    }
}

TEST_CASE("npu_transposed_image_read_as_planes") {
    // An NCHW image transposed to NHWC for a convolution (a converted model's input): the
    // TRANSPOSE writes nothing and the convolution loads the NCHW planes (A_PLANAR), bit-exact
    // with the golden on the functional model and the RTL. When the transposed image is also a
    // model output, or another operation reads it, the TRANSPOSE runs. An NCHW convolution of few
    // channels reads its input's planes the same way.
    enum class Reader { kConvOnly, kAlsoOutput, kAlsoPool };
    for (Reader reader : {Reader::kConvOnly, Reader::kAlsoOutput, Reader::kAlsoPool}) {
        CAPTURE(static_cast<int>(reader));
        ModelBuilder b;
        const uint32_t image = b.addInput(kQ8, {1, 3, 21, 18}, 1.0f / 128, 128);
        const std::vector<uint32_t> nhwc{1, 21, 18, 3};
        const QuantTensor t{reader == Reader::kAlsoOutput
                                ? b.addOutput(kQ8, nhwc, 1.0f / 128, 128)
                                : b.addOperand(kQ8, nhwc, 1.0f / 128, 128),
                            1.0f / 128, 128};
        b.addOperation(OperationType::TRANSPOSE,
                       {image, b.addConstant(OperandType::TENSOR_INT32, {4},
                                             std::vector<int32_t>{0, 2, 3, 1})},
                       {t.operand});
        const QuantTensor out{b.addOutput(kQ8, {1, 21, 18, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
        addConv(b, t, 3, 16, 3, out, 11);
        if (reader == Reader::kAlsoPool) {
            const uint32_t pooled = b.addOutput(kQ8, {1, 10, 9, 3}, 1.0f / 128, 128);
            std::vector<uint32_t> inputs{t.operand};
            for (int32_t v : {0, 0, 0, 0, 2, 2, 2, 2, 0}) inputs.push_back(b.addInt32(v));
            b.addOperation(OperationType::MAX_POOL_2D, inputs, {pooled});
        }
        const Model model = b.build();
        auto program = driver::compileModel(model, {});
        REQUIRE_MESSAGE(program.ok(), program.status().message);
        const bool transposed =
            std::any_of(program->descriptors.begin(), program->descriptors.end(),
                        [](const npu::Descriptor& d) { return d.tag == 0; });
        CHECK(transposed == (reader != Reader::kConvOnly));
        for (const npu::Descriptor& d : program->descriptors) {
            if (d.tag == 1) CHECK(d.aPlanar == (reader == Reader::kConvOnly));
        }
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl})
            CHECK(countNpu(runMatchingGolden(model, 5, npu)) == 1);
    }
    // An NCHW CONV_2D of 3 input channels (layout flag set) loads its input's planes in place;
    // only its output is transposed back to NCHW.
    ModelBuilder b;
    const uint32_t image = b.addInput(kQ8, {1, 3, 13, 17}, 1.0f / 128, 128);
    const uint32_t out = b.addOutput(kQ8, {1, 8, 7, 9}, 1.0f / 16, 128);
    std::vector<uint8_t> weights(8 * 3 * 3 * 3);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i * 37 + 11);
    std::vector<uint32_t> inputs{
        image,
        b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {8, 3, 3, 3}, weights, 1.0f / 64, 128),
        b.addConstant(OperandType::TENSOR_INT32, {8}, std::vector<int32_t>(8, 300), 1.0f / 128 / 64,
                      0)};
    for (int32_t v : {1, 1, 1, 1, 2, 2, 0}) inputs.push_back(b.addInt32(v));
    inputs.push_back(b.addBool(true));
    b.addOperation(OperationType::CONV_2D, inputs, {out});
    const Model model = b.build();
    auto program = driver::compileModel(model, {});
    REQUIRE_MESSAGE(program.ok(), program.status().message);
    CHECK(std::any_of(program->descriptors.begin(), program->descriptors.end(),
                      [](const npu::Descriptor& d) { return d.aPlanar; }));
    for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl})
        CHECK(countNpu(runMatchingGolden(model, 6, npu)) == 1);
}

TEST_CASE("npu_element_maps_match_golden") {
    // The data-movement operations as strided copies, on the functional model and the RTL:
    // transposes between NCHW and NHWC on the array (two images; and back) and in one-byte rows
    // (35 pixels, no multiple of 16), SPACE_TO_BATCH_ND with padding
    // (the zero point written through the fill table), a reflecting MIRROR_PAD (negative
    // strides), a TILE (repeated runs), a GATHER of scattered indices on int32 (four-byte
    // elements), a float PAD_V2 (four-byte padding elements) and an NCHW nearest-neighbor resize
    // with aligned corners (runs of repeated rows).
    const auto ints = [](ModelBuilder& b, std::vector<uint32_t> dims, std::vector<int32_t> v) {
        return b.addConstant(OperandType::TENSOR_INT32, std::move(dims), v);
    };
    std::vector<std::pair<std::string, Model>> models;
    // {input shape, permutation, whether the array moves it}
    using Transpose = std::tuple<std::vector<uint32_t>, std::vector<int32_t>, bool>;
    for (const auto& [dims, perm, onArray] : {Transpose{{2, 3, 20, 24}, {0, 2, 3, 1}, true},
                                              Transpose{{1, 8, 12, 5}, {0, 3, 1, 2}, true},
                                              Transpose{{1, 3, 5, 7}, {0, 2, 3, 1}, false}}) {
        ModelBuilder b;
        std::vector<uint32_t> outDims;
        for (int32_t axis : perm) outDims.push_back(dims[axis]);
        const uint32_t in = b.addInput(kQ8, dims, 0.5f, 7);
        const uint32_t out = b.addOutput(kQ8, outDims, 0.5f, 7);
        b.addOperation(OperationType::TRANSPOSE, {in, ints(b, {4}, perm)}, {out});
        Model model = b.build();
        auto program = driver::compileModel(model, {});
        REQUIRE(program.ok());
        const bool conv =
            std::any_of(program->descriptors.begin(), program->descriptors.end(),
                        [](const npu::Descriptor& d) { return d.opcode == npu::Opcode::CONV; });
        CHECK(conv == onArray);
        models.emplace_back("transpose " + toString(dims), std::move(model));
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kS8, {1, 5, 7, 20}, 0.5f, -9);
        const uint32_t out = b.addOutput(kS8, {4, 4, 5, 20}, 0.5f, -9);
        b.addOperation(OperationType::SPACE_TO_BATCH_ND,
                       {in, ints(b, {2}, {2, 2}), ints(b, {2, 2}, {2, 1, 1, 2})}, {out});
        models.emplace_back("space_to_batch", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {2, 6, 9}, 0.25f, 128);
        const uint32_t out = b.addOutput(kQ8, {2, 10, 12}, 0.25f, 128);
        b.addOperation(OperationType::MIRROR_PAD,
                       {in, ints(b, {3, 2}, {0, 0, 2, 2, 1, 2}), b.addInt32(0)}, {out});
        models.emplace_back("mirror_pad", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {3, 5, 4}, 0.25f, 128);
        const uint32_t out = b.addOutput(kQ8, {6, 5, 12}, 0.25f, 128);
        b.addOperation(OperationType::TILE, {in, ints(b, {3}, {2, 1, 3})}, {out});
        models.emplace_back("tile", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(OperandType::TENSOR_INT32, {4, 9, 3});
        const uint32_t out = b.addOutput(OperandType::TENSOR_INT32, {4, 5, 3});
        b.addOperation(OperationType::GATHER, {in, b.addInt32(1), ints(b, {5}, {8, 0, 3, 4, 3})},
                       {out});
        models.emplace_back("gather_int32", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2, 3, 5});
        const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {3, 7, 9});
        b.addOperation(OperationType::PAD_V2,
                       {in, ints(b, {3, 2}, {1, 0, 2, 2, 0, 4}), b.addFloat32(-1.5f)}, {out});
        models.emplace_back("pad_v2_float32", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {1, 4, 3, 5}, 0.5f, 3);
        const uint32_t out = b.addOutput(kQ8, {1, 4, 7, 9}, 0.5f, 3);
        b.addOperation(
            OperationType::RESIZE_NEAREST_NEIGHBOR,
            {in, b.addInt32(9), b.addInt32(7), b.addBool(true), b.addBool(true), b.addBool(false)},
            {out});
        models.emplace_back("resize_nearest_nchw", b.build());
    }
    for (const auto& [name, model] : models) {
        INFO(name);
        CHECK(claims(model) == std::vector<bool>{true});
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl}) {
            // On the NPU whatever its figures (float copies are not faster than the CPU's).
            const auto partitions = runMatchingGolden(model, 5, npu, Placement::kNpu);
            CHECK(partitions.size() == 1);
            CHECK(countNpu(partitions) == 1);
        }
    }
}

TEST_CASE("npu_transpose_conv_matches_golden") {
    // TRANSPOSE_CONV_2D as a convolution over the spread input, on the functional model and the
    // RTL: NHWC with strides 3 x 2 and a top padding past the kernel (the first input row is
    // cropped), and NCHW int8 with SAME padding, two images and a filter computed at run time
    // (turned on the device).
    std::mt19937 rng(11);
    const auto bytes = [&rng](size_t n, int lo, int hi) {
        std::vector<uint8_t> v(n);
        for (auto& x : v) x = static_cast<uint8_t>(std::uniform_int_distribution<>(lo, hi)(rng));
        return v;
    };
    const auto biases = [&rng](size_t n) {
        std::vector<int32_t> v(n);
        for (auto& x : v) x = std::uniform_int_distribution<>(-2000, 2000)(rng);
        return v;
    };
    std::vector<std::pair<std::string, Model>> models;
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {1, 5, 6, 20}, 0.5f, 100);
        const uint32_t filter =
            b.addConstant(kQ8, {24, 3, 4, 20}, bytes(24 * 3 * 4 * 20, 110, 130), 0.05f, 120);
        const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {24}, biases(24), 0.025f);
        const uint32_t out = b.addOutput(kQ8, {1, 8, 18, 24}, 2.0f, 128);
        b.addOperation(
            OperationType::TRANSPOSE_CONV_2D,
            {in, filter, bias, b.addInt32(0), b.addInt32(1), b.addInt32(3), b.addInt32(0),
             b.addInt32(3), b.addInt32(2), b.addInt32(1), b.addBool(false)},
            {out});
        models.emplace_back("nhwc_cropped", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kS8, {2, 7, 4, 5}, 0.25f, -3);
        const uint32_t filterIn = b.addInput(kS8, {9, 3, 3, 7}, 0.1f, 0);
        const uint32_t zeros =
            b.addConstant(kS8, {9, 3, 3, 7}, std::vector<int8_t>(9 * 3 * 3 * 7, 0), 0.1f, 0);
        const uint32_t filter = b.addOperand(kS8, {9, 3, 3, 7}, 0.1f, 0);
        b.addOperation(OperationType::ADD, {filterIn, zeros, b.addInt32(0)}, {filter});
        const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {9}, biases(9), 0.025f);
        const uint32_t shape =
            b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>{2, 9, 8, 10});
        const uint32_t out = b.addOutput(kS8, {2, 9, 8, 10}, 4.0f, 5);
        b.addOperation(OperationType::TRANSPOSE_CONV_2D,
                       {in, filter, bias, shape, b.addInt32(kPaddingSame), b.addInt32(2),
                        b.addInt32(2), b.addInt32(0), b.addBool(true)},
                       {out});
        models.emplace_back("nchw_run_time_filter", b.build());
    }
    for (const auto& [name, model] : models) {
        INFO(name);
        const auto claimed = claims(model);
        CHECK(std::all_of(claimed.begin(), claimed.end(), [](bool c) { return c; }));
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl}) {
            const auto partitions = runMatchingGolden(model, 7, npu);
            CHECK(partitions.size() == 1);
            CHECK(countNpu(partitions) == 1);
        }
    }
}

TEST_CASE("npu_reductions_and_pack_match_golden") {
    // REDUCE_MAX over height and width of a map whose 600 pixels need a 200 x 3 window,
    // REDUCE_MIN of int8 over the last axis (complemented copy, pool, complement), MEAN over the
    // first and last axes (the reduced axes copied outermost, then the averaging DWCONV) and a
    // float PACK along a middle axis, on the functional model and the RTL.
    std::vector<std::pair<std::string, Model>> models;
    const auto ints = [](ModelBuilder& b, std::vector<int32_t> v) {
        return b.addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(v.size())}, v);
    };
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {2, 20, 30, 17}, 0.5f, 7);
        const uint32_t out = b.addOutput(kQ8, {2, 17}, 0.5f, 7);
        b.addOperation(OperationType::REDUCE_MAX, {in, ints(b, {1, -2}), b.addBool(false)}, {out});
        models.emplace_back("reduce_max_hw", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kS8, {3, 5, 40}, 0.25f, -1);
        const uint32_t out = b.addOutput(kS8, {3, 5, 1}, 0.25f, -1);
        b.addOperation(OperationType::REDUCE_MIN, {in, ints(b, {2}), b.addBool(true)}, {out});
        models.emplace_back("reduce_min_last_axis", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t in = b.addInput(kQ8, {4, 6, 30}, 0.5f, 100);
        const uint32_t out = b.addOutput(kQ8, {6}, 0.5f, 100);
        b.addOperation(OperationType::MEAN, {in, ints(b, {0, -1}), b.addInt32(0)}, {out});
        models.emplace_back("mean_outer_and_last_axes", b.build());
    }
    {
        ModelBuilder b;
        const uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {4, 3, 5});
        const uint32_t y = b.addInput(OperandType::TENSOR_FLOAT32, {4, 3, 5});
        const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {4, 2, 3, 5});
        b.addOperation(OperationType::PACK, {b.addInt32(1), x, y}, {out});
        models.emplace_back("pack_float32", b.build());
    }
    for (const auto& [name, model] : models) {
        INFO(name);
        CHECK(claims(model) == std::vector<bool>{true});
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl}) {
            const auto partitions = runMatchingGolden(model, 9, npu, Placement::kNpu);
            CHECK(partitions.size() == 1);
            CHECK(countNpu(partitions) == 1);
        }
    }
}

TEST_CASE("npu_comparisons_and_pairs_match_golden") {
    // Comparisons (a SUB whose sign a LUT turns into BOOL8) and MAXIMUM / MINIMUM of two tensors
    // (two requantization tables, a pool over the pair), broadcasting, on the functional model and
    // the RTL. A comparison is claimed only where the integer rescaling keeps the order of the
    // real values for every pair: not for scales 1 and 0.3, where 0.3f * 10 is above 3.
    std::vector<std::pair<std::string, Model>> models;
    const auto binary = [](OperationType type, OperandType t, std::vector<uint32_t> da,
                           QuantTensor qa, std::vector<uint32_t> db, QuantTensor qb,
                           OperandType outType, std::vector<uint32_t> dout, QuantTensor qo) {
        ModelBuilder b;
        const uint32_t x = b.addInput(t, std::move(da), qa.scale, qa.zeroPoint);
        const uint32_t y = b.addInput(t, std::move(db), qb.scale, qb.zeroPoint);
        const uint32_t out = b.addOutput(outType, std::move(dout), qo.scale, qo.zeroPoint);
        b.addOperation(type, {x, y}, {out});
        return b.build();
    };
    constexpr auto kBool = OperandType::TENSOR_BOOL8;
    models.emplace_back("less_broadcast",
                        binary(OperationType::LESS, kQ8, {2, 3, 16}, {0, 0.5f, 120}, {3, 1},
                               {0, 0.25f, 100}, kBool, {2, 3, 16}, {0, 0, 0}));
    models.emplace_back("equal_signed",
                        binary(OperationType::EQUAL, kS8, {16, 64}, {0, 1.0f, -5}, {16, 64},
                               {0, 1.0f, -5}, kBool, {16, 64}, {0, 0, 0}));
    models.emplace_back("maximum_broadcast",
                        binary(OperationType::MAXIMUM, kQ8, {3, 1, 7}, {0, 0.5f, 100}, {5, 7},
                               {0, 0.75f, 140}, kQ8, {3, 5, 7}, {0, 0.6f, 128}));
    models.emplace_back("minimum_signed",
                        binary(OperationType::MINIMUM, kS8, {6, 9}, {0, 0.1f, 3}, {6, 9},
                               {0, 0.2f, -7}, kS8, {6, 9}, {0, 0.15f, 0}));
    for (const auto& [name, model] : models) {
        INFO(name);
        CHECK(claims(model) == std::vector<bool>{true});
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl}) {
            const auto partitions = runMatchingGolden(model, 13, npu, Placement::kNpu);
            CHECK(partitions.size() == 1);
            CHECK(countNpu(partitions) == 1);
        }
    }
    const Model inexact = binary(OperationType::GREATER, kQ8, {8}, {0, 1.0f, 0}, {8}, {0, 0.3f, 0},
                                 kBool, {8}, {0, 0, 0});
    const Status st = driver::checkOperationSupported(inexact, 0);
    CHECK_FALSE(st.ok());
    CHECK(st.message.find("scales") != std::string::npos);
}

TEST_CASE("npu_few_channel_strided_convolutions_match_golden") {
    // Strided convolutions of 3- and 2-channel inputs pack several kernel taps into each K step
    // (DescFlag::PACK), straight from the input: 3x3 / 2 with padding 0, 1 on an even width and
    // padded 1 all round as PyTorch pads, 7x7 / 2 with padding 3 on an odd width, 5x5 / 3 int8;
    // on the functional model and the RTL. A 1x1 / 2 convolution has one tap: run as it is.
    std::mt19937 rng(17);
    const auto conv = [&rng](OperandType type, std::vector<uint32_t> in, uint32_t outC, uint32_t k,
                             int32_t stride, std::array<int32_t, 4> pad,
                             std::vector<uint32_t> out) {
        ModelBuilder b;
        const int32_t zero = type == kQ8 ? 128 : 0;
        const uint32_t input = b.addInput(type, in, 0.5f, zero + 3);
        std::vector<uint8_t> weights(size_t{outC} * k * k * in[3]);
        for (auto& w : weights) w = static_cast<uint8_t>(zero + static_cast<int>(rng() % 41) - 20);
        std::vector<int32_t> bias(outC);
        for (auto& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
        const uint32_t filter = b.addConstant(type, {outC, k, k, in[3]}, weights, 0.05f, zero);
        const uint32_t biasOperand = b.addConstant(OperandType::TENSOR_INT32, {outC}, bias, 0.025f);
        const uint32_t output = b.addOutput(type, std::move(out), 1.0f, zero);
        std::vector<uint32_t> inputs{input, filter, biasOperand};
        for (int32_t v : {pad[0], pad[1], pad[2], pad[3], stride, stride, 0})
            inputs.push_back(b.addInt32(v));
        b.addOperation(OperationType::CONV_2D, inputs, {output});
        return b.build();
    };
    std::vector<std::pair<std::string, Model>> models;
    models.emplace_back("3x3_s2_even",
                        conv(kQ8, {1, 20, 24, 3}, 32, 3, 2, {0, 1, 0, 1}, {1, 10, 12, 32}));
    models.emplace_back("3x3_s2_padded_1",
                        conv(kQ8, {1, 20, 24, 3}, 32, 3, 2, {1, 1, 1, 1}, {1, 10, 12, 32}));
    models.emplace_back("7x7_s2_odd",
                        conv(kQ8, {2, 15, 17, 3}, 20, 7, 2, {3, 3, 3, 3}, {2, 8, 9, 20}));
    models.emplace_back("5x5_s3_int8",
                        conv(kS8, {1, 30, 27, 2}, 48, 5, 3, {1, 2, 2, 1}, {1, 10, 9, 48}));
    for (const auto& [name, model] : models) {
        INFO(name);
        CHECK(claims(model) == std::vector<bool>{true});
        auto program = driver::compileModel(model, {});
        REQUIRE_MESSAGE(program.ok(), program.status().message);
        for (const npu::Descriptor& d : program->descriptors) {
            CHECK(d.opcode == npu::Opcode::CONV);
            CHECK((d.flags & static_cast<uint32_t>(npu::DescFlag::PACK)) != 0);
        }
        for (auto npu : {sim::NpuImplementation::kFunctional, sim::NpuImplementation::kRtl})
            CHECK(runMatchingGolden(model, 19, npu).size() == 1);
    }
    auto pointwise = driver::compileModel(
        conv(kQ8, {1, 20, 24, 3}, 32, 1, 2, {0, 0, 0, 0}, {1, 10, 12, 32}), {});
    REQUIRE_MESSAGE(pointwise.ok(), pointwise.status().message);
    CHECK(pointwise->descriptors.front().opcode == npu::Opcode::CONV);
    CHECK((pointwise->descriptors.front().flags & static_cast<uint32_t>(npu::DescFlag::PACK)) == 0);
}

TEST_CASE("rewrite_zoo_converter_style_through_the_cli") {
    // `nncosim zoo ... --converter-style` then `nncosim run --backend auto`: the TRANSPOSE, PADs,
    // MEAN and the 8-way SOFTMAX on the NPU, nothing on the CPU, outputs identical to the
    // golden's.
    const std::string dir = makeTempDir("nncosim-rewrite-");
    REQUIRE_FALSE(dir.empty());
    CliResult zoo = cli(dir,
                        "zoo mobilenet_v2 --quant8 --converter-style --input-size 32 --width 0.25 "
                        "--classes 8 -o m.json");
    REQUIRE_MESSAGE(zoo.status == 0, zoo.output);
    CHECK(zoo.output.find("mobilenet_v2_0.25_32_quant8_converter") != std::string::npos);
    CliResult run = cli(dir, "run m.json --backend auto --npu func --json r.json");
    CHECK_MESSAGE(run.status == 0, run.output);
    const nlohmann::json report = readJson(dir + "/r.json");
    CHECK(report["verdict"] == "pass");
    std::set<std::string> onCpu;
    for (const auto& op : report["operations"]) {
        if (op["device"] == "cpu") onCpu.insert(op["type"].get<std::string>());
    }
    CHECK(onCpu.empty());
    std::filesystem::remove_all(dir);
}

TEST_CASE("cts_summary_by_numerics") {
    // `cts --summary` splits the tests by numerics (float, quantized-only, integer-only), the
    // classes the NPU's coverage targets are stated in.
    const std::string dir = makeTempDir("nncosim-numerics-");
    REQUIRE_FALSE(dir.empty());
    const std::string samples = std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/";
    const CliResult r =
        cli(dir, "cts --backend npu --npu func --summary s.json " + samples + "add.json " +
                     samples + "conv_quant8.json " + samples + "logical_and.json");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    CHECK(r.output.find("quantized tests") != std::string::npos);
    const nlohmann::json summary = readJson(dir + "/s.json");
    const nlohmann::json& by = summary["by_numerics"];
    int total = 0;
    for (const char* k : {"float", "quantized", "integer"}) {
        CAPTURE(k);
        REQUIRE(by.contains(k));
        total += by[k]["passed"].get<int>() + by[k]["failed"].get<int>() +
                 by[k]["unsupported"].get<int>();
    }
    CHECK(total == summary["total"].get<int>());
    CHECK(by["quantized"]["passed"].get<int>() > 0);
    CHECK(by["float"]["passed"].get<int>() > 0);         // float ADD on the NPU
    CHECK(by["integer"]["unsupported"].get<int>() > 0);  // LOGICAL_AND
    std::filesystem::remove_all(dir);
}
