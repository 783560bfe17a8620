// Per-operation validators of the comparison, logical, indexing, shape, lookup, recurrent,
// detection, control-flow and miscellaneous families: accepted and rejected models, and the
// CTS models (all of which are valid) run through the validators directly.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <set>
#include <string>
#include <vector>

#include "model/Builder.h"
#include "model/CtsReader.h"
#include "model/OperationValidation.h"
#include "model/Validation.h"

using namespace nncosim;

namespace {

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kF16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kI32 = OperandType::TENSOR_INT32;
constexpr OperandType kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kQ16 = OperandType::TENSOR_QUANT16_ASYMM;
constexpr OperandType kBool8 = OperandType::TENSOR_BOOL8;

/// One operation input: a model input tensor, a constant scalar or TENSOR_INT32, or NO_VALUE.
struct In {
    OperandType type = OperandType::TENSOR_FLOAT32;
    std::vector<uint32_t> dims;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
    double value = 0;           ///< for scalars
    std::vector<int32_t> data;  ///< for constant TENSOR_INT32
    bool omitted = false;
};

struct Out {
    OperandType type;
    std::vector<uint32_t> dims;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
};

In tensor(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zp = 0) {
    In in;
    in.type = type;
    in.dims = std::move(dims);
    in.scale = scale;
    in.zeroPoint = zp;
    return in;
}
In quant(OperandType type, std::vector<uint32_t> dims) {
    return tensor(type, std::move(dims), 0.5f, 0);
}
In scalar(OperandType type, double value) {
    In in = tensor(type, {});
    in.value = value;
    return in;
}
In i32(int32_t v) {
    return scalar(OperandType::INT32, v);
}
In f32(float v) {
    return scalar(OperandType::FLOAT32, v);
}
In f16(float v) {
    return scalar(OperandType::FLOAT16, v);
}
In boolean(bool v) {
    return scalar(OperandType::BOOL, v ? 1.0 : 0.0);
}
In ints(std::vector<int32_t> data) {
    In in = tensor(kI32, {static_cast<uint32_t>(data.size())});
    in.data = std::move(data);
    return in;
}
/// An omitted input; `dims` as the operand would have them (a NO_VALUE tensor without
/// dimensions has unspecified rank, which alone needs NNAPI 1.2).
In omitted(OperandType type, std::vector<uint32_t> dims = {}) {
    const bool quantized =
        type == OperandType::TENSOR_QUANT8_SYMM || type == OperandType::TENSOR_QUANT16_SYMM;
    In in = tensor(type, std::move(dims), quantized ? 0.5f : 0.0f);
    in.omitted = true;
    return in;
}
Out out(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zp = 0) {
    return {type, std::move(dims), scale, zp};
}
Out qout(OperandType type, std::vector<uint32_t> dims) {
    return out(type, std::move(dims), 0.5f, 0);
}

uint32_t addIn(ModelBuilder& b, const In& in) {
    if (in.omitted) {
        const uint32_t k = b.addNoValue(in.type);
        b.model().main.operands[k].dimensions = in.dims;
        b.model().main.operands[k].scale = in.scale;
        return k;
    }
    switch (in.type) {
        case OperandType::INT32:
            return b.addInt32(static_cast<int32_t>(in.value));
        case OperandType::FLOAT32:
            return b.addFloat32(static_cast<float>(in.value));
        case OperandType::BOOL:
            return b.addBool(in.value != 0);
        case OperandType::FLOAT16: {
            const auto bits = Eigen::numext::bit_cast<uint16_t>(Eigen::half(in.value));
            return b.addConstant<uint16_t>(OperandType::FLOAT16, {}, {bits});
        }
        default:
            if (!in.data.empty()) return b.addConstant(in.type, in.dims, in.data);
            return b.addInput(in.type, in.dims, in.scale, in.zeroPoint);
    }
}

/// A model made of one operation.
Model single(OperationType type, const std::vector<In>& ins, const std::vector<Out>& outs) {
    ModelBuilder b;
    std::vector<uint32_t> inputs;
    for (const In& in : ins) inputs.push_back(addIn(b, in));
    std::vector<uint32_t> outputs;
    for (const Out& o : outs) outputs.push_back(b.addOutput(o.type, o.dims, o.scale, o.zeroPoint));
    b.addOperation(type, inputs, outputs);
    return b.build();
}

void expectValid(const Model& model, FeatureLevel level) {
    auto result = validateModel(model);
    INFO(result.status().message);
    REQUIRE(result.ok());
    CHECK(nameOf(*result) == nameOf(level));
}

void expectInvalid(const Model& model, const std::string& needle) {
    auto result = validateModel(model);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code == ErrorStatus::INVALID_ARGUMENT);
    INFO(result.status().message);
    CHECK(result.status().message.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("model_operations_comparison") {
    const auto less = [](In a, In b, Out o) {
        return single(OperationType::LESS, {std::move(a), std::move(b)}, {std::move(o)});
    };
    expectValid(less(tensor(kF32, {2, 3}), tensor(kF32, {3}), out(kBool8, {2, 3})),
                FeatureLevel::kV1_2);
    expectValid(less(quant(kQ8S, {2}), quant(kQ8S, {2}), out(kBool8, {2})), FeatureLevel::kV1_3);
    expectValid(single(OperationType::EQUAL, {tensor(kBool8, {2}), tensor(kBool8, {2})},
                       {out(kBool8, {2})}),
                FeatureLevel::kV1_2);
    expectInvalid(less(tensor(kF32, {2}), tensor(kF32, {2}), out(kF32, {2})),
                  "output 0 has type TENSOR_FLOAT32, expected TENSOR_BOOL8");
    expectInvalid(less(tensor(kF32, {2}), tensor(kI32, {2}), out(kBool8, {2})),
                  "input 1 has type TENSOR_INT32, expected TENSOR_FLOAT32");
    expectInvalid(less(tensor(kF32, {2, 3}), tensor(kF32, {2}), out(kBool8, {2, 3})),
                  "not broadcast-compatible");
    expectInvalid(
        single(OperationType::GREATER, {tensor(kF32, {2}), tensor(kF32, {2}), tensor(kF32, {2})},
               {out(kBool8, {2})}),
        "expected 2 inputs, got 3");
    expectInvalid(
        single(OperationType::NOT_EQUAL, {quant(kQ16, {2}), quant(kQ16, {2})}, {out(kBool8, {2})}),
        "unsupported type TENSOR_QUANT16_ASYMM");

    // MAXIMUM may requantize; POW is float only.
    expectValid(single(OperationType::MAXIMUM, {quant(kQ8, {2}), tensor(kQ8, {2}, 0.25f, 3)},
                       {out(kQ8, {2}, 1.0f, 7)}),
                FeatureLevel::kV1_2);
    expectInvalid(
        single(OperationType::MINIMUM, {tensor(kF32, {2}), tensor(kF32, {2})}, {out(kF16, {2})}),
        "output 0 has type TENSOR_FLOAT16");
    expectValid(
        single(OperationType::POW, {tensor(kF16, {2}), tensor(kF16, {1})}, {out(kF16, {2})}),
        FeatureLevel::kV1_2);
    expectInvalid(
        single(OperationType::POW, {tensor(kI32, {2}), tensor(kI32, {2})}, {out(kI32, {2})}),
        "input 0 has unsupported type TENSOR_INT32");
}

TEST_CASE("model_operations_logical") {
    expectValid(single(OperationType::LOGICAL_AND, {tensor(kBool8, {2, 2}), tensor(kBool8, {1})},
                       {out(kBool8, {2, 2})}),
                FeatureLevel::kV1_2);
    expectInvalid(single(OperationType::LOGICAL_OR, {tensor(kBool8, {2}), tensor(kI32, {2})},
                         {out(kBool8, {2})}),
                  "input 1 has type TENSOR_INT32, expected TENSOR_BOOL8");
    expectValid(single(OperationType::LOGICAL_NOT, {tensor(kBool8, {3})}, {out(kBool8, {3})}),
                FeatureLevel::kV1_2);
    expectInvalid(single(OperationType::LOGICAL_NOT, {tensor(kBool8, {3})}, {out(kF32, {3})}),
                  "output 0 has type TENSOR_FLOAT32");

    const auto select = [](In mask, In a, In b, Out o) {
        return single(OperationType::SELECT, {std::move(mask), std::move(a), std::move(b)},
                      {std::move(o)});
    };
    expectValid(select(tensor(kBool8, {2, 2}), quant(kQ8, {2, 2}), tensor(kQ8, {2, 2}, 1.0f, 1),
                       out(kQ8, {2, 2}, 2.0f, 0)),
                FeatureLevel::kV1_2);
    expectValid(select(tensor(kBool8, {2}), quant(kQ8S, {2}), quant(kQ8S, {2}), qout(kQ8S, {2})),
                FeatureLevel::kV1_3);
    expectInvalid(select(tensor(kI32, {2}), tensor(kF32, {2}), tensor(kF32, {2}), out(kF32, {2})),
                  "input 0 has type TENSOR_INT32, expected TENSOR_BOOL8");
    expectInvalid(select(tensor(kBool8, {2}), tensor(kF32, {2}), tensor(kF16, {2}), out(kF32, {2})),
                  "input 2 has type TENSOR_FLOAT16");
    expectInvalid(select(tensor(kBool8, {2}), tensor(kF32, {3}), tensor(kF32, {3}), out(kF32, {3})),
                  "differs from the mask");
}

TEST_CASE("model_operations_indexing") {
    SUBCASE("gather") {
        const auto gather = [](int32_t axis, Out o) {
            return single(OperationType::GATHER, {quant(kQ8, {3, 4}), i32(axis), tensor(kI32, {2})},
                          {std::move(o)});
        };
        expectValid(gather(-1, qout(kQ8, {3, 2})), FeatureLevel::kV1_2);
        expectInvalid(gather(2, qout(kQ8, {3, 2})), "(axis) must be in [-2, 2)");
        expectInvalid(gather(0, out(kQ8, {2, 4}, 1.0f, 0)), "quantization");
        expectInvalid(single(OperationType::GATHER, {tensor(kF32, {3}), i32(0), tensor(kF32, {2})},
                             {out(kF32, {2})}),
                      "input 2 has type TENSOR_FLOAT32, expected TENSOR_INT32");
    }
    SUBCASE("split") {
        const auto split = [](int32_t splits, std::vector<Out> outs) {
            return single(OperationType::SPLIT, {tensor(kF32, {2, 4}), i32(1), i32(splits)}, outs);
        };
        expectValid(split(2, {out(kF32, {2, 2}), out(kF32, {2, 2})}), FeatureLevel::kV1_2);
        expectInvalid(split(2, {out(kF32, {2, 2}), out(kF32, {2, 2}), out(kF32, {2, 2})}),
                      "number of splits) is 2 but the operation has 3 outputs");
        expectInvalid(split(3, {out(kF32, {2, 1}), out(kF32, {2, 1}), out(kF32, {2, 1})}),
                      "does not evenly divide the axis size 4");
        expectInvalid(split(0, {out(kF32, {2, 4})}), "number of splits) must be >= 1");
        expectInvalid(split(2, {out(kF32, {2, 2}), out(kI32, {2, 2})}),
                      "output 1 has type TENSOR_INT32");
    }
    SUBCASE("slice tile topk") {
        expectValid(single(OperationType::SLICE, {tensor(kF32, {2, 3}), ints({0, 1}), ints({2, 2})},
                           {out(kF32, {2, 2})}),
                    FeatureLevel::kV1_2);
        expectInvalid(single(OperationType::SLICE, {tensor(kF32, {2, 3}), ints({0}), ints({2, 2})},
                             {out(kF32, {2, 2})}),
                      "input 1 (begin) must have 2 elements");
        expectValid(single(OperationType::TILE, {quant(kQ8S, {2}), ints({3})}, {qout(kQ8S, {6})}),
                    FeatureLevel::kV1_3);
        expectInvalid(
            single(OperationType::TILE, {tensor(kF32, {2}), tensor(kF32, {1})}, {out(kF32, {6})}),
            "input 1 has type TENSOR_FLOAT32, expected TENSOR_INT32");
        const auto topk = [](int32_t k, OperandType indices) {
            return single(OperationType::TOPK_V2, {tensor(kF32, {2, 5}), i32(k)},
                          {out(kF32, {2, 2}), out(indices, {2, 2})});
        };
        expectValid(topk(2, kI32), FeatureLevel::kV1_2);
        expectInvalid(topk(6, kI32),
                      "input 1 (k) is 6 but the last dimension of input 0 has only 5");
        expectInvalid(topk(0, kI32), "(k) must be >= 1");
        expectInvalid(topk(2, kF32), "output 1 has type TENSOR_FLOAT32, expected TENSOR_INT32");
    }
    SUBCASE("argmax argmin") {
        expectValid(single(OperationType::ARGMAX, {tensor(kF16, {2, 3}), i32(1)}, {out(kI32, {2})}),
                    FeatureLevel::kV1_2);
        expectValid(single(OperationType::ARGMIN, {quant(kQ8S, {2, 3}), i32(-2)}, {out(kI32, {3})}),
                    FeatureLevel::kV1_3);
        expectInvalid(
            single(OperationType::ARGMIN, {tensor(kF32, {2, 3}), i32(2)}, {out(kI32, {2})}),
            "(axis) must be in [-2, 2)");
        expectInvalid(
            single(OperationType::ARGMAX, {tensor(kF32, {2, 3}), i32(1)}, {out(kF32, {2})}),
            "output 0 has type TENSOR_FLOAT32, expected TENSOR_INT32");
        expectInvalid(
            single(OperationType::ARGMAX, {tensor(kBool8, {2}), i32(0)}, {out(kI32, {1})}),
            "unsupported type TENSOR_BOOL8");
    }
    SUBCASE("reverse") {
        const auto reverse = [](In axis, Out o) {
            return single(OperationType::REVERSE, {quant(kQ8, {2, 3}), std::move(axis)},
                          {std::move(o)});
        };
        expectValid(reverse(ints({1}), qout(kQ8, {2, 3})), FeatureLevel::kAidlV3);
        expectInvalid(reverse(ints({2}), qout(kQ8, {2, 3})), "(axis) must be in [0, 2), got 2");
        expectInvalid(reverse(ints({0, 1}), qout(kQ8, {2, 3})), "(axis) must have 1 elements");
        expectInvalid(reverse(ints({0}), qout(kQ8, {6})), "output 0 has rank 1");
    }
}

TEST_CASE("model_operations_shape") {
    expectValid(
        single(OperationType::EXPAND_DIMS, {tensor(kF32, {2, 3}), i32(-3)}, {out(kF32, {1, 2, 3})}),
        FeatureLevel::kV1_2);
    expectInvalid(
        single(OperationType::EXPAND_DIMS, {tensor(kF32, {2, 3}), i32(3)}, {out(kF32, {2, 3, 1})}),
        "(axis) must be in [-3, 3)");

    expectValid(single(OperationType::FILL, {ints({2, 2}), f16(1.5f)}, {out(kF16, {2, 2})}),
                FeatureLevel::kV1_3);
    expectInvalid(single(OperationType::FILL, {ints({2, 2}), f32(1.5f)}, {out(kF16, {2, 2})}),
                  "input 1 has type FLOAT32, expected FLOAT16");
    expectInvalid(single(OperationType::FILL, {ints({2}), i32(1)}, {out(kBool8, {2})}),
                  "output 0 has unsupported type TENSOR_BOOL8");

    expectValid(
        single(OperationType::RANK, {tensor(OperandType::TENSOR_QUANT16_SYMM, {2, 2}, 1.0f)},
               {out(OperandType::INT32, {})}),
        FeatureLevel::kV1_3);
    expectInvalid(single(OperationType::RANK, {tensor(kF32, {2})}, {out(kI32, {1})}),
                  "output 0 has type TENSOR_INT32, expected INT32");

    const auto pack = [](int32_t axis, std::vector<In> tensors, Out o) {
        std::vector<In> ins = {i32(axis)};
        ins.insert(ins.end(), tensors.begin(), tensors.end());
        return single(OperationType::PACK, ins, {std::move(o)});
    };
    expectValid(pack(2, {quant(kQ8, {2, 3}), quant(kQ8, {2, 3})}, qout(kQ8, {2, 3, 2})),
                FeatureLevel::kAidlV2);
    expectInvalid(pack(3, {tensor(kF32, {2, 3}), tensor(kF32, {2, 3})}, out(kF32, {2, 3, 2})),
                  "(axis) must be in [0, 3), got 3");
    expectInvalid(pack(0, {tensor(kF32, {2, 3}), tensor(kF32, {6})}, out(kF32, {2, 2, 3})),
                  "input 2 has rank 1, expected 2");
    expectInvalid(pack(0, {tensor(kF32, {2}), tensor(kI32, {2})}, out(kF32, {2, 2})),
                  "input 2 has type TENSOR_INT32, expected TENSOR_FLOAT32");
    expectInvalid(pack(0, {quant(kQ8, {2}), tensor(kQ8, {2}, 1.0f, 0)}, qout(kQ8, {2, 2})),
                  "quantization");
    expectInvalid(single(OperationType::PACK, {i32(0)}, {out(kF32, {1})}),
                  "at least 1 input tensor");
}

TEST_CASE("model_operations_lookup") {
    expectValid(single(OperationType::EMBEDDING_LOOKUP, {tensor(kI32, {2}), quant(kQ8, {4, 3})},
                       {qout(kQ8, {2, 3})}),
                FeatureLevel::kV1_2);
    expectValid(single(OperationType::EMBEDDING_LOOKUP, {tensor(kI32, {2}), tensor(kF16, {4, 3})},
                       {out(kF16, {2, 3})}),
                FeatureLevel::kV1_3);
    expectInvalid(single(OperationType::EMBEDDING_LOOKUP, {tensor(kI32, {2}), tensor(kF32, {4})},
                         {out(kF32, {2})}),
                  "(values) must have rank >= 2");

    const auto hashtable = [](Out hits) {
        return single(OperationType::HASHTABLE_LOOKUP,
                      {tensor(kI32, {2}), tensor(kI32, {4}), tensor(kF32, {4, 3})},
                      {out(kF32, {2, 3}), std::move(hits)});
    };
    expectValid(hashtable(out(kQ8, {2}, 1.0f, 0)), FeatureLevel::kV1_0);
    expectInvalid(hashtable(out(kQ8, {2}, 0.5f, 0)), "must have scale 1 and zero point 0");
    expectInvalid(hashtable(out(kBool8, {2})), "output 1 has type TENSOR_BOOL8");

    const auto lsh = [](OperandType hash, In weight, int32_t type) {
        return single(OperationType::LSH_PROJECTION,
                      {tensor(hash, {4, 2}), tensor(kI32, {3, 2}), std::move(weight), i32(type)},
                      {out(kI32, {8})});
    };
    expectValid(lsh(kF32, tensor(kF32, {3}), 2), FeatureLevel::kV1_0);
    expectValid(lsh(kF32, omitted(kF32, {3}), 1), FeatureLevel::kV1_0);
    expectValid(lsh(kF32, tensor(kF32, {3}), 3), FeatureLevel::kV1_2);
    expectInvalid(lsh(kF32, tensor(kF32, {3}), 4), "(projection type) must be in [1, 3], got 4");
    expectInvalid(lsh(kF32, tensor(kF16, {3}), 2), "input 2 has type TENSOR_FLOAT16");
    expectInvalid(lsh(kF32, tensor(kF32, {2}), 2), "input 2 (weight) must have 3 elements");
    expectInvalid(single(OperationType::LSH_PROJECTION,
                         {tensor(kF32, {4, 2}), tensor(kF32, {3}), tensor(kF32, {3}),
                          omitted(OperandType::INT32)},
                         {out(kI32, {8})}),
                  "input 3 is required but has no value");
}

namespace {

/// LSTM (NNAPI 1.0 layout) with 2 inputs and 4 cell units: input [1,2], weights [4,2] and
/// [4,4], gate vectors [4], states [1,4]; `omit` lists inputs left out (NO_VALUE).
Model lstmModel(const std::set<uint32_t>& omit, int32_t activation = 4, float cellClip = 0.0f,
                bool layerNorm = false) {
    std::vector<In> ins;
    for (uint32_t i = 0; i < 20; ++i) {
        std::vector<uint32_t> dims = i == 0              ? std::vector<uint32_t>{1, 2}
                                     : i <= 4            ? std::vector<uint32_t>{4, 2}
                                     : i <= 8 || i == 16 ? std::vector<uint32_t>{4, 4}
                                     : i >= 18           ? std::vector<uint32_t>{1, 4}
                                                         : std::vector<uint32_t>{4};
        ins.push_back(omit.count(i) ? omitted(kF32, dims) : tensor(kF32, dims));
    }
    ins.insert(ins.end(), {i32(activation), f32(cellClip), f32(0.0f)});
    if (layerNorm) {
        for (uint32_t i = 23; i < 27; ++i) {
            ins.push_back(omit.count(i) ? omitted(kF32, {4}) : tensor(kF32, {4}));
        }
    }
    return single(OperationType::LSTM, ins,
                  {out(kF32, {1, 16}), out(kF32, {1, 4}), out(kF32, {1, 4}), out(kF32, {1, 4})});
}

/// The inputs a plain LSTM (no peephole, no projection) leaves out.
const std::set<uint32_t> kPlain = {9, 10, 11, 16, 17};

}  // namespace

TEST_CASE("model_operations_recurrent") {
    SUBCASE("lstm") {
        expectValid(lstmModel(kPlain), FeatureLevel::kV1_0);
        expectValid(lstmModel({}), FeatureLevel::kV1_0);  // peephole and projection
        expectValid(lstmModel({1, 5, 9, 12, 16, 17}), FeatureLevel::kV1_0);  // CIFG with peephole
        expectValid(lstmModel({1, 5, 9, 10, 11, 12, 16, 17, 23}, 4, 0.0f, true),
                    FeatureLevel::kV1_2);
        expectInvalid(lstmModel({1, 9, 10, 11, 16, 17}), "(input-gate weights and bias)");
        expectInvalid(lstmModel({9, 11, 16, 17}), "cell-to-forget and cell-to-output");
        expectInvalid(lstmModel({10, 11, 16, 17}),
                      "(cell-to-input weights) must have a value exactly");
        expectInvalid(lstmModel({9, 10, 11, 16}), "(projection bias) needs projection weights");
        expectInvalid(lstmModel({2, 9, 10, 11, 16, 17}), "input 2 is required but has no value");
        expectInvalid(lstmModel(kPlain, 2), "(activation) must be 0, 1, 3, 4 or 6, got 2");
        expectInvalid(lstmModel(kPlain, 4, -1.0f), "(cell clip) must be >= 0");
        expectInvalid(lstmModel({9, 10, 11, 16, 17, 24}, 4, 0.0f, true),
                      "(layer normalization weights) must all have values");
        Model wrongType = lstmModel(kPlain);
        wrongType.main.operands[wrongType.main.operations[0].inputs[14]].type = kF16;
        expectInvalid(wrongType, "input 14 has type TENSOR_FLOAT16, expected TENSOR_FLOAT32");
        Model omittedType = lstmModel(kPlain);
        omittedType.main.operands[omittedType.main.operations[0].inputs[16]].type = kI32;
        expectInvalid(omittedType, "input 16 has type TENSOR_INT32, expected TENSOR_FLOAT32");
        Model threeOutputs = lstmModel(kPlain);
        threeOutputs.main.operations[0].outputs.pop_back();
        expectInvalid(threeOutputs, "expected 4 outputs, got 3");
    }
    SUBCASE("sequence lstm") {
        std::vector<In> ins = {tensor(kF16, {3, 1, 2})};
        for (uint32_t i = 1; i < 20; ++i) {
            if (i == 9 || i == 10 || i == 11 || i == 16 || i == 17) {
                ins.push_back(omitted(kF16));
            } else {
                ins.push_back(tensor(kF16, i <= 8 || i >= 18 ? std::vector<uint32_t>{4, 4}
                                                             : std::vector<uint32_t>{4}));
            }
        }
        ins.insert(ins.end(), {i32(4), f16(0.0f), f16(0.0f), boolean(true)});
        for (int i = 0; i < 4; ++i) ins.push_back(omitted(kF16));
        expectValid(
            single(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, {out(kF16, {3, 1, 4})}),
            FeatureLevel::kV1_2);
        expectValid(single(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins,
                           {out(kF16, {3, 1, 4}), out(kF16, {1, 4}), out(kF16, {1, 4})}),
                    FeatureLevel::kV1_3);
        expectInvalid(single(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins,
                             {out(kF16, {3, 1, 4}), out(kF16, {1, 4})}),
                      "expected 1 or 3 outputs, got 2");
        ins[21] = f32(0.0f);
        expectInvalid(
            single(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, {out(kF16, {3, 1, 4})}),
            "input 21 has type FLOAT32, expected FLOAT16");
    }
    SUBCASE("bidirectional lstm") {
        const auto bidi = [](bool merge, uint32_t numOutputs) {
            std::vector<In> ins = {tensor(kF32, {3, 1, 2})};
            for (uint32_t b : {0u, 17u}) {
                for (uint32_t i = 1; i <= 17; ++i) {
                    if (i == 9 || i == 10 || i == 11 || i == 16 || i == 17) {
                        ins.push_back(omitted(kF32));
                    } else {
                        ins.push_back(tensor(
                            kF32, i <= 8 ? std::vector<uint32_t>{4, 4} : std::vector<uint32_t>{4}));
                    }
                }
                (void)b;
            }
            for (int i = 0; i < 4; ++i) ins.push_back(tensor(kF32, {1, 4}));  // states
            for (int i = 0; i < 9; ++i) ins.push_back(omitted(kF32));         // aux input, weights
            ins.insert(ins.end(), {i32(4), f32(0), f32(0), boolean(merge), boolean(true)});
            for (int i = 0; i < 8; ++i) ins.push_back(omitted(kF32));  // layer normalization
            std::vector<Out> outs(numOutputs, out(kF32, {}));
            return single(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, ins, outs);
        };
        expectValid(bidi(false, 2), FeatureLevel::kV1_2);
        expectValid(bidi(true, 1), FeatureLevel::kV1_2);
        expectValid(bidi(false, 6), FeatureLevel::kV1_3);
        expectInvalid(bidi(true, 2), "(merge outputs) is true, which needs 1 or 5 outputs, got 2");
        expectInvalid(bidi(false, 3), "expected 1 or 2 or 5 or 6 outputs, got 3");
    }
    SUBCASE("quantized lstm") {
        std::vector<In> ins = {quant(kQ8S, {1, 2})};
        for (int i = 0; i < 8; ++i)
            ins.push_back(quant(OperandType::TENSOR_QUANT8_SYMM, {4, i < 4 ? 2u : 4u}));
        for (int i = 0; i < 3; ++i) ins.push_back(omitted(OperandType::TENSOR_QUANT16_SYMM));
        for (int i = 0; i < 4; ++i) ins.push_back(tensor(kI32, {4}));
        ins.insert(ins.end(),
                   {omitted(OperandType::TENSOR_QUANT8_SYMM), omitted(kI32), quant(kQ8S, {1, 4}),
                    quant(OperandType::TENSOR_QUANT16_SYMM, {1, 4})});
        for (int i = 0; i < 4; ++i) ins.push_back(quant(OperandType::TENSOR_QUANT16_SYMM, {4}));
        for (int i = 0; i < 6; ++i) ins.push_back(f32(i < 2 ? 0.0f : 0.007f));
        ins.insert(ins.end(), {i32(0), f32(0.007f)});
        const std::vector<Out> outs = {
            qout(kQ8S, {1, 4}), qout(OperandType::TENSOR_QUANT16_SYMM, {1, 4}), qout(kQ8S, {1, 4})};
        expectValid(single(OperationType::QUANTIZED_LSTM, ins, outs), FeatureLevel::kV1_3);
        ins[24] = f32(-1.0f);
        expectInvalid(single(OperationType::QUANTIZED_LSTM, ins, outs), "(cell clip) must be >= 0");
        ins[24] = f32(0.0f);
        ins[13] = omitted(kI32);
        expectInvalid(single(OperationType::QUANTIZED_LSTM, ins, outs), "input 13 is required");
    }
    SUBCASE("quantized 16-bit lstm") {
        const auto model = [](float cellScale) {
            std::vector<In> ins = {tensor(kQ8, {1, 2}, 1.0f / 128, 128)};
            for (int i = 0; i < 8; ++i) ins.push_back(tensor(kQ8, {4, i < 4 ? 2u : 4u}, 0.5f, 100));
            for (int i = 0; i < 4; ++i) ins.push_back(tensor(kI32, {4}, 0.5f / 128, 0));
            ins.push_back(tensor(OperandType::TENSOR_QUANT16_SYMM, {1, 4}, cellScale, 0));
            ins.push_back(tensor(kQ8, {1, 4}, 1.0f / 128, 128));
            return single(OperationType::QUANTIZED_16BIT_LSTM, ins,
                          {out(OperandType::TENSOR_QUANT16_SYMM, {1, 4}, 1.0f / 2048, 0),
                           out(kQ8, {1, 4}, 1.0f / 128, 128)});
        };
        expectValid(model(1.0f / 2048), FeatureLevel::kV1_2);
        expectInvalid(model(1.0f / 1024), "(previous cell state) must have scale");
    }
    SUBCASE("rnn svdf") {
        const auto rnn = [](int32_t activation, OperandType stateType) {
            return single(OperationType::RNN,
                          {tensor(kF32, {1, 2}), tensor(kF32, {4, 2}), tensor(kF32, {4, 4}),
                           tensor(kF32, {4}), tensor(kF32, {1, 4}), i32(activation)},
                          {out(stateType, {1, 4}), out(kF32, {1, 4})});
        };
        expectValid(rnn(1, kF32), FeatureLevel::kV1_0);
        expectInvalid(rnn(4, kF32), "(fused activation code) must be in [0, 3]");
        expectInvalid(rnn(1, kF16), "output 0 has type TENSOR_FLOAT16");

        const auto svdf = [](In bias, int32_t rank) {
            return single(OperationType::SVDF,
                          {tensor(kF32, {1, 2}), tensor(kF32, {4, 2}), tensor(kF32, {4, 3}),
                           std::move(bias), tensor(kF32, {1, 12}), i32(rank), i32(0)},
                          {out(kF32, {1, 12}), out(kF32, {1, 2})});
        };
        expectValid(svdf(tensor(kF32, {2}), 2), FeatureLevel::kV1_0);
        expectValid(svdf(omitted(kF32, {2}), 1), FeatureLevel::kV1_0);
        expectInvalid(svdf(tensor(kF32, {2}), 3), "(rank) 3 must divide the number of filters 4");
        expectInvalid(svdf(tensor(kF32, {2}), 0), "(rank) must be >= 1");
    }
    SUBCASE("sequence rnn") {
        const auto uni = [](int32_t timeMajor, uint32_t numOutputs) {
            std::vector<Out> outs = {out(kF32, {2, 1, 4})};
            if (numOutputs == 2) outs.push_back(out(kF32, {1, 4}));
            return single(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN,
                          {tensor(kF32, {2, 1, 2}), tensor(kF32, {4, 2}), tensor(kF32, {4, 4}),
                           tensor(kF32, {4}), tensor(kF32, {1, 4}), i32(1), i32(timeMajor)},
                          outs);
        };
        expectValid(uni(1, 1), FeatureLevel::kV1_2);
        expectValid(uni(0, 2), FeatureLevel::kV1_3);
        expectInvalid(uni(2, 1), "(time major) must be in [0, 1]");

        const auto bidi = [](In auxInput, In auxWeights, bool merge, uint32_t numOutputs) {
            std::vector<In> ins = {tensor(kF32, {2, 1, 2})};
            for (int d = 0; d < 2; ++d) {
                ins.insert(ins.end(), {tensor(kF32, {4, 2}), tensor(kF32, {4, 4}),
                                       tensor(kF32, {4}), tensor(kF32, {1, 4})});
            }
            ins.insert(ins.end(),
                       {auxInput, auxWeights, auxWeights, i32(0), boolean(true), boolean(merge)});
            return single(OperationType::BIDIRECTIONAL_SEQUENCE_RNN, ins,
                          std::vector<Out>(numOutputs, out(kF32, {})));
        };
        expectValid(bidi(omitted(kF32), omitted(kF32), false, 2), FeatureLevel::kV1_2);
        expectValid(bidi(tensor(kF32, {2, 1, 3}), tensor(kF32, {4, 3}), true, 1),
                    FeatureLevel::kV1_2);
        expectValid(bidi(tensor(kF32, {2, 1, 3}), omitted(kF32), false, 4), FeatureLevel::kV1_3);
        expectInvalid(bidi(omitted(kF32), tensor(kF32, {4, 3}), false, 2),
                      "need the auxiliary input (input 9)");
        expectInvalid(bidi(omitted(kF32), omitted(kF32), false, 3),
                      "(merge outputs) is false, which needs 2 or 4 outputs, got 3");
    }
}

TEST_CASE("model_operations_detection") {
    SUBCASE("roi align and pooling") {
        const auto roiAlign = [](In boxes, int32_t sampling) {
            return single(OperationType::ROI_ALIGN,
                          {quant(kQ8, {1, 4, 4, 1}), std::move(boxes), tensor(kI32, {2}), i32(2),
                           i32(2), f32(1.0f), f32(1.0f), i32(sampling), i32(0), boolean(false)},
                          {out(kQ8, {2, 2, 2, 1}, 0.25f, 3)});
        };
        expectValid(roiAlign(tensor(kQ16, {2, 4}, 0.125f, 0), 0), FeatureLevel::kV1_2);
        expectInvalid(roiAlign(tensor(kQ16, {2, 4}, 0.25f, 0), 0),
                      "input 1 of type TENSOR_QUANT16_ASYMM must have scale 0.125");
        expectInvalid(roiAlign(tensor(kQ16, {2, 4}, 0.125f, 0), -1),
                      "(height sampling ratio) must be >= 0");
        expectInvalid(roiAlign(tensor(kQ16, {2, 3}, 0.125f, 0), 0),
                      "(regions of interest) must have 4 elements along dimension 1");
        expectInvalid(roiAlign(tensor(kF32, {2, 4}), 0),
                      "input 1 has type TENSOR_FLOAT32, expected TENSOR_QUANT16_ASYMM");

        const auto roiPooling = [](int32_t width, Out o) {
            return single(OperationType::ROI_POOLING,
                          {tensor(kF16, {1, 4, 4, 1}), tensor(kF16, {2, 4}), tensor(kI32, {2}),
                           i32(2), i32(width), f16(0.5f), f16(0.5f), boolean(false)},
                          {std::move(o)});
        };
        expectValid(roiPooling(2, out(kF16, {2, 2, 2, 1})), FeatureLevel::kV1_2);
        expectInvalid(roiPooling(0, out(kF16, {2, 2, 2, 1})), "(output width) must be >= 1");
        expectInvalid(roiPooling(2, out(kF32, {2, 2, 2, 1})), "output 0 has type TENSOR_FLOAT32");
    }
    SUBCASE("box transforms") {
        const auto transform = [](In deltas, float boxScale) {
            return single(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM,
                          {tensor(kQ16, {2, 4}, boxScale, 0), std::move(deltas), tensor(kI32, {2}),
                           tensor(kQ16, {1, 2}, 0.125f, 0)},
                          {out(kQ16, {2, 8}, 0.125f, 0)});
        };
        expectValid(transform(quant(kQ8, {2, 8}), 0.125f), FeatureLevel::kV1_2);
        expectValid(transform(quant(kQ8S, {2, 8}), 0.125f), FeatureLevel::kV1_3);
        expectInvalid(transform(quant(kQ8, {2, 8}), 0.5f),
                      "input 0 of type TENSOR_QUANT16_ASYMM must have scale");
        expectInvalid(transform(tensor(kF32, {2, 8}), 0.125f),
                      "input 1 has unsupported type TENSOR_FLOAT32");

        const auto nms = [](int32_t kernel, Out scores) {
            return single(
                OperationType::BOX_WITH_NMS_LIMIT,
                {quant(kQ8, {3, 2}), tensor(kQ16, {3, 8}, 0.125f, 0), tensor(kI32, {3}), f32(0.1f),
                 i32(-1), i32(kernel), f32(0.5f), f32(0.5f), f32(0.1f)},
                {std::move(scores), out(kQ16, {0, 4}, 0.125f, 0), out(kI32, {0}), out(kI32, {0})});
        };
        expectValid(nms(2, qout(kQ8, {0})), FeatureLevel::kV1_2);
        expectInvalid(nms(3, qout(kQ8, {0})), "(NMS kernel, 0 hard, 1 linear, 2 gaussian)");
        expectInvalid(nms(0, out(kQ8, {0}, 1.0f, 0)), "quantization");
    }
    SUBCASE("proposals and keypoints") {
        const auto proposals = [](float anchorScale) {
            return single(OperationType::GENERATE_PROPOSALS,
                          {quant(kQ8S, {1, 2, 2, 2}), quant(kQ8S, {1, 2, 2, 8}),
                           tensor(OperandType::TENSOR_QUANT16_SYMM, {2, 4}, anchorScale, 0),
                           tensor(kQ16, {1, 2}, 0.125f, 0), f32(1.0f), f32(1.0f), i32(-1), i32(-1),
                           f32(0.5f), f32(1.0f), boolean(false)},
                          {qout(kQ8S, {0}), out(kQ16, {0, 4}, 0.125f, 0), out(kI32, {0})});
        };
        expectValid(proposals(0.125f), FeatureLevel::kV1_3);
        expectInvalid(proposals(0.5f),
                      "(anchors) of type TENSOR_QUANT16_SYMM must have scale 0.125");

        const auto postprocess = [](int32_t maxDetections) {
            return single(
                OperationType::DETECTION_POSTPROCESSING,
                {tensor(kF32, {1, 4, 3}), tensor(kF32, {1, 4, 4}), tensor(kF32, {4, 4}), f32(10),
                 f32(10), f32(5), f32(5), boolean(true), i32(maxDetections), i32(1), i32(1), f32(0),
                 f32(0.5f), boolean(false)},
                {out(kF32, {1, 3}), out(kF32, {1, 3, 4}), out(kI32, {1, 3}), out(kI32, {1})});
        };
        expectValid(postprocess(3), FeatureLevel::kV1_2);
        expectInvalid(postprocess(0), "(maximum number of detections) must be >= 1");

        const auto heatmap = [](std::vector<uint32_t> dims, Out locations) {
            return single(
                OperationType::HEATMAP_MAX_KEYPOINT,
                {quant(kQ8, std::move(dims)), tensor(kQ16, {2, 4}, 0.125f, 0), boolean(false)},
                {qout(kQ8, {2, 3}), std::move(locations)});
        };
        expectValid(heatmap({2, 4, 4, 3}, out(kQ16, {2, 3, 2}, 0.125f, 0)), FeatureLevel::kV1_2);
        expectInvalid(heatmap({2, 4, 5, 3}, out(kQ16, {2, 3, 2}, 0.125f, 0)),
                      "must be square and at least 2 x 2, got 4 x 5");
        expectInvalid(heatmap({2, 4, 4, 3}, out(kQ16, {2, 3, 2}, 0.25f, 0)),
                      "output 1 of type TENSOR_QUANT16_ASYMM must have scale 0.125");
    }
}

namespace {

/// A referenced subgraph computing out = MAXIMUM(a, b) on operands of type and shape `like`.
Subgraph maxGraph(const Operand& like) {
    Subgraph g;
    Operand in = like;
    in.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
    Operand o = like;
    o.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    g.operands = {in, in, o};
    g.inputIndexes = {0, 1};
    g.outputIndexes = {2};
    g.operations = {{OperationType::MAXIMUM, {0, 1}, {2}}};
    return g;
}

Operand operand(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f, int32_t zp = 0) {
    Operand op;
    op.type = type;
    op.dimensions = std::move(dims);
    op.scale = scale;
    op.zeroPoint = zp;
    return op;
}

/// out = IF(cond, then: MAXIMUM(a, b), else: MAXIMUM(a, b)) on quant8 [2] tensors.
Model ifModel() {
    ModelBuilder b;
    const Operand data = operand(kQ8, {2}, 0.5f, 1);
    uint32_t cond = b.addInput(kBool8, {1});
    uint32_t thenGraph = b.addSubgraph(maxGraph(data));
    uint32_t elseGraph = b.addSubgraph(maxGraph(data));
    uint32_t x = b.addInput(kQ8, {2}, 0.5f, 1);
    uint32_t y = b.addInput(kQ8, {0}, 0.5f, 1);
    uint32_t o = b.addOutput(kQ8, {2}, 0.5f, 1);
    b.addOperation(OperationType::IF, {cond, thenGraph, elseGraph, x, y}, {o});
    return b.build();
}

/// A WHILE loop over one float [1] value: condition LESS(x, x), body MAXIMUM(x, x).
Model whileModel() {
    const Operand data = operand(kF32, {1});
    Subgraph cond;
    Operand in = data;
    in.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
    Operand flag = operand(kBool8, {1});
    flag.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    cond.operands = {in, flag};
    cond.inputIndexes = {0};
    cond.outputIndexes = {1};
    cond.operations = {{OperationType::LESS, {0, 0}, {1}}};

    Subgraph body;
    Operand o = data;
    o.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    body.operands = {in, o};
    body.inputIndexes = {0};
    body.outputIndexes = {1};
    body.operations = {{OperationType::MAXIMUM, {0, 0}, {1}}};

    ModelBuilder b;
    uint32_t c = b.addSubgraph(cond);
    uint32_t bd = b.addSubgraph(body);
    uint32_t x = b.addInput(kF32, {1});
    uint32_t out = b.addOutput(kF32, {1});
    b.addOperation(OperationType::WHILE, {c, bd, x}, {out});
    return b.build();
}

}  // namespace

TEST_CASE("model_operations_control_flow") {
    SUBCASE("if") {
        expectValid(ifModel(), FeatureLevel::kV1_3);
        Model m = ifModel();
        m.main.operands[0].dimensions = {2};
        expectInvalid(m, "input 0 (condition) must be a TENSOR_BOOL8 of shape [1]");
        m = ifModel();
        m.main.operands[m.main.operations[0].inputs[4]].zeroPoint = 2;
        expectInvalid(m, "then subgraph input 1 and input 4 are incompatible");
        m = ifModel();
        m.referenced[1].operands[2].dimensions = {3};
        expectInvalid(m, "else subgraph output 0 and output 0 are incompatible");
        m = ifModel();
        m.main.operations[0].inputs.pop_back();
        expectInvalid(m, "the then subgraph has 2 inputs, so the operation needs 5 inputs, got 4");
        m = ifModel();
        m.main.operations[0].inputs[1] = m.main.operations[0].inputs[3];
        expectInvalid(m, "input 1 (then) must be a SUBGRAPH operand");
        m = ifModel();
        Operand extra = m.main.operands[m.main.operations[0].outputs[0]];
        m.main.operands.push_back(extra);
        const auto k = static_cast<uint32_t>(m.main.operands.size() - 1);
        m.main.operations[0].outputs.push_back(k);
        m.main.outputIndexes.push_back(k);
        expectInvalid(m, "the then subgraph has 1 outputs but the operation has 2");
    }
    SUBCASE("while") {
        expectValid(whileModel(), FeatureLevel::kV1_3);
        Model m = whileModel();
        m.referenced[0].operands[1].dimensions = {2};
        expectInvalid(m, "condition subgraph output must be a TENSOR_BOOL8 of shape [1]");
        m = whileModel();
        m.main.operands[m.main.operations[0].inputs[2]].type = kF16;
        expectInvalid(m, "condition subgraph input 0 and input 2 are incompatible");
        m = whileModel();
        m.main.operands[m.main.operations[0].outputs[0]].dimensions = {2};
        expectInvalid(m, "body subgraph output 0 and output 0 are incompatible");
        m = whileModel();
        // The loop-carried value changes shape between iterations.
        m.referenced[1].operands[1].dimensions = {1, 1};
        m.main.operands[m.main.operations[0].outputs[0]].dimensions = {};
        expectInvalid(m, "body subgraph input 0 and body subgraph output 0 are incompatible");
        m = whileModel();
        m.main.operations[0].inputs[0] = m.main.operations[0].inputs[2];
        expectInvalid(m, "input 0 (condition) must be a SUBGRAPH operand");
    }
}

TEST_CASE("model_operations_misc") {
    expectValid(single(OperationType::RANDOM_MULTINOMIAL,
                       {tensor(kF32, {1, 4}), i32(3), ints({1, 2})}, {out(kI32, {1, 3})}),
                FeatureLevel::kV1_2);
    expectInvalid(single(OperationType::RANDOM_MULTINOMIAL,
                         {tensor(kF32, {1, 4}), i32(3), ints({1, 2, 3})}, {out(kI32, {1, 3})}),
                  "(seeds) must have 2 elements");

    // A dense 2 x 2 matrix: traversal order [0, 1], no block map, both dimensions DENSE.
    const auto densify = [](uint32_t indexArrays, Out o) {
        std::vector<In> ins = {tensor(kF32, {4}), ints({0, 1}), omitted(kI32), ints({0, 0}),
                               ints({2, 2})};
        for (uint32_t i = 0; i < indexArrays; ++i) ins.push_back(omitted(kI32));
        return single(OperationType::DENSIFY, ins, {std::move(o)});
    };
    expectValid(densify(4, out(kF32, {2, 2})), FeatureLevel::kExperimental);
    expectInvalid(densify(2, out(kF32, {2, 2})), "needs 9 inputs, got 7");
    expectInvalid(densify(4, out(kF16, {2, 2})), "output 0 has type TENSOR_FLOAT16");

    // OEM operations are vendor-defined.
    expectValid(single(OperationType::OEM_OPERATION, {tensor(OperandType::TENSOR_OEM_BYTE, {3})},
                       {out(OperandType::TENSOR_OEM_BYTE, {3})}),
                FeatureLevel::kV1_0);
}

// Every CTS model is valid: run each operation of this file's families in every model through
// its validator directly, which checks the validators even where a general rule would stop the
// model earlier.
TEST_CASE("model_operations_part2_cts_accepted") {
    using T = OperationType;
    const std::set<OperationType> families = {T::EQUAL,
                                              T::NOT_EQUAL,
                                              T::GREATER,
                                              T::GREATER_EQUAL,
                                              T::LESS,
                                              T::LESS_EQUAL,
                                              T::LOGICAL_AND,
                                              T::LOGICAL_OR,
                                              T::LOGICAL_NOT,
                                              T::MAXIMUM,
                                              T::MINIMUM,
                                              T::POW,
                                              T::SELECT,
                                              T::SLICE,
                                              T::SPLIT,
                                              T::TILE,
                                              T::TOPK_V2,
                                              T::GATHER,
                                              T::ARGMAX,
                                              T::ARGMIN,
                                              T::EXPAND_DIMS,
                                              T::FILL,
                                              T::RANK,
                                              T::PACK,
                                              T::REVERSE,
                                              T::EMBEDDING_LOOKUP,
                                              T::HASHTABLE_LOOKUP,
                                              T::LSH_PROJECTION,
                                              T::LSTM,
                                              T::RNN,
                                              T::SVDF,
                                              T::BIDIRECTIONAL_SEQUENCE_LSTM,
                                              T::BIDIRECTIONAL_SEQUENCE_RNN,
                                              T::UNIDIRECTIONAL_SEQUENCE_LSTM,
                                              T::UNIDIRECTIONAL_SEQUENCE_RNN,
                                              T::QUANTIZED_LSTM,
                                              T::QUANTIZED_16BIT_LSTM,
                                              T::RANDOM_MULTINOMIAL,
                                              T::ROI_ALIGN,
                                              T::ROI_POOLING,
                                              T::AXIS_ALIGNED_BBOX_TRANSFORM,
                                              T::BOX_WITH_NMS_LIMIT,
                                              T::DETECTION_POSTPROCESSING,
                                              T::GENERATE_PROPOSALS,
                                              T::HEATMAP_MAX_KEYPOINT,
                                              T::DENSIFY,
                                              T::OEM_OPERATION,
                                              T::IF,
                                              T::WHILE};
    auto files = findJsonFiles({NNCOSIM_CTS_DIR});
    REQUIRE_MESSAGE(files.ok(), files.status().message);
    uint64_t checked = 0;
    for (const std::string& path : *files) {
        auto file = readCtsFile(path);
        REQUIRE_MESSAGE(file.ok(), file.status().message);
        for (const CtsTest& test : file->tests) {
            const Model& model = test.model;
            std::vector<const Subgraph*> graphs = {&model.main};
            for (const Subgraph& g : model.referenced) graphs.push_back(&g);
            for (const Subgraph* graph : graphs) {
                for (uint32_t i = 0; i < graph->operations.size(); ++i) {
                    if (families.count(graph->operations[i].type) == 0) continue;
                    OperationContext ctx(model, *graph, graph->operations[i], i);
                    const Status status = findOperationValidator(graph->operations[i].type)(ctx);
                    CHECK_MESSAGE(status.ok(), test.name, ": ", status.message);
                    ++checked;
                }
            }
        }
    }
    CHECK(checked > 3000);
}
