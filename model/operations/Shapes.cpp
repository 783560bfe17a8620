#include "model/operations/Shapes.h"

#include "model/Model.h"

namespace nncosim {

std::optional<std::vector<uint32_t>> broadcastShape(const std::vector<uint32_t>& a,
                                                    const std::vector<uint32_t>& b) {
    const size_t rank = std::max(a.size(), b.size());
    std::vector<uint32_t> out(rank);
    for (size_t i = 1; i <= rank; ++i) {
        const uint32_t da = i <= a.size() ? a[a.size() - i] : 1;
        const uint32_t db = i <= b.size() ? b[b.size() - i] : 1;
        if (da != db && da != 1 && db != 1) return std::nullopt;
        out[rank - i] = da == 1 ? db : da;
    }
    return out;
}

Result<std::vector<uint32_t>> squeezeShape(const std::vector<uint32_t>& input,
                                           const std::optional<std::vector<int32_t>>& axes) {
    const auto rank = static_cast<int32_t>(input.size());
    if (rank > 4) return invalidArgument("input rank ", rank, " exceeds 4");
    std::vector<bool> squeeze(rank, false);
    if (!axes) {
        for (int32_t d = 0; d < rank; ++d) squeeze[d] = input[d] == 1;
    } else {
        for (int32_t axis : *axes) {
            const int32_t d = axis < 0 ? axis + rank : axis;
            if (d < 0 || d >= rank || input[d] != 1)
                return invalidArgument("cannot squeeze dimension ", axis, " of shape ",
                                       toString(input));
            squeeze[d] = true;
        }
    }
    std::vector<uint32_t> out;
    for (int32_t d = 0; d < rank; ++d) {
        if (!squeeze[d]) out.push_back(input[d]);
    }
    if (out.empty()) out.push_back(1);
    return out;
}

Result<std::vector<uint32_t>> expandDimsShape(const std::vector<uint32_t>& input, int32_t axis) {
    const auto rank = static_cast<int32_t>(input.size()) + 1;
    const int32_t d = axis < 0 ? axis + rank : axis;
    if (d < 0 || d >= rank)
        return invalidArgument("axis ", axis, " out of range for rank ", input.size());
    std::vector<uint32_t> out = input;
    out.insert(out.begin() + d, 1);
    return out;
}

Result<std::vector<uint32_t>> reshapeShape(const std::vector<uint32_t>& input,
                                           const std::vector<int32_t>& target) {
    const uint64_t elements = elementCount(input);
    std::vector<uint32_t> dims(target.size());
    uint64_t known = 1;
    int stretch = -1;
    for (size_t d = 0; d < target.size(); ++d) {
        if (target[d] == -1 && stretch < 0) {
            stretch = static_cast<int>(d);
        } else if (target[d] < 0) {
            return invalidArgument("invalid target dimension ", target[d]);
        } else {
            dims[d] = static_cast<uint32_t>(target[d]);
            known *= dims[d];
        }
    }
    if (stretch >= 0) {
        if (known == 0) return invalidArgument("cannot infer a dimension next to a zero dimension");
        dims[stretch] = static_cast<uint32_t>(elements / known);
        known *= dims[stretch];
    }
    if (known != elements)
        return invalidArgument("cannot reshape ", toString(input), " (", elements, " elements) to ",
                               toString(dims));
    return dims;
}

Result<std::vector<uint32_t>> concatenationShape(const std::vector<std::vector<uint32_t>>& inputs,
                                                 int32_t axis) {
    const auto rank = static_cast<int32_t>(inputs.empty() ? 0 : inputs[0].size());
    if (rank == 0 || rank > 4 || axis < -rank || axis >= rank)
        return invalidArgument("axis ", axis, " invalid for rank ", rank, " (at most 4)");
    const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    std::vector<uint32_t> dims = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i) {
        const std::vector<uint32_t>& other = inputs[i];
        bool matches = other.size() == dims.size();
        for (size_t d = 0; matches && d < dims.size(); ++d) matches = d == a || other[d] == dims[d];
        if (!matches)
            return invalidArgument("input ", i, " ", toString(other), " does not match input 0 ",
                                   toString(inputs[0]), " outside axis ", a);
        dims[a] += other[a];
    }
    return dims;
}

Result<std::vector<bool>> reducedAxes(size_t rank, const std::vector<int32_t>& axes) {
    std::vector<bool> reduced(rank, false);
    const auto r = static_cast<int32_t>(rank);
    for (int32_t axis : axes) {
        if (axis < -r || axis >= r)
            return invalidArgument("axis ", axis, " out of range for rank ", rank);
        reduced[axis < 0 ? axis + r : axis] = true;
    }
    return reduced;
}

std::vector<uint32_t> reductionShape(const std::vector<uint32_t>& input,
                                     const std::vector<bool>& reduced, bool keepDims) {
    std::vector<uint32_t> out;
    for (size_t d = 0; d < input.size(); ++d) {
        if (!reduced[d])
            out.push_back(input[d]);
        else if (keepDims)
            out.push_back(1);
    }
    if (out.empty()) out.push_back(1);
    return out;
}

Result<std::vector<uint32_t>> fullyConnectedShape(const std::vector<uint32_t>& input,
                                                  const std::vector<uint32_t>& weights,
                                                  const std::vector<uint32_t>& bias) {
    if (input.size() < 2 || input.size() > 4 || weights.size() != 2 || bias.size() != 1)
        return invalidArgument("input must be 2-D to 4-D, weights 2-D and bias 1-D");
    const uint32_t units = weights[0], inputSize = weights[1];
    const uint64_t elements = elementCount(input);
    if (units == 0 || inputSize == 0 || elements % inputSize != 0 || bias[0] != units)
        return invalidArgument("input ", toString(input), ", weights ", toString(weights),
                               " and bias ", toString(bias), " do not match");
    return std::vector<uint32_t>{static_cast<uint32_t>(elements / inputSize), units};
}

}  // namespace nncosim
