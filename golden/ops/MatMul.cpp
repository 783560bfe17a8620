// BATCH_MATMUL: a matrix product per batch of the two inputs' innermost two dimensions, either of
// them optionally transposed (adj_x, adj_y), through Eigen matrix products.
//
// Float16 is multiplied in float32 and rounded once. TENSOR_INT32 wraps on overflow. Quantized
// (TENSOR_QUANT8_ASYMM_SIGNED, the one quantized type Android accepts) accumulates the products of
// zero-point-centred values in int32 and requantizes them with the multiplier
// lhsScale * rhsScale / outputScale, as Android's reference does through TFLite's BatchMatMul; the
// result is bit-exact with it.
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

struct MatMulGeometry {
    size_t batches = 1;
    std::vector<bool> rhsBatchRepeats;  // per batch dimension: the RHS broadcasts along it
    std::vector<uint32_t> batchDims;
    uint32_t lhsRows = 0, lhsCols = 0, rhsRows = 0, rhsCols = 0;  // as stored
    uint32_t outRows = 0, outCols = 0, depth = 0;
    bool adjX = false, adjY = false;
};

/// Offset (in matrices) of the RHS matrix used by output batch b.
size_t rhsBatch(const MatMulGeometry& g, size_t b) {
    size_t offset = 0, stride = 1;
    for (size_t d = g.batchDims.size(); d-- > 0;) {
        const size_t index = b % g.batchDims[d];
        b /= g.batchDims[d];
        if (!g.rhsBatchRepeats[d]) {
            offset += index * stride;
            stride *= g.batchDims[d];
        }
    }
    return offset;
}

template <typename T>
using MatrixMap = Eigen::Map<const RowMajorMatrix<T>>;

/// For each batch b: store(b, op(loadLhs(lhs[b])) * op(loadRhs(rhs[b]))), the loads turning the
/// stored matrices into matrices of the accumulator type Acc.
template <typename Acc, typename In, typename LoadLhs, typename LoadRhs, typename Store>
void multiplyBatches(const MatMulGeometry& g, const In* lhs, const In* rhs, LoadLhs loadLhs,
                     LoadRhs loadRhs, Store store) {
    const size_t lhsSize = size_t{g.lhsRows} * g.lhsCols;
    const size_t rhsSize = size_t{g.rhsRows} * g.rhsCols;
    RowMajorMatrix<Acc> product(g.outRows, g.outCols);
    for (size_t b = 0; b < g.batches; ++b) {
        const RowMajorMatrix<Acc> a =
            loadLhs(MatrixMap<In>(lhs + b * lhsSize, g.lhsRows, g.lhsCols));
        const RowMajorMatrix<Acc> c =
            loadRhs(MatrixMap<In>(rhs + rhsBatch(g, b) * rhsSize, g.rhsRows, g.rhsCols));
        if (g.adjX && g.adjY) {
            product.noalias() = a.transpose() * c.transpose();
        } else if (g.adjX) {
            product.noalias() = a.transpose() * c;
        } else if (g.adjY) {
            product.noalias() = a * c.transpose();
        } else {
            product.noalias() = a * c;
        }
        store(b, product);
    }
}

/// A matrix of stored elements as matrix of Acc.
template <typename Acc>
auto castTo() {
    return [](const auto& m) { return m.template cast<Acc>().eval(); };
}

/// Output batch b of an output of element T, as a writable matrix map.
template <typename T>
Eigen::Map<RowMajorMatrix<T>> outputMatrix(const MatMulGeometry& g, T* data, size_t b) {
    return Eigen::Map<RowMajorMatrix<T>>(data + b * size_t{g.outRows} * g.outCols, g.outRows,
                                         g.outCols);
}

Result<MatMulGeometry> geometry(const ExecutionContext& ctx) {
    const std::vector<uint32_t>& lhs = ctx.inputShape(0);
    const std::vector<uint32_t>& rhs = ctx.inputShape(1);
    const size_t rank = lhs.size();
    if (rank != rhs.size() || rank < 2 || rank > 4) {
        return ctx.fail("inputs of shapes ", toString(lhs), " and ", toString(rhs),
                        " must have one rank in [2, 4]");
    }
    MatMulGeometry g;
    g.adjX = ctx.scalarOr<bool>(2, false);
    g.adjY = ctx.scalarOr<bool>(3, false);
    g.lhsRows = lhs[rank - 2];
    g.lhsCols = lhs[rank - 1];
    g.rhsRows = rhs[rank - 2];
    g.rhsCols = rhs[rank - 1];
    g.outRows = g.adjX ? g.lhsCols : g.lhsRows;
    g.depth = g.adjX ? g.lhsRows : g.lhsCols;
    g.outCols = g.adjY ? g.rhsRows : g.rhsCols;
    const uint32_t rhsDepth = g.adjY ? g.rhsCols : g.rhsRows;
    if (g.lhsRows == 0 || g.lhsCols == 0 || g.rhsRows == 0 || g.rhsCols == 0 ||
        g.depth != rhsDepth) {
        return ctx.fail("cannot multiply shapes ", toString(lhs), " and ", toString(rhs),
                        " (adj_x ", g.adjX, ", adj_y ", g.adjY, ")");
    }
    // The output takes the LHS batch dimensions; the RHS may broadcast a batch dimension of 1.
    for (size_t d = 0; d + 2 < rank; ++d) {
        if (rhs[d] != lhs[d] && rhs[d] != 1) {
            return ctx.fail("batch dimension ", d, " of ", toString(rhs), " does not match ",
                            toString(lhs));
        }
        g.batchDims.push_back(lhs[d]);
        g.rhsBatchRepeats.push_back(rhs[d] != lhs[d]);
        g.batches *= lhs[d];
    }
    return g;
}

}  // namespace

Status executeBatchMatmul(ExecutionContext& ctx) {
    auto geometryOrError = geometry(ctx);
    if (!geometryOrError) return geometryOrError.status();
    const MatMulGeometry& g = *geometryOrError;
    std::vector<uint32_t> outDims = g.batchDims;
    outDims.push_back(g.outRows);
    outDims.push_back(g.outCols);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(outDims)));

    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput lhs(ctx, 0), rhs(ctx, 1);
            FloatOutput out(ctx, 0);
            multiplyBatches<float>(g, lhs.data(), rhs.data(), castTo<float>(), castTo<float>(),
                                   [&](size_t b, const RowMajorMatrix<float>& product) {
                                       outputMatrix(g, out.data(), b) = product;
                                   });
            out.commit();
            return okStatus();
        }
        case OperandType::TENSOR_INT32: {
            int32_t* out = ctx.outputData<int32_t>(0);
            multiplyBatches<int32_t>(g, ctx.inputData<int32_t>(0), ctx.inputData<int32_t>(1),
                                     castTo<int32_t>(), castTo<int32_t>(),
                                     [&](size_t b, const RowMajorMatrix<int32_t>& product) {
                                         outputMatrix(g, out, b) = product;
                                     });
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: {
            // Android rounds the scale product to float before widening it.
            const float productScale = ctx.inputScale(0) * ctx.inputScale(1);
            const auto multiplier = fixedpoint::quantizeMultiplier(
                static_cast<double>(productScale) / ctx.outputScale(0));
            if (!multiplier) return ctx.fail("cannot quantize the output multiplier");
            const int32_t outZero = ctx.outputZeroPoint(0);
            // No fused activation: the int8 range.
            const fixedpoint::ActivationRange range{-128, 127};
            const auto centred = [](int32_t zeroPoint) {
                return [zeroPoint](const auto& m) {
                    return (m.template cast<int32_t>().array() - zeroPoint).matrix().eval();
                };
            };
            int8_t* out = ctx.outputData<int8_t>(0);
            multiplyBatches<int32_t>(g, ctx.inputData<int8_t>(0), ctx.inputData<int8_t>(1),
                                     centred(ctx.inputZeroPoint(0)), centred(ctx.inputZeroPoint(1)),
                                     [&](size_t b, const RowMajorMatrix<int32_t>& product) {
                                         outputMatrix(g, out, b) =
                                             product.unaryExpr([&](int32_t acc) {
                                                 return static_cast<int8_t>(fixedpoint::requantize(
                                                     acc, 0, *multiplier, outZero, range));
                                             });
                                     });
            return okStatus();
        }
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

}  // namespace nncosim::golden
