#include "model/operations/ElementMap.h"

#include <algorithm>
#include <cmath>

#include "model/Model.h"
#include "model/operations/ResizeSampling.h"
#include "model/operations/Window.h"

namespace nncosim {

AxisOffsets stridedAxis(uint32_t count, int64_t stride, int64_t start) {
    AxisOffsets offsets(count);
    for (uint32_t i = 0; i < count; ++i) offsets[i] = start + stride * i;
    return offsets;
}

std::vector<int64_t> rowMajorStrides(const std::vector<uint32_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
}

AxisSizes axisSizes(const std::vector<uint32_t>& dims, uint32_t axis) {
    AxisSizes s;
    for (uint32_t d = 0; d < dims.size(); ++d) {
        if (d < axis) s.outer *= dims[d];
        if (d > axis) s.inner *= dims[d];
    }
    s.axis = dims[axis];
    return s;
}

namespace {

// MIRROR_PAD's modes.
constexpr int32_t kMirrorReflect = 0;
constexpr int32_t kMirrorSymmetric = 1;

template <typename... Parts>
Status bad(const Parts&... parts) {
    return fail(ErrorStatus::GENERAL_FAILURE, parts...);
}

/// Reads the operation's inputs for one map, failing on the first unknown value.
class Reader {
  public:
    explicit Reader(const ElementMapInputs& in) : mIn(in) {}
    std::vector<uint32_t> shape(uint32_t i) const { return mIn.shape(i); }
    bool omitted(uint32_t i) const { return mIn.omitted && mIn.omitted(i); }
    uint32_t outputs() const { return mIn.outputs; }

    /// The values of input i, which must number `count` (any count when nullopt).
    Result<std::vector<int32_t>> ints(uint32_t i, const char* what,
                                      std::optional<size_t> count = std::nullopt) const {
        auto v = mIn.ints(i);
        if (!v) return bad(what, " is not known");
        if (count && v->size() != *count)
            return bad(what, " must hold ", *count, " values, got ", v->size());
        return std::move(*v);
    }
    Result<int32_t> scalar(uint32_t i, const char* what) const {
        auto v = ints(i, what, 1);
        if (!v) return v.status();
        return (*v)[0];
    }
    /// An optional BOOL input: false when omitted.
    Result<bool> flag(uint32_t i, const char* what) const {
        if (omitted(i)) return false;
        auto v = scalar(i, what);
        if (!v) return v.status();
        return *v != 0;
    }
    /// An optional tensor of values: empty when omitted.
    Result<std::vector<int32_t>> optionalInts(uint32_t i, const char* what) const {
        if (omitted(i)) return std::vector<int32_t>{};
        return ints(i, what);
    }
    Result<uint32_t> bits(uint32_t i, const char* what) const {
        auto v = mIn.bits ? mIn.bits(i) : std::nullopt;
        if (!v) return bad(what, " is not known");
        return *v;
    }
    OperandType type(uint32_t i) const { return mIn.type(i); }

  private:
    const ElementMapInputs& mIn;
};

/// A single copy from input 0 into output 0.
ElementMap single(std::vector<uint32_t> shape, std::vector<AxisOffsets> axes) {
    ElementMap map;
    map.shapes.push_back(std::move(shape));
    map.copies.push_back({0, 0, 0, std::move(axes)});
    return map;
}

std::optional<uint32_t> resolveAxis(int32_t axis, size_t rank) {
    const auto r = static_cast<int32_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return static_cast<uint32_t>(axis < 0 ? axis + r : axis);
}

/// The axes reading the box begin[d] + steps[d] * i (0 <= i < sizes[d]) of a row-major tensor of
/// dimensions `dims`; steps may be negative.
std::vector<AxisOffsets> boxAxes(const std::vector<uint32_t>& dims,
                                 const std::vector<int64_t>& begin,
                                 const std::vector<uint32_t>& sizes,
                                 const std::vector<int64_t>& steps) {
    const auto strides = rowMajorStrides(dims);
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < dims.size(); ++d) {
        axes.push_back(stridedAxis(sizes[d], steps[d] * strides[d], begin[d] * strides[d]));
    }
    return axes;
}

Result<ElementMap> transpose(const Reader& r) {
    const auto in = r.shape(0);
    const auto rank = static_cast<uint32_t>(in.size());
    std::vector<int32_t> perm;
    if (r.omitted(1)) {
        // No permutation: the transpose of a matrix.
        if (rank != 2) return bad("an omitted permutation needs a 2-D input, got rank ", rank);
        perm = {1, 0};
    } else {
        if (rank > 4) return bad("input rank ", rank, " exceeds 4");
        auto values = r.ints(1, "the permutation", rank);
        if (!values) return values.status();
        perm = std::move(*values);
    }
    std::vector<bool> seen(rank, false);
    for (int32_t p : perm) {
        if (p < 0 || static_cast<uint32_t>(p) >= rank || seen[p])
            return bad("permutation entry ", p, " is out of range or repeated (rank ", rank, ")");
        seen[p] = true;
    }
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (int32_t p : perm) {
        out.push_back(in[p]);
        axes.push_back(stridedAxis(in[p], strides[p]));
    }
    return single(std::move(out), std::move(axes));
}

Result<ElementMap> tile(const Reader& r) {
    const auto in = r.shape(0);
    auto multiples = r.ints(1, "the multiples", in.size());
    if (!multiples) return multiples.status();
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < in.size(); ++d) {
        if ((*multiples)[d] < 0) return bad("negative multiple ", (*multiples)[d]);
        const uint64_t size = uint64_t{in[d]} * static_cast<uint32_t>((*multiples)[d]);
        if (size > UINT32_MAX) return bad("dimension ", d, " of the output overflows");
        out.push_back(static_cast<uint32_t>(size));
        AxisOffsets axis(out.back());
        for (uint32_t i = 0; i < out.back(); ++i) axis[i] = (i % in[d]) * strides[d];
        axes.push_back(std::move(axis));
    }
    return single(std::move(out), std::move(axes));
}

Result<ElementMap> reverse(const Reader& r) {
    const auto in = r.shape(0);
    auto axisValue = r.scalar(1, "the axis");
    if (!axisValue) return axisValue.status();
    const int32_t axis = *axisValue;
    if (axis < 0 || static_cast<size_t>(axis) >= in.size())
        return bad("axis ", axis, " out of range for rank ", in.size());
    const auto strides = rowMajorStrides(in);
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(stridedAxis(in[d], strides[d]));
    if (in[axis] > 0)
        axes[axis] = stridedAxis(in[axis], -strides[axis], (in[axis] - 1) * strides[axis]);
    return single(in, std::move(axes));
}

Result<ElementMap> split(const Reader& r) {
    const auto in = r.shape(0);
    auto axisValue = r.scalar(1, "the axis");
    auto parts = r.scalar(2, "the number of outputs");
    if (!axisValue) return axisValue.status();
    if (!parts) return parts.status();
    const auto axis = resolveAxis(*axisValue, in.size());
    if (!axis) return bad("axis ", *axisValue, " out of range for rank ", in.size());
    if (*parts <= 0 || static_cast<uint32_t>(*parts) != r.outputs() || in[*axis] % *parts != 0)
        return bad("cannot split dimension ", in[*axis], " into ", *parts, " parts");
    const uint32_t slice = in[*axis] / *parts;
    std::vector<int64_t> begin(in.size(), 0), steps(in.size(), 1);
    std::vector<uint32_t> sizes = in;
    sizes[*axis] = slice;
    ElementMap map;
    for (uint32_t j = 0; j < r.outputs(); ++j) {
        begin[*axis] = int64_t{j} * slice;
        map.shapes.push_back(sizes);
        map.copies.push_back({0, j, 0, boxAxes(in, begin, sizes, steps)});
    }
    return map;
}

Result<ElementMap> channelShuffle(const Reader& r) {
    const auto in = r.shape(0);
    auto groups = r.scalar(1, "the number of groups");
    auto axisValue = r.scalar(2, "the axis");
    if (!groups) return groups.status();
    if (!axisValue) return axisValue.status();
    const auto axis = resolveAxis(*axisValue, in.size());
    if (!axis) return bad("axis ", *axisValue, " out of range for rank ", in.size());
    if (*groups <= 0 || in[*axis] % *groups != 0)
        return bad("cannot shuffle ", in[*axis], " channels in ", *groups, " groups");
    // Channel c = g * groupSize + i moves to i * groups + g: the axis read as [groupSize, groups].
    const AxisSizes s = axisSizes(in, *axis);
    const uint32_t groupSize = in[*axis] / *groups;
    return single(in,
                  {stridedAxis(s.outer, s.axis * s.inner), stridedAxis(groupSize, s.inner),
                   stridedAxis(*groups, int64_t{groupSize} * s.inner), stridedAxis(s.inner, 1)});
}

Result<ElementMap> mirrorPad(const Reader& r) {
    const auto in = r.shape(0);
    auto mode = r.scalar(2, "the mode");
    if (!mode) return mode.status();
    if (in.empty()) return bad("the input must have a positive rank");
    if (*mode != kMirrorReflect && *mode != kMirrorSymmetric) return bad("unknown mode ", *mode);
    if (r.shape(1) != std::vector<uint32_t>{static_cast<uint32_t>(in.size()), 2})
        return bad("the paddings must have shape [", in.size(), ", 2]");
    auto paddings = r.ints(1, "the paddings", in.size() * 2);
    if (!paddings) return paddings.status();
    // REFLECT mirrors around the edge element, SYMMETRIC repeats it.
    const int64_t skip = *mode == kMirrorReflect ? 1 : 0;
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < in.size(); ++d) {
        const int32_t before = (*paddings)[2 * d];
        const int32_t after = (*paddings)[2 * d + 1];
        const int64_t n = in[d];
        if (before < 0 || after < 0 || before > n - skip || after > n - skip)
            return bad("paddings ", before, ", ", after, " do not fit dimension ", d, " of size ",
                       n);
        out.push_back(static_cast<uint32_t>(before + n + after));
        AxisOffsets axis(out.back());
        for (int64_t p = 0; p < out.back(); ++p) {
            const int64_t i = p - before;
            const int64_t source = i < 0 ? skip - 1 - i : i >= n ? 2 * n - 1 - skip - i : i;
            axis[p] = source * strides[d];
        }
        axes.push_back(std::move(axis));
    }
    return single(std::move(out), std::move(axes));
}

// The longest axis a map describes: its offsets take 8 bytes per index, so a hostile shape must
// not size them (an output this long along one axis is far beyond any model's).
constexpr int64_t kMaxAxisLength = int64_t{1} << 26;

// PAD and PAD_V2: each axis reads the input between `before` and `after` positions of padding,
// which take PAD_V2's value (PAD: the zero point).
Result<ElementMap> pad(const Reader& r, bool givenValue) {
    const auto in = r.shape(0);
    const size_t rank = in.size();
    if (r.shape(1) != std::vector<uint32_t>{static_cast<uint32_t>(rank), 2})
        return bad("the paddings must have shape [", rank, ", 2]");
    auto paddings = r.ints(1, "the paddings", rank * 2);
    if (!paddings) return paddings.status();
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out(rank);
    std::vector<AxisOffsets> axes(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int32_t before = (*paddings)[2 * d], after = (*paddings)[2 * d + 1];
        if (before < 0 || after < 0) return bad("negative padding on axis ", d);
        const int64_t size = int64_t{before} + in[d] + after;
        if (size > kMaxAxisLength) return bad("axis ", d, " padded to ", size, " elements");
        out[d] = static_cast<uint32_t>(size);
        axes[d].assign(out[d], kPadOffset);
        for (uint32_t k = 0; k < in[d]; ++k) axes[d][before + k] = k * strides[d];
    }
    ElementMap map = single(std::move(out), std::move(axes));
    if (givenValue) {
        auto value = r.bits(2, "the pad value");
        if (!value) return value.status();
        map.padBits = *value;
    }
    return map;
}

Result<ElementMap> slice(const Reader& r) {
    const auto in = r.shape(0);
    const size_t rank = in.size();
    if (rank == 0) return bad("the input must have a positive rank");
    auto beginData = r.ints(1, "begin", rank);
    auto sizeData = r.ints(2, "size", rank);
    if (!beginData) return beginData.status();
    if (!sizeData) return sizeData.status();
    std::vector<int64_t> begin(rank), steps(rank, 1);
    std::vector<uint32_t> sizes(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t dim = in[d];
        begin[d] = (*beginData)[d];
        const int64_t size = (*sizeData)[d] == -1 ? dim - begin[d] : (*sizeData)[d];
        if (begin[d] < 0 || begin[d] > dim || size < 0 || begin[d] + size > dim)
            return bad("slice of begin ", begin[d], " and size ", (*sizeData)[d],
                       " does not fit dimension ", d, " of size ", dim);
        sizes[d] = static_cast<uint32_t>(size);
    }
    return single(sizes, boxAxes(in, begin, sizes, steps));
}

/// Android's index clamping for STRIDED_SLICE bounds: negative indices count from the end, and the
/// result lies in [0, dim] for a positive stride and [-1, dim - 1] for a negative one.
int32_t clampedSliceIndex(int32_t index, int32_t dim, bool positiveStride) {
    if (dim == 0) return 0;
    const auto positiveRemainder = [dim](int32_t v) { return (dim + v % dim) % dim; };
    if (positiveStride) return index >= dim ? dim : positiveRemainder(std::clamp(index, -dim, dim));
    return index < -dim ? -1 : positiveRemainder(std::clamp(index, -dim, dim - 1));
}

Result<ElementMap> stridedSlice(const Reader& r) {
    const auto in = r.shape(0);
    const size_t rank = in.size();
    if (rank > 4) return bad("input rank ", rank, " exceeds 4");
    auto beginData = r.ints(1, "begin", rank);
    auto endData = r.ints(2, "end", rank);
    auto strideData = r.ints(3, "strides", rank);
    auto beginMask = r.scalar(4, "the begin mask");
    auto endMask = r.scalar(5, "the end mask");
    auto shrinkMask = r.scalar(6, "the shrink mask");
    for (const Status& s : {beginData.status(), endData.status(), strideData.status(),
                            beginMask.status(), endMask.status(), shrinkMask.status()}) {
        if (!s.ok()) return s;
    }
    std::vector<int64_t> begin(rank), steps(rank);
    std::vector<uint32_t> sizes(rank), outDims;
    for (size_t d = 0; d < rank; ++d) {
        const auto dim = static_cast<int32_t>(in[d]);
        const int32_t stride = (*strideData)[d];
        if (stride == 0) return bad("stride of dimension ", d, " is zero");
        const bool positive = stride > 0;
        const int32_t first = (*beginMask >> d) & 1
                                  ? (positive ? 0 : dim - 1)
                                  : clampedSliceIndex((*beginData)[d], dim, positive);
        const int32_t last = (*endMask >> d) & 1 ? (positive ? dim : -1)
                                                 : clampedSliceIndex((*endData)[d], dim, positive);
        // Android computes the count in float; it is exact for tensor-sized values.
        const auto count = static_cast<int32_t>(
            std::ceil(static_cast<float>(last - first) / static_cast<float>(stride)));
        sizes[d] = static_cast<uint32_t>(std::max(count, 0));
        begin[d] = first;
        steps[d] = stride;
        if ((*shrinkMask >> d) & 1) {
            if (!positive || sizes[d] != 1)
                return bad("shrunk dimension ", d, " must take one element, stride > 0");
        } else {
            outDims.push_back(sizes[d]);
        }
    }
    if (outDims.empty()) outDims.push_back(1);
    return single(std::move(outDims), boxAxes(in, begin, sizes, steps));
}

Result<ElementMap> gather(const Reader& r) {
    const auto in = r.shape(0);
    auto axisValue = r.scalar(1, "the axis");
    if (!axisValue) return axisValue.status();
    const auto axis = resolveAxis(*axisValue, in.size());
    if (!axis) return bad("axis ", *axisValue, " out of range for rank ", in.size());
    const auto indexDims = r.shape(2);
    auto indices = r.ints(2, "the indices");
    if (!indices) return indices.status();
    std::vector<uint32_t> out(in.begin(), in.begin() + *axis);
    out.insert(out.end(), indexDims.begin(), indexDims.end());
    out.insert(out.end(), in.begin() + *axis + 1, in.end());
    const AxisSizes s = axisSizes(in, *axis);
    AxisOffsets picked(indices->size());
    for (size_t i = 0; i < picked.size(); ++i) {
        const int32_t index = (*indices)[i];
        if (index < 0 || static_cast<size_t>(index) >= s.axis)
            return bad("index ", index, " outside [0, ", s.axis, ")");
        picked[i] = int64_t{index} * s.inner;
    }
    return single(std::move(out), {stridedAxis(s.outer, s.axis * s.inner), std::move(picked),
                                   stridedAxis(s.inner, 1)});
}

// DENSIFY (TFLite's sparsity format). Inputs: the stored values, the traversal order (the n
// dense dimensions, then the k block dimensions), the block map (which dense dimension each block
// dimension subdivides), each traversed dimension's format (0 dense, 1 sparse CSR) and size, then
// per traversed dimension its array segments and array indices (CSR only). The traversal tree is
// walked as Android's populate() walks it; the map is one copy over the flat output, each
// position reading its stored value or the padding (the zero point).
class Densifier {
  public:
    static constexpr int32_t kSparseCsr = 1;

    Result<ElementMap> run(const Reader& r) {
        auto order = r.ints(1, "the traversal order");
        auto blockMap = r.optionalInts(2, "the block map");
        auto format = r.ints(3, "the dimension formats");
        auto dims = r.ints(4, "the dimensions");
        if (!order) return order.status();
        if (!blockMap) return blockMap.status();
        if (!format) return format.status();
        if (!dims) return dims.status();
        mOrder = std::move(*order), mBlockMap = std::move(*blockMap);
        mFormat = std::move(*format), mDims = std::move(*dims);
        const size_t levels = mOrder.size();
        if (mFormat.size() != levels || mDims.size() != levels || mBlockMap.size() > levels)
            return bad("traversal order, formats and dimensions must have equal lengths");
        const size_t rank = levels - mBlockMap.size();
        // Dense shape: the traversed dense dimensions, each times its block dimensions' sizes.
        mDense.assign(rank, 0);
        for (size_t level = 0; level < levels; ++level) {
            const int32_t o = mOrder[level], size = mDims[level];
            const bool isBlock = level >= rank;
            const int32_t block = o - static_cast<int32_t>(rank);
            if (size < 0 || o < 0 || (!isBlock && static_cast<size_t>(o) >= rank) ||
                (isBlock &&
                 (block < 0 || static_cast<size_t>(block) >= mBlockMap.size() ||
                  mBlockMap[block] < 0 || static_cast<size_t>(mBlockMap[block]) >= rank)))
                return bad("invalid traversal order or block map at level ", level);
            if (isBlock)
                mDense[mBlockMap[block]] *= size;
            else
                mDense[o] = size;
        }
        // Android sizes block b by the dimension at traversal position order[rank + b].
        for (size_t b = 0; b < mBlockMap.size(); ++b) {
            const int32_t position = mOrder[rank + b];
            if (static_cast<size_t>(position) >= levels) return bad("invalid block ", b);
            mBlockSize.push_back(mDims[position]);
        }
        mSegments.resize(levels);
        mIndices.resize(levels);
        for (size_t level = 0; level < levels; ++level) {
            if (mFormat[level] != kSparseCsr) continue;
            const auto first = static_cast<uint32_t>(5 + 2 * level);
            auto segments = r.ints(first, "the array segments");
            auto indices = r.ints(first + 1, "the array indices");
            if (!segments) return segments.status();
            if (!indices) return indices.status();
            mSegments[level] = std::move(*segments);
            mIndices[level] = std::move(*indices);
        }
        int64_t count = 1;
        for (int64_t d : mDense) {
            count *= d;
            if (count > kMaxAxisLength)
                return bad("a dense tensor beyond ", kMaxAxisLength, " elements");
        }
        mValues = elementCount(r.shape(0));
        mFlat.assign(static_cast<size_t>(count), kPadOffset);
        mPosition.assign(levels, 0);
        NN_RETURN_IF_ERROR(expand(0, 0));
        std::vector<uint32_t> shape(mDense.begin(), mDense.end());
        return single(std::move(shape), {std::move(mFlat)});
    }

  private:
    Status expand(size_t level, size_t previous) {
        if (level == mPosition.size()) return store(previous);
        if (mFormat[level] != kSparseCsr) {
            for (int32_t i = 0; i < mDims[level]; ++i) {
                mPosition[level] = i;
                NN_RETURN_IF_ERROR(expand(level + 1, previous * mDims[level] + i));
            }
            return okStatus();
        }
        const std::vector<int32_t>& segments = mSegments[level];
        const std::vector<int32_t>& indices = mIndices[level];
        if (previous + 1 >= segments.size())
            return bad("array segments of dimension ", level, " too short");
        for (int32_t i = segments[previous]; i < segments[previous + 1]; ++i) {
            if (i < 0 || static_cast<size_t>(i) >= indices.size())
                return bad("array segment ", i, " of dimension ", level, " out of range");
            mPosition[level] = indices[i];
            NN_RETURN_IF_ERROR(expand(level + 1, i));
        }
        return okStatus();
    }

    Status store(size_t value) {
        const size_t rank = mDense.size();
        std::vector<int64_t> index(rank, 0);
        size_t level = 0;
        for (; level < rank; ++level) index[mOrder[level]] = mPosition[level];
        for (; level < mPosition.size(); ++level) {
            const int32_t block = mOrder[level] - static_cast<int32_t>(rank);
            const int32_t dim = mBlockMap[block];
            index[dim] = index[dim] * mBlockSize[block] + mPosition[level];
        }
        int64_t flat = 0;
        for (size_t d = 0; d < rank; ++d) {
            if (index[d] < 0 || index[d] >= mDense[d])
                return bad("sparse index ", index[d], " out of range in dimension ", d);
            flat = flat * mDense[d] + index[d];
        }
        if (value >= mValues) return bad("sparse value ", value, " out of range");
        mFlat[flat] = static_cast<int64_t>(value);
        return okStatus();
    }

    std::vector<int32_t> mOrder, mBlockMap, mFormat, mDims, mBlockSize;
    std::vector<std::vector<int32_t>> mSegments, mIndices;
    std::vector<int64_t> mDense;
    std::vector<int32_t> mPosition;
    AxisOffsets mFlat;
    uint64_t mValues = 0;
};

// Rearrangements between the spatial, depth and batch dimensions of 4-D tensors, in NHWC or NCHW
// (the optional layout input): every output dimension is split into the factors it is made of,
// each factor reads the input through the stride of the dimension it comes from, and the
// output's dimensions are listed in its own layout, so NCHW needs no conversion passes.

/// A 4-D tensor by its logical NHWC sizes and the element strides of each logical dimension in
/// its actual layout.
struct Tensor4 {
    uint32_t n, h, w, c;
    int64_t sn, sh, sw, sc;
};

/// The axes of each logical output dimension N, H, W, C, flattened in the output's layout.
struct OutputAxes {
    std::vector<AxisOffsets> n, h, w, c;

    std::vector<AxisOffsets> flatten(bool nchw) const {
        std::vector<AxisOffsets> all;
        for (const auto* group : nchw ? std::vector{&n, &c, &h, &w} : std::vector{&n, &h, &w, &c})
            all.insert(all.end(), group->begin(), group->end());
        return all;
    }
};

struct Layout {
    bool nchw = false;
    Tensor4 in{};
};

Result<Layout> readLayout(const Reader& r, uint32_t layoutIndex) {
    const auto dims = r.shape(0);
    if (dims.size() != 4) return bad("the input must be 4-D, got rank ", dims.size());
    Layout layout;
    if (!r.omitted(layoutIndex)) {
        auto flag = r.scalar(layoutIndex, "the layout");
        if (!flag) return flag.status();
        layout.nchw = *flag != 0;
    }
    const auto nhwc = toNhwcShape(dims, layout.nchw);
    const auto s = rowMajorStrides(dims);
    layout.in = layout.nchw ? Tensor4{nhwc[0], nhwc[1], nhwc[2], nhwc[3], s[0], s[2], s[3], s[1]}
                            : Tensor4{nhwc[0], nhwc[1], nhwc[2], nhwc[3], s[0], s[1], s[2], s[3]};
    return layout;
}

Result<uint32_t> blockSize(const Reader& r, uint32_t i) {
    auto value = r.scalar(i, "the block size");
    if (!value) return value.status();
    if (*value < 1) return bad("block size ", *value, " is not positive");
    return static_cast<uint32_t>(*value);
}

Result<std::pair<uint32_t, uint32_t>> blockShape(const Reader& r, uint32_t i) {
    if (r.shape(i) != std::vector<uint32_t>{2})
        return bad("the block shape must be a 1-D tensor of 2 values");
    auto block = r.ints(i, "the block shape", 2);
    if (!block) return block.status();
    if ((*block)[0] < 1 || (*block)[1] < 1)
        return bad("block shape ", (*block)[0], "x", (*block)[1], " is not positive");
    return std::pair{static_cast<uint32_t>((*block)[0]), static_cast<uint32_t>((*block)[1])};
}

ElementMap layoutMap(bool nchw, const std::vector<uint32_t>& nhwcDims, const OutputAxes& axes) {
    return single(fromNhwcShape(nhwcDims, nchw), axes.flatten(nchw));
}

Result<ElementMap> depthToSpace(const Reader& r) {
    auto layout = readLayout(r, 2);
    auto block = blockSize(r, 1);
    if (!layout) return layout.status();
    if (!block) return block.status();
    const Tensor4& t = layout->in;
    const uint32_t b = *block;
    if (t.c % (b * b) != 0) return bad(t.c, " channels do not divide by ", b * b);
    // Output pixel (h * b + i, w * b + j), channel k reads input channel (i * b + j) * depth + k.
    const uint32_t depth = t.c / (b * b);
    OutputAxes axes;
    axes.n = {stridedAxis(t.n, t.sn)};
    axes.h = {stridedAxis(t.h, t.sh), stridedAxis(b, int64_t{b} * depth * t.sc)};
    axes.w = {stridedAxis(t.w, t.sw), stridedAxis(b, int64_t{depth} * t.sc)};
    axes.c = {stridedAxis(depth, t.sc)};
    return layoutMap(layout->nchw, {t.n, t.h * b, t.w * b, depth}, axes);
}

Result<ElementMap> spaceToDepth(const Reader& r) {
    auto layout = readLayout(r, 2);
    auto block = blockSize(r, 1);
    if (!layout) return layout.status();
    if (!block) return block.status();
    const Tensor4& t = layout->in;
    const uint32_t b = *block;
    if (t.h % b != 0 || t.w % b != 0)
        return bad(t.h, "x", t.w, " pixels do not divide by block size ", b);
    // Output channel (i * b + j) * depth + k reads input pixel (h * b + i, w * b + j), channel k.
    OutputAxes axes;
    axes.n = {stridedAxis(t.n, t.sn)};
    axes.h = {stridedAxis(t.h / b, b * t.sh)};
    axes.w = {stridedAxis(t.w / b, b * t.sw)};
    axes.c = {stridedAxis(b, t.sh), stridedAxis(b, t.sw), stridedAxis(t.c, t.sc)};
    return layoutMap(layout->nchw, {t.n, t.h / b, t.w / b, t.c * b * b}, axes);
}

Result<ElementMap> batchToSpace(const Reader& r) {
    auto layout = readLayout(r, 2);
    auto block = blockShape(r, 1);
    if (!layout) return layout.status();
    if (!block) return block.status();
    const Tensor4& t = layout->in;
    const auto [bh, bw] = *block;
    if (t.n % (bh * bw) != 0) return bad(t.n, " batches do not divide by ", bh * bw);
    // Output pixel (h * bh + i, w * bw + j) of batch n comes from input batch (i * bw + j) * N + n.
    const uint32_t batches = t.n / (bh * bw);
    OutputAxes axes;
    axes.n = {stridedAxis(batches, t.sn)};
    axes.h = {stridedAxis(t.h, t.sh), stridedAxis(bh, int64_t{bw} * batches * t.sn)};
    axes.w = {stridedAxis(t.w, t.sw), stridedAxis(bw, int64_t{batches} * t.sn)};
    axes.c = {stridedAxis(t.c, t.sc)};
    return layoutMap(layout->nchw, {batches, t.h * bh, t.w * bw, t.c}, axes);
}

Result<ElementMap> spaceToBatch(const Reader& r) {
    auto layout = readLayout(r, 3);
    auto block = blockShape(r, 1);
    if (!layout) return layout.status();
    if (!block) return block.status();
    const Tensor4& t = layout->in;
    const auto [bh, bw] = *block;
    if (r.shape(2) != std::vector<uint32_t>{2, 2})
        return bad("the paddings must have shape [2, 2]");
    auto padding = r.ints(2, "the paddings", 4);
    if (!padding) return padding.status();
    const std::vector<int32_t>& pad = *padding;
    for (int32_t p : pad) {
        if (p < 0) return bad("negative padding ", p);
    }
    const uint32_t paddedH = pad[0] + t.h + pad[1];
    const uint32_t paddedW = pad[2] + t.w + pad[3];
    if (paddedH % bh != 0 || paddedW % bw != 0)
        return bad("padded size ", paddedH, "x", paddedW, " does not divide by block ", bh, "x",
                   bw);
    // Output batch (i * bw + j) * N + n, pixel (h, w) reads padded pixel (h * bh + i, w * bw + j),
    // input pixel (h * bh + i - top, w * bw + j - left) when inside the input. Batch is the
    // outermost dimension in both layouts, so each (i, j) fills one contiguous block of batches.
    const uint32_t outH = paddedH / bh, outW = paddedW / bw;
    const auto inside = [](uint32_t size, uint32_t block, int64_t shift, uint32_t extent,
                           int64_t stride) {
        AxisOffsets axis(size);
        for (uint32_t p = 0; p < size; ++p) {
            const int64_t i = int64_t{p} * block + shift;
            axis[p] = i < 0 || i >= extent ? kPadOffset : i * stride;
        }
        return axis;
    };
    ElementMap map;
    map.shapes.push_back(fromNhwcShape({t.n * bh * bw, outH, outW, t.c}, layout->nchw));
    const uint64_t blockElements = uint64_t{t.n} * outH * outW * t.c;
    for (uint32_t i = 0; i < bh; ++i) {
        for (uint32_t j = 0; j < bw; ++j) {
            OutputAxes axes;
            axes.n = {stridedAxis(t.n, t.sn)};
            axes.h = {inside(outH, bh, int64_t{i} - pad[0], t.h, t.sh)};
            axes.w = {inside(outW, bw, int64_t{j} - pad[2], t.w, t.sw)};
            axes.c = {stridedAxis(t.c, t.sc)};
            map.copies.push_back(
                {0, 0, (uint64_t{i} * bw + j) * blockElements, axes.flatten(layout->nchw)});
        }
    }
    return map;
}

// RESIZE_NEAREST_NEIGHBOR: each output row and column reads the input row and column it samples
// (model/operations/ResizeSampling.h).
Result<ElementMap> resizeNearest(const Reader& r) {
    auto layout = readLayout(r, 3);
    auto alignCorners = r.flag(4, "align_corners");
    auto halfPixelCenters = r.flag(5, "half_pixel_centers");
    auto widthBits = r.bits(1, "the output width");
    auto heightBits = r.bits(2, "the output height");
    if (!layout) return layout.status();
    if (!alignCorners) return alignCorners.status();
    if (!halfPixelCenters) return halfPixelCenters.status();
    if (!widthBits) return widthBits.status();
    if (!heightBits) return heightBits.status();
    if (*alignCorners && *halfPixelCenters)
        return bad("align_corners and half_pixel_centers are exclusive");
    const Tensor4& t = layout->in;
    if (t.h == 0 || t.w == 0 || t.c == 0) return bad("only the batch dimension may be 0");
    const int64_t outW = resizeOutputSize(r.type(1), *widthBits, t.w);
    const int64_t outH = resizeOutputSize(r.type(2), *heightBits, t.h);
    if (outW <= 0 || outH <= 0 || outW > kMaxAxisLength || outH > kMaxAxisLength)
        return bad("output size ", outH, "x", outW);
    const auto sampled = [&](int64_t size, uint32_t inSize, int64_t stride) {
        const auto n = static_cast<uint32_t>(size);
        const float scale = resizeScale(inSize, n, *alignCorners);
        AxisOffsets axis(n);
        for (uint32_t i = 0; i < n; ++i)
            axis[i] = nearestIndex(i, scale, inSize, *alignCorners, *halfPixelCenters) * stride;
        return axis;
    };
    OutputAxes axes;
    axes.n = {stridedAxis(t.n, t.sn)};
    axes.h = {sampled(outH, t.h, t.sh)};
    axes.w = {sampled(outW, t.w, t.sw)};
    axes.c = {stridedAxis(t.c, t.sc)};
    return layoutMap(layout->nchw,
                     {t.n, static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), t.c}, axes);
}

}  // namespace

bool hasElementMap(OperationType type) {
    switch (type) {
        case OperationType::TRANSPOSE:
        case OperationType::TILE:
        case OperationType::REVERSE:
        case OperationType::SPLIT:
        case OperationType::CHANNEL_SHUFFLE:
        case OperationType::MIRROR_PAD:
        case OperationType::PAD:
        case OperationType::PAD_V2:
        case OperationType::RESIZE_NEAREST_NEIGHBOR:
        case OperationType::DENSIFY:
        case OperationType::SLICE:
        case OperationType::STRIDED_SLICE:
        case OperationType::GATHER:
        case OperationType::DEPTH_TO_SPACE:
        case OperationType::SPACE_TO_DEPTH:
        case OperationType::BATCH_TO_SPACE_ND:
        case OperationType::SPACE_TO_BATCH_ND:
            return true;
        default:
            return false;
    }
}

Result<ElementMap> elementMap(OperationType type, const ElementMapInputs& inputs) {
    const Reader r(inputs);
    switch (type) {
        case OperationType::TRANSPOSE:
            return transpose(r);
        case OperationType::TILE:
            return tile(r);
        case OperationType::REVERSE:
            return reverse(r);
        case OperationType::SPLIT:
            return split(r);
        case OperationType::CHANNEL_SHUFFLE:
            return channelShuffle(r);
        case OperationType::MIRROR_PAD:
            return mirrorPad(r);
        case OperationType::PAD:
            return pad(r, false);
        case OperationType::PAD_V2:
            return pad(r, true);
        case OperationType::RESIZE_NEAREST_NEIGHBOR:
            return resizeNearest(r);
        case OperationType::DENSIFY:
            return Densifier().run(r);
        case OperationType::SLICE:
            return slice(r);
        case OperationType::STRIDED_SLICE:
            return stridedSlice(r);
        case OperationType::GATHER:
            return gather(r);
        case OperationType::DEPTH_TO_SPACE:
            return depthToSpace(r);
        case OperationType::SPACE_TO_DEPTH:
            return spaceToDepth(r);
        case OperationType::BATCH_TO_SPACE_ND:
            return batchToSpace(r);
        case OperationType::SPACE_TO_BATCH_ND:
            return spaceToBatch(r);
        default:
            return bad(nameOf(type), " is not an element map");
    }
}

}  // namespace nncosim
