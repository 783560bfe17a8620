// Float functions and normalizations on the NPU's FUNC unit (e^x, ln x, sqrt x) and the float
// element-wise, pooling and depthwise descriptors: EXP, LOG, SQRT, RSQRT, LOGISTIC, TANH, ELU,
// SOFTMAX, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION of float32 and float16 tensors;
// quantized SOFTMAX and L2_NORMALIZATION on NORM descriptors (the axis moved innermost, a row per
// vector), bit-exact with the golden's integer definitions.
//
// A normalization works on its tensor as [outer, axis, inner] with the axis moved outermost,
// [axis, P] with P = outer * inner (one element-map copy, none when outer is 1), so that a
// per-vector value (maximum, sum) is a row of P elements: a MAXPOOL or a DWCONV of ones over
// the axis makes it, and an element-wise descriptor broadcasts it back along the axis at full
// rows. Each step is the golden's, in its order; only the sums add in another order, and e^x
// and ln x are within 0.53 ULP instead of the host library's rounding, all inside NNAPI's
// float tolerance (the golden computes float16 in float32; the NPU rounds each step to binary16,
// inside the relaxed tolerance).
#include <Eigen/Core>

#include "driver/compiler/Lowering.h"

namespace nncosim::driver {
namespace {

bool isFloatTensor(OperandType t) {
    return floatFormat(t).has_value();
}

// A FLOAT32 or FLOAT16 scalar constant.
std::optional<float> floatScalar(const Constants& c, uint32_t index) {
    const Operand& o = c.operand(index);
    if (o.type == OperandType::FLOAT32) return c.scalar<float>(index);
    const uint8_t* p = c.data(index);
    if (o.type != OperandType::FLOAT16 || !p || o.location.length < 2) return std::nullopt;
    return floatValues(OperandType::TENSOR_FLOAT16, p, 1)[0];
}

// The bits of `value` as an element of `format`.
uint32_t floatBits(npu::Format format, float value) {
    if (format == npu::Format::FP16) return Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
    return Eigen::numext::bit_cast<uint32_t>(value);
}

// ---------------------------------------------------------------------------------------------
// EXP, LOG, SQRT, RSQRT, LOGISTIC, TANH, ELU: FUNC passes and element-wise steps with constants
// over the flat tensor, each the golden's step in its order (LOGISTIC 1 / (1 + e^-x); TANH as
// 2 / (1 + e^-2x) - 1, within the tolerance of the golden's tanh; ELU max(0, x) +
// min(0, alpha (e^x - 1))).

Status functionSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if (!isFloatTensor(in.type) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only float32 and float16 tensors of one type");
    if (op.type == OperationType::ELU && !floatScalar(c, op.inputs[1]))
        return unsupported(op, "alpha must be a constant");
    return okStatus();
}

Result<std::vector<uint32_t>> sameShape(const Lowering& lw, const Operation& op) {
    return lw.dims(op.inputs[0]);
}

// ELU's e^x - 1 term.
std::vector<uint64_t> functionScratch(const Lowering& lw, const Operation& op) {
    if (op.type != OperationType::ELU) return {};
    return {byteSize(lw.operand(op.inputs[0]).type, lw.dims(op.inputs[0]))};
}

npu::Descriptor functionDescriptor(npu::Function f, const npu::OutputStage& stage) {
    npu::Descriptor d = floatDescriptor(npu::Opcode::FUNC, stage);
    d.floatFn = static_cast<uint32_t>(f);
    return d;
}

// `d` over `count` contiguous elements at `src` (and `b`, when given) into `dst`.
Status streamFlat(Lowering& lw, const Operation& op, const npu::Descriptor& d, uint32_t src,
                  std::optional<uint32_t> b, uint32_t dst, uint32_t count) {
    npu::ChainBuilder chain;
    std::optional<npu::StridedTensor> bTensor;
    if (b) bTensor = npu::StridedTensor{*b, {0, 0, 0, 1}};
    const Status st =
        chain.stream(d, {src, {0, 0, 0, 1}}, bTensor, {dst, {0, 0, 0, 1}}, {1, 1, 1, count});
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

// Steps over a flat tensor of `count` elements of `format`, each after the previous one.
class FlatSteps {
  public:
    FlatSteps(Lowering& lw, const Operation& op, npu::Format format, uint32_t count)
        : mLw(lw), mOp(op), mFormat(format), mCount(count) {}

    npu::OutputStage unclamped() const { return unclampedFloatStage(mFormat); }

    Status function(npu::Function f, uint32_t src, uint32_t dst) {
        return streamFlat(mLw, mOp, functionDescriptor(f, unclamped()), src, std::nullopt, dst,
                          mCount);
    }

    // dst = src op value, clamped to `stage`.
    Status constant(npu::Opcode opcode, uint32_t src, uint32_t dst, float value,
                    std::optional<npu::OutputStage> stage = std::nullopt) {
        return streamWithConstant(mLw, mOp, floatDescriptor(opcode, stage.value_or(unclamped())),
                                  src, dst, mCount, floatBits(mFormat, value));
    }

    // dst = value / src (a constant tensor of `value`s divided on the DIVIDE).
    Status divideInto(float value, uint32_t src, uint32_t dst) {
        const uint32_t bits = floatBits(mFormat, value),
                       size = npu::formatBytes(static_cast<uint32_t>(mFormat));
        std::vector<uint8_t> values(size_t{mCount} * size);
        for (size_t i = 0; i < values.size(); i += size) std::memcpy(&values[i], &bits, size);
        npu::Descriptor divide = floatDescriptor(npu::Opcode::MUL, unclamped());
        divide.divide = true;
        return streamFlat(mLw, mOp, divide, mLw.addConstant(values.data(), values.size()), src, dst,
                          mCount);
    }

    Status add(uint32_t a, uint32_t b, uint32_t dst) {
        return streamFlat(mLw, mOp, floatDescriptor(npu::Opcode::ADD, unclamped()), a, b, dst,
                          mCount);
    }

  private:
    Lowering& mLw;
    const Operation& mOp;
    npu::Format mFormat;
    uint32_t mCount;
};

Status lowerFunction(Lowering& lw, const Operation& op) {
    const auto format = *floatFormat(lw.operand(op.inputs[0]).type);
    const auto count = static_cast<uint32_t>(elementCount(lw.dims(op.inputs[0])));
    if (count == 0) return okStatus();
    const uint32_t in = lw.address(op.inputs[0]), out = lw.address(op.outputs[0]);
    FlatSteps steps(lw, op, format, count);
    switch (op.type) {
        case OperationType::EXP:
            return steps.function(npu::Function::EXP, in, out);
        case OperationType::LOG:
            return steps.function(npu::Function::LOG, in, out);
        case OperationType::SQRT:
            return steps.function(npu::Function::SQRT, in, out);
        case OperationType::RSQRT:
            NN_RETURN_IF_ERROR(steps.function(npu::Function::SQRT, in, out));
            return steps.divideInto(1.0f, out, out);
        case OperationType::LOGISTIC:
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::MUL, in, out, -1.0f));
            NN_RETURN_IF_ERROR(steps.function(npu::Function::EXP, out, out));
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::ADD, out, out, 1.0f));
            return steps.divideInto(1.0f, out, out);
        case OperationType::TANH:
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::MUL, in, out, -2.0f));
            NN_RETURN_IF_ERROR(steps.function(npu::Function::EXP, out, out));
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::ADD, out, out, 1.0f));
            NN_RETURN_IF_ERROR(steps.divideInto(2.0f, out, out));
            return steps.constant(npu::Opcode::ADD, out, out, -1.0f);
        default: {  // ELU
            const float alpha = *floatScalar(lw.constants(), op.inputs[1]);
            const uint32_t term = lw.scratch().at(0);
            npu::OutputStage atMostZero = steps.unclamped(), atLeastZero = steps.unclamped();
            atMostZero.fpMax = 0;  // +0
            atLeastZero.fpMin = 0;
            NN_RETURN_IF_ERROR(steps.function(npu::Function::EXP, in, term));
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::ADD, term, term, -1.0f));
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::MUL, term, term, alpha, atMostZero));
            // max(0, x) as x + (-0) clamped below at +0.
            NN_RETURN_IF_ERROR(steps.constant(npu::Opcode::ADD, in, out, -0.0f, atLeastZero));
            return steps.add(out, term, out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SOFTMAX, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION along an axis.

// The axis input of each normalization (optional; -1, the last, by default).
uint32_t axisInput(OperationType t) {
    switch (t) {
        case OperationType::SOFTMAX:
            return 2;
        case OperationType::L2_NORMALIZATION:
            return 1;
        default:
            return 5;  // LOCAL_RESPONSE_NORMALIZATION
    }
}

std::optional<uint32_t> axisOf(const Constants& c, const Operation& op, size_t rank) {
    int32_t axis = -1;
    const uint32_t k = axisInput(op.type);
    if (op.inputs.size() > k) {
        auto value = c.scalar<int32_t>(op.inputs[k]);
        if (!value) return std::nullopt;
        axis = *value;
    }
    const auto r = static_cast<int32_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return static_cast<uint32_t>(axis < 0 ? axis + r : axis);
}

// The axis as a window of the pooling and depthwise descriptors: h x w with both at most 255.
std::optional<std::pair<uint32_t, uint32_t>> axisWindow(uint32_t extent) {
    for (uint32_t h = std::min(extent, kMaxByteField); h >= 1; --h)
        if (extent % h == 0 && extent / h <= kMaxByteField) return std::pair{h, extent / h};
    return std::nullopt;
}

// Rows of P elements broadcast by the element-wise unit must fit half a scratchpad buffer.
constexpr uint32_t kMaxRowBytes = npu::kSpadWords / 2 * npu::kDramBusBytes;

// The softmax table of NORM: entry d is the golden's Q0.31 exponential of the difference -d
// (0 below diffMin, which then neither counts in the sum nor raises the output above its
// minimum, as in the golden).
std::optional<std::vector<uint8_t>> softmaxTable(float beta, float inputScale) {
    const auto params = fixedpoint::computeSoftmaxParams(beta, inputScale);
    if (!params) return std::nullopt;
    using ScaledDiff =
        fixedpoint::FixedPoint<int32_t, fixedpoint::SoftmaxParams::kScaledDiffIntegerBits>;
    std::vector<uint8_t> table(256 * 4);
    for (int32_t d = 0; d < 256; ++d) {
        int32_t e = 0;
        if (-d >= params->diffMin)
            e = fixedpoint::expOnNegativeValues(
                    ScaledDiff::fromRaw(fixedpoint::multiplyByQuantizedMultiplierGreaterThanOne(
                        -d, params->input.multiplier, params->input.shift)))
                    .raw();
        std::memcpy(&table[4 * d], &e, 4);
    }
    return table;
}

// A NORM softmax row's output shift fits the descriptor up to this many elements (docs/npu.md).
constexpr uint32_t kMaxSoftmaxRow = 511;

Status quantNormalizationSupported(const Constants& c, const Operation& op, uint32_t axis) {
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& out = c.operand(op.outputs[0]);
    if (op.type == OperationType::LOCAL_RESPONSE_NORMALIZATION)
        return unsupported(op, "float tensors only");
    if (op.type == OperationType::SOFTMAX) {
        if (out.scale != 1.0f / 256 || out.zeroPoint != (isSigned(in.type) ? -128 : 0))
            return unsupported(op, "output scale 1/256 and NNAPI's zero point");
        auto beta = floatScalar(c, op.inputs[1]);
        if (!beta || !(*beta > 0) || !softmaxTable(*beta, in.scale)) return unsupported(op, "beta");
        if (in.dimensions[axis] > kMaxSoftmaxRow)
            return unsupported(op, "more than 511 elements along the axis");
    }
    if (in.dimensions[axis] > kMaxCount) return unsupported(op, "axis beyond 16 bits");
    return okStatus();
}

Status normalizationSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if ((!isQuant8(in.type) && !isFloatTensor(in.type)) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors of one type");
    const size_t rank = in.dimensions.size();
    if (rank == 0 || rank > 4) return unsupported(op, "rank 1 to 4");
    for (uint32_t k = 1; k < op.inputs.size(); ++k)
        if (!c.isConstant(op.inputs[k])) return unsupported(op, "parameters must be constants");
    auto axis = axisOf(c, op, rank);
    if (!axis) return unsupported(op, "axis");
    if (isQuant8(in.type)) return quantNormalizationSupported(c, op, *axis);
    if (op.type == OperationType::SOFTMAX) {
        auto beta = floatScalar(c, op.inputs[1]);
        if (!beta || !(*beta > 0)) return unsupported(op, "beta");
    }
    if (op.type == OperationType::LOCAL_RESPONSE_NORMALIZATION) {
        auto radius = c.scalar<int32_t>(op.inputs[1]);
        if (!radius || *radius < 0 || 2 * *radius + 1 > static_cast<int32_t>(kMaxByteField))
            return unsupported(op, "radius");
        for (uint32_t k = 2; k <= 4; ++k)
            if (!floatScalar(c, op.inputs[k])) return unsupported(op, "bias, alpha, beta");
    }
    if (elementCount(in.dimensions) == 0) return okStatus();  // checked when the shape is known
    const AxisSizes s = axisSizes(in.dimensions, *axis);
    const uint64_t rowBytes = uint64_t{s.outer} * s.inner * elementSize(in.type);
    if (rowBytes > kMaxRowBytes) return unsupported(op, "rows beyond half a scratchpad buffer");
    auto window = axisWindow(static_cast<uint32_t>(s.axis));
    if (!window) return unsupported(op, "the axis is no product of two windows of at most 255");
    if (npu::depthwiseWeightStreamBytes(static_cast<uint32_t>(s.outer * s.inner), window->first,
                                        window->second, false, true) > kMaxSumStreamBytes)
        return unsupported(op, "the sum's weight stream would exceed 4 MiB");
    return okStatus();
}

// The tensor as [axis, P]; buffers of the whole tensor and of one row.
struct AxisPlan {
    uint32_t axis = 1, rows = 1, p = 1, size = 4;  // rows: outer, p: outer * inner
    uint32_t windowH = 1, windowW = 1;
    npu::Format format = npu::Format::FP32;
    uint32_t in = 0, out = 0;      // the operands
    uint32_t moved = 0, work = 0;  // [axis, P] scratch (moved: the input, then the result)
    uint32_t row = 0, work2 = 0;   // a row of P; LRN's second [axis, P] buffer
    bool transposed = false;
};

std::vector<uint64_t> normalizationScratch(const Lowering& lw, const Operation& op) {
    const uint64_t bytes = byteSize(lw.operand(op.inputs[0]).type, lw.dims(op.inputs[0]));
    const AxisSizes s =
        axisSizes(lw.dims(op.inputs[0]), *axisOf(lw.constants(), op, lw.dims(op.inputs[0]).size()));
    return {bytes, bytes, uint64_t{s.outer} * s.inner * elementSize(lw.operand(op.inputs[0]).type),
            bytes};
}

class AxisLowering {
  public:
    AxisLowering(Lowering& lw, const Operation& op, AxisPlan plan)
        : mLw(lw),
          mOp(op),
          mPlan(plan),
          mStage(unclampedFloatStage(plan.format)),
          mWhole(lw, op, plan.format, plan.axis * plan.p) {}

    const AxisPlan& plan() const { return mPlan; }

    // The input as [axis, P] (a copy when the axis is not outermost already); the innermost
    // dimension of a copy counts bytes.
    Status moveIn() {
        if (!mPlan.transposed) return okStatus();
        const int64_t z = mPlan.size, inner = mPlan.p / mPlan.rows;
        MoveEmitter move(mLw, mPlan.size, 0);
        return move.block(mPlan.in, mPlan.moved,
                          {{mPlan.axis, inner * z, mPlan.p * z},
                           {mPlan.rows, mPlan.axis * inner * z, inner * z},
                           {static_cast<uint32_t>(inner * z), 1, 1}},
                          false);
    }

    // The [axis, P] result at `src` into the output.
    Status moveOut(uint32_t src) {
        if (!mPlan.transposed) return okStatus();
        const int64_t z = mPlan.size, inner = mPlan.p / mPlan.rows;
        MoveEmitter move(mLw, mPlan.size, 0);
        return move.block(src, mPlan.out,
                          {{mPlan.rows, inner * z, mPlan.axis * inner * z},
                           {mPlan.axis, mPlan.p * z, inner * z},
                           {static_cast<uint32_t>(inner * z), 1, 1}},
                          false);
    }

    // The input as [axis, P], and where the [axis, P] result goes (the input's copy, which is
    // read for the last time by the step that writes it, or the output itself).
    uint32_t input() const { return mPlan.transposed ? mPlan.moved : mPlan.in; }
    uint32_t result() const { return mPlan.transposed ? mPlan.moved : mPlan.out; }

    // dst = d(a, b) over [axis, P]; `bRow`: b is a row of P broadcast along the axis.
    Status elementwise(const npu::Descriptor& d, uint32_t a, std::optional<uint32_t> b, bool bRow,
                       uint32_t dst) {
        const uint32_t n = mPlan.axis, p = mPlan.p;
        const std::array<uint32_t, 4> dense{n * p, n * p, p, 1}, row{0, 0, 0, 1};
        std::optional<npu::StridedTensor> bTensor;
        if (b) bTensor = npu::StridedTensor{*b, bRow ? row : dense};
        npu::ChainBuilder chain;
        const Status st = chain.stream(d, {a, dense}, bTensor, {dst, dense}, {1, 1, n, p});
        if (!st.ok()) return mLw.fail(mOp, st.message);
        mLw.emitChain(chain);
        return okStatus();
    }

    // The steps over the whole [axis, P] tensor that need no broadcast.
    FlatSteps& whole() { return mWhole; }

    Status binary(npu::Opcode opcode, uint32_t a, uint32_t b, bool bRow, uint32_t dst,
                  bool negateB = false, bool divide = false) {
        npu::Descriptor d = floatDescriptor(opcode, mStage, negateB);
        d.divide = divide;
        return elementwise(d, a, b, bRow, dst);
    }

    // `d` (a FUNC) over the row, in place.
    Status rowFunction(const npu::Descriptor& d) {
        return streamFlat(mLw, mOp, d, mPlan.row, std::nullopt, mPlan.row, mPlan.p);
    }

    // The row of maxima over the axis: a MAXPOOL window of the whole axis.
    Status maxOverAxis(uint32_t src, uint32_t dst) {
        return poolOverAxis(npu::Pooling::MAX, src, dst);
    }

    // The row of sums over the axis: the AVGPOOL of the whole axis times its length (a DWCONV of
    // ones would stream a block of weights per element of the axis, 1 kB each in binary32).
    Status sumOverAxis(uint32_t src, uint32_t dst) {
        NN_RETURN_IF_ERROR(poolOverAxis(npu::Pooling::AVERAGE, src, dst));
        return FlatSteps(mLw, mOp, mPlan.format, mPlan.p)
            .constant(npu::Opcode::MUL, dst, dst, static_cast<float>(mPlan.axis));
    }

    // Sums over a window of 2r + 1 along the axis, padded by r (LRN): a DWCONV of ones.
    Status windowSums(uint32_t src, uint32_t dst, uint32_t radius) {
        const npu::ConvGeometry g{2 * radius + 1, 1, 1, 1, 1, 1, radius, 0};
        npu::DeviceTensor in = image(src, mPlan.axis, 1), out = in;
        out.addr = dst;
        const std::vector<float> ones(size_t{g.kernelH} * mPlan.p, 1.0f), zeros(mPlan.p, 0.0f);
        const auto stream = npu::packFloatDepthwiseWeights(ones.data(), zeros.data(), mPlan.p,
                                                           g.kernelH, g.kernelW, false);
        npu::ChainBuilder chain;
        const Status st = chain.depthwise(in, out, mLw.addConstant(stream.data(), stream.size()),
                                          false, 0, g, mStage, false);
        if (!st.ok()) return mLw.fail(mOp, st.message);
        mLw.emitChain(chain);
        return okStatus();
    }

  private:
    Status poolOverAxis(npu::Pooling kind, uint32_t src, uint32_t dst) {
        const npu::ConvGeometry g{mPlan.windowH, mPlan.windowW, 1, 1, 1, 1, 0, 0};
        npu::ChainBuilder chain;
        const Status st =
            chain.pool(kind, image(src, mPlan.windowH, mPlan.windowW), image(dst, 1, 1), g, mStage);
        if (!st.ok()) return mLw.fail(mOp, st.message);
        mLw.emitChain(chain);
        return okStatus();
    }

    npu::DeviceTensor image(uint32_t addr, uint32_t h, uint32_t w) const {
        npu::DeviceTensor t;
        t.addr = addr;
        t.h = h, t.w = w, t.c = mPlan.p * mPlan.size;
        return t;
    }

    Lowering& mLw;
    const Operation& mOp;
    AxisPlan mPlan;
    npu::OutputStage mStage;
    FlatSteps mWhole;
};

Result<AxisPlan> planOf(Lowering& lw, const Operation& op) {
    const auto& dims = lw.dims(op.inputs[0]);
    auto axis = axisOf(lw.constants(), op, dims.size());
    if (!axis) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    const AxisSizes s = axisSizes(dims, *axis);
    AxisPlan plan;
    plan.format = *floatFormat(lw.operand(op.inputs[0]).type);
    plan.size = npu::formatBytes(static_cast<uint32_t>(plan.format));
    plan.axis = static_cast<uint32_t>(s.axis);
    plan.rows = static_cast<uint32_t>(s.outer);
    plan.p = static_cast<uint32_t>(s.outer * s.inner);
    auto window = axisWindow(plan.axis);
    if (!window) return fail(ErrorStatus::GENERAL_FAILURE, "the axis is no product of two windows");
    plan.windowH = window->first, plan.windowW = window->second;
    plan.in = lw.address(op.inputs[0]);
    plan.out = lw.address(op.outputs[0]);
    const auto& scratch = lw.scratch();
    plan.moved = scratch.at(0), plan.work = scratch.at(1), plan.row = scratch.at(2);
    plan.work2 = scratch.at(3);
    plan.transposed = s.outer > 1;
    return plan;
}

// exp((x - max) * beta) / sum, as the golden's softmaxFloat.
Status lowerSoftmax(AxisLowering& a, float beta) {
    const AxisPlan& p = a.plan();
    const uint32_t x = a.input(), e = p.work;
    NN_RETURN_IF_ERROR(a.maxOverAxis(x, p.row));
    NN_RETURN_IF_ERROR(a.binary(npu::Opcode::ADD, x, p.row, true, e, true));
    if (beta != 1.0f) NN_RETURN_IF_ERROR(a.whole().constant(npu::Opcode::MUL, e, e, beta));
    NN_RETURN_IF_ERROR(a.whole().function(npu::Function::EXP, e, e));
    NN_RETURN_IF_ERROR(a.sumOverAxis(e, p.row));
    return a.binary(npu::Opcode::MUL, e, p.row, true, a.result(), false, true);
}

// x / max(sqrt(sum of squares), 1e-6), as the golden's.
Status lowerL2Normalization(AxisLowering& a) {
    constexpr float kEpsilon = 1e-6f;
    const AxisPlan& p = a.plan();
    const uint32_t x = a.input(), squares = p.work;
    NN_RETURN_IF_ERROR(a.binary(npu::Opcode::MUL, x, x, false, squares));
    NN_RETURN_IF_ERROR(a.sumOverAxis(squares, p.row));
    npu::OutputStage atLeastEpsilon = unclampedFloatStage(p.format);
    const uint32_t epsilon = floatBits(npu::Format::FP32, kEpsilon);  // the clamp is binary32
    atLeastEpsilon.fpMin = epsilon;
    NN_RETURN_IF_ERROR(a.rowFunction(functionDescriptor(npu::Function::SQRT, atLeastEpsilon)));
    return a.binary(npu::Opcode::MUL, x, p.row, true, a.result(), false, true);
}

// x * (bias + alpha * windowed sum of squares)^-beta, the power as e^(-beta ln v).
Status lowerLocalResponseNormalization(AxisLowering& a, uint32_t radius, float bias, float alpha,
                                       float beta) {
    const AxisPlan& p = a.plan();
    const uint32_t x = a.input(), squares = p.work, v = p.work2;
    NN_RETURN_IF_ERROR(a.binary(npu::Opcode::MUL, x, x, false, squares));
    NN_RETURN_IF_ERROR(a.windowSums(squares, v, radius));
    NN_RETURN_IF_ERROR(a.whole().constant(npu::Opcode::MUL, v, v, alpha));
    NN_RETURN_IF_ERROR(a.whole().constant(npu::Opcode::ADD, v, v, bias));
    NN_RETURN_IF_ERROR(a.whole().function(npu::Function::LOG, v, v));
    NN_RETURN_IF_ERROR(a.whole().constant(npu::Opcode::MUL, v, v, -beta));
    NN_RETURN_IF_ERROR(a.whole().function(npu::Function::EXP, v, v));
    return a.binary(npu::Opcode::MUL, x, v, false, a.result());
}

// Quantized: rows of the axis (moved innermost when it is not), NORM descriptors over as many
// rows as a scratchpad buffer holds.
Status lowerQuantNormalization(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    const auto& dims = lw.dims(op.inputs[0]);
    const uint32_t axis = *axisOf(lw.constants(), op, dims.size());
    const AxisSizes s = axisSizes(dims, axis);
    const auto k = static_cast<uint32_t>(s.axis), inner = static_cast<uint32_t>(s.inner);
    const auto rows = static_cast<uint32_t>(s.outer * s.inner);
    const bool moved = inner > 1;
    const uint32_t src = moved ? lw.scratch().at(0) : lw.address(op.inputs[0]);
    const uint32_t dst = moved ? lw.scratch().at(1) : lw.address(op.outputs[0]);
    const int64_t plane = int64_t{k} * inner;
    if (moved) {  // [outer, k, inner] -> [outer, inner, k]
        MoveEmitter move(lw, 1, 0);
        NN_RETURN_IF_ERROR(move.block(
            lw.address(op.inputs[0]), src,
            {{static_cast<uint32_t>(s.outer), plane, plane}, {inner, 1, k}, {k, inner, 1}}, false));
    }
    npu::Descriptor d;
    d.opcode = npu::Opcode::NORM;
    d.aSigned = d.outSigned = isSigned(in.type);
    d.actMin = typeMin(in.type), d.actMax = typeMax(in.type);
    if (op.type == OperationType::SOFTMAX) {
        const auto table = softmaxTable(*floatScalar(lw.constants(), op.inputs[1]), in.scale);
        if (!table) return lw.fail(op, "beta");
        d.wAddr = lw.addConstant(table->data(), table->size());
        d.outZeroPoint = isSigned(in.type) ? -128 : 0;
    } else {
        // The golden's two forms: TFLite's int8 kernel along the last axis folds the output
        // scale 2^7 into the shift; otherwise the difference is scaled by 128 first.
        d.normL2 = true;
        d.aZeroPoint = in.zeroPoint;
        const bool lastAxisInt8 = isSigned(in.type) && axis + 1 == dims.size();
        d.leftShift = lastAxisInt8 ? 0 : 7;
        d.outShift = lastAxisInt8 ? 7 : 0;
        d.outZeroPoint = isSigned(in.type) ? 0 : 128;
    }
    const uint32_t perRow = ceilDiv(k, npu::kDramBusBytes);
    const uint32_t chunk = std::min(kMaxCount, npu::kSpadWords / perRow);
    for (uint32_t r = 0; r < rows; r += chunk) {
        const uint32_t n = std::min(chunk, rows - r);
        npu::Descriptor t = d;
        t.a = {src + r * k, k, n, k, 1, 1, 0, 0};
        t.out = {dst + r * k, k, n, k, 1, 1, 0, 0};
        lw.emit(t);
    }
    if (!moved) return okStatus();
    MoveEmitter back(lw, 1, 0);
    return back.block(
        dst, lw.address(op.outputs[0]),
        {{static_cast<uint32_t>(s.outer), plane, plane}, {k, 1, inner}, {inner, k, 1}}, false);
}

Status lowerNormalization(Lowering& lw, const Operation& op) {
    if (elementCount(lw.dims(op.inputs[0])) == 0) return okStatus();
    if (isQuant8(lw.operand(op.inputs[0]).type)) return lowerQuantNormalization(lw, op);
    auto plan = planOf(lw, op);
    NN_RETURN_IF_ERROR(plan.status());
    AxisLowering a(lw, op, *plan);
    NN_RETURN_IF_ERROR(a.moveIn());
    const Constants& c = lw.constants();
    switch (op.type) {
        case OperationType::SOFTMAX:
            NN_RETURN_IF_ERROR(lowerSoftmax(a, *floatScalar(c, op.inputs[1])));
            break;
        case OperationType::L2_NORMALIZATION:
            NN_RETURN_IF_ERROR(lowerL2Normalization(a));
            break;
        default:
            NN_RETURN_IF_ERROR(lowerLocalResponseNormalization(
                a, static_cast<uint32_t>(*c.scalar<int32_t>(op.inputs[1])),
                *floatScalar(c, op.inputs[2]), *floatScalar(c, op.inputs[3]),
                *floatScalar(c, op.inputs[4])));
    }
    return a.moveOut(a.result());
}

}  // namespace

extern const NpuOperation kFloatFunctionOperation{
    functionSupported, sameShape, lowerFunction, functionScratch, {}, false, nullptr, true};
extern const NpuOperation kNormalizationOperation{normalizationSupported,
                                                  sameShape,
                                                  lowerNormalization,
                                                  normalizationScratch,
                                                  {},
                                                  false,
                                                  nullptr,
                                                  true};

}  // namespace nncosim::driver
