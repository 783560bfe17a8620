// DENSIFY (experimental): expands a sparse tensor in TFLite's sparsity format to a dense one.
//
// Inputs: the stored values, the traversal order (n dense dimensions, then k block dimensions),
// the block map (which dense dimension each block dimension subdivides), each traversed
// dimension's format (0 dense, 1 sparse CSR) and size, then per traversed dimension a pair of
// metadata tensors: for CSR dimensions the array segments (row pointers) and array indices.
// Positions not stored are filled with the zero point (quantized types) or zero. Elements are
// copied as raw bits, so every element type shares one implementation per element size.
#include <cstring>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kValues = 0;
constexpr uint32_t kTraversalOrder = 1;
constexpr uint32_t kBlockMap = 2;
constexpr uint32_t kDimFormat = 3;
constexpr uint32_t kDimensions = 4;
constexpr uint32_t kFirstMetadata = 5;
constexpr int32_t kSparseCsr = 1;

std::vector<int32_t> int32Vector(const ExecutionContext& ctx, uint32_t i) {
    if (ctx.isOmitted(i)) return {};
    const int32_t* data = ctx.inputData<int32_t>(i);
    return std::vector<int32_t>(data, data + ctx.inputCount(i));
}

struct Sparsity {
    std::vector<int32_t> traversalOrder, blockMap, format, dimensions;
    std::vector<int32_t> blockSize;                       // per block dimension
    std::vector<std::vector<int32_t>> segments, indices;  // per traversed CSR dimension
    std::vector<uint32_t> denseDims;
};

// Walks the traversal tree the way Android's populate() does, writing each stored value to its
// dense position; `position` is the current traversed index per level.
template <typename T>
class Expander {
  public:
    Expander(const ExecutionContext& ctx, const Sparsity& s, const T* values, size_t numValues,
             T* dense, size_t denseCount)
        : mCtx(ctx),
          mS(s),
          mValues(values),
          mNumValues(numValues),
          mDense(dense),
          mDenseCount(denseCount),
          mPosition(s.traversalOrder.size()) {}

    Status expand(size_t level, size_t previous) {
        if (level == mPosition.size()) return store(previous);
        if (mS.format[level] != kSparseCsr) {
            const int32_t size = mS.dimensions[level];
            for (int32_t i = 0; i < size; ++i) {
                mPosition[level] = i;
                NN_RETURN_IF_ERROR(expand(level + 1, previous * size + i));
            }
            return okStatus();
        }
        const std::vector<int32_t>& segments = mS.segments[level];
        const std::vector<int32_t>& indices = mS.indices[level];
        if (previous + 1 >= segments.size()) {
            return mCtx.fail("array segments of dimension ", level, " too short");
        }
        for (int32_t i = segments[previous]; i < segments[previous + 1]; ++i) {
            if (i < 0 || static_cast<size_t>(i) >= indices.size()) {
                return mCtx.fail("array segment ", i, " of dimension ", level, " out of range");
            }
            mPosition[level] = indices[i];
            NN_RETURN_IF_ERROR(expand(level + 1, i));
        }
        return okStatus();
    }

  private:
    Status store(size_t valueIndex) {
        const size_t rank = mS.denseDims.size();
        std::vector<int64_t> index(rank, 0);
        size_t level = 0;
        for (; level < rank; ++level) index[mS.traversalOrder[level]] = mPosition[level];
        for (; level < mPosition.size(); ++level) {
            const int32_t block = mS.traversalOrder[level] - static_cast<int32_t>(rank);
            const int32_t dim = mS.blockMap[block];
            index[dim] = index[dim] * mS.blockSize[block] + mPosition[level];
        }
        int64_t flat = 0;
        for (size_t d = 0; d < rank; ++d) {
            if (index[d] < 0 || index[d] >= mS.denseDims[d]) {
                return mCtx.fail("sparse index ", index[d], " out of range in dimension ", d);
            }
            flat = flat * mS.denseDims[d] + index[d];
        }
        if (valueIndex >= mNumValues || static_cast<size_t>(flat) >= mDenseCount) {
            return mCtx.fail("sparse value ", valueIndex, " out of range");
        }
        mDense[flat] = mValues[valueIndex];
        return okStatus();
    }

    const ExecutionContext& mCtx;
    const Sparsity& mS;
    const T* mValues;
    size_t mNumValues;
    T* mDense;
    size_t mDenseCount;
    std::vector<int32_t> mPosition;
};

// Element bits as an unsigned integer of the element's size; the fill value is the zero point
// for asymmetric quantized types and zero bits otherwise.
template <typename T>
Status densifyAs(ExecutionContext& ctx, const Sparsity& s) {
    T fill = 0;
    const OperandType type = ctx.inputType(kValues);
    if (type == OperandType::TENSOR_QUANT8_ASYMM ||
        type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
        type == OperandType::TENSOR_QUANT16_ASYMM) {
        fill = static_cast<T>(ctx.inputZeroPoint(kValues));
    }
    T* dense = ctx.outputData<T>(0);
    const size_t count = ctx.outputCount(0);
    std::fill_n(dense, count, fill);
    Expander<T> expander(ctx, s, ctx.inputData<T>(kValues), ctx.inputCount(kValues), dense, count);
    return expander.expand(0, 0);
}

}  // namespace

Status executeDensify(ExecutionContext& ctx) {
    Sparsity s;
    s.traversalOrder = int32Vector(ctx, kTraversalOrder);
    s.blockMap = int32Vector(ctx, kBlockMap);
    s.format = int32Vector(ctx, kDimFormat);
    s.dimensions = int32Vector(ctx, kDimensions);
    const size_t levels = s.traversalOrder.size();
    if (s.format.size() != levels || s.dimensions.size() != levels || s.blockMap.size() > levels) {
        return ctx.fail("traversal order, format and dimensions must have equal lengths");
    }
    const size_t rank = levels - s.blockMap.size();
    // Dense shape: traversed dense dimensions, each multiplied by its block dimensions' sizes.
    s.denseDims.assign(rank, 0);
    for (size_t level = 0; level < levels; ++level) {
        const int32_t order = s.traversalOrder[level];
        const int32_t size = s.dimensions[level];
        const bool isBlock = level >= rank;
        const int32_t block = order - static_cast<int32_t>(rank);
        if (size < 0 || order < 0 || (!isBlock && static_cast<size_t>(order) >= rank) ||
            (isBlock &&
             (block < 0 || static_cast<size_t>(block) >= s.blockMap.size() ||
              s.blockMap[block] < 0 || static_cast<size_t>(s.blockMap[block]) >= rank))) {
            return ctx.fail("invalid traversal order or block map at level ", level);
        }
        if (isBlock) {
            s.denseDims[s.blockMap[block]] *= size;
        } else {
            s.denseDims[order] = size;
        }
    }
    // Android sizes block b by the dimension at traversal position traversalOrder[rank + b].
    for (size_t b = 0; b < s.blockMap.size(); ++b) {
        const int32_t position = s.traversalOrder[rank + b];
        if (static_cast<size_t>(position) >= levels) return ctx.fail("invalid block ", b);
        s.blockSize.push_back(s.dimensions[position]);
    }
    s.segments.resize(levels);
    s.indices.resize(levels);
    for (size_t level = 0; level < levels; ++level) {
        if (s.format[level] != kSparseCsr) continue;
        const auto first = static_cast<uint32_t>(kFirstMetadata + 2 * level);
        if (first + 1 >= ctx.numInputs()) return ctx.fail("missing metadata of level ", level);
        s.segments[level] = int32Vector(ctx, first);
        s.indices[level] = int32Vector(ctx, first + 1);
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, s.denseDims));

    switch (ctx.inputType(kValues)) {
        case OperandType::TENSOR_BOOL8:
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
            return densifyAs<uint8_t>(ctx, s);
        case OperandType::TENSOR_FLOAT16:
        case OperandType::TENSOR_QUANT16_ASYMM:
        case OperandType::TENSOR_QUANT16_SYMM:
            return densifyAs<uint16_t>(ctx, s);
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_INT32:
            return densifyAs<uint32_t>(ctx, s);
        default:
            return ctx.fail("unsupported type ", nameOf(ctx.inputType(kValues)));
    }
}

}  // namespace nncosim::golden
