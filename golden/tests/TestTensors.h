// Tensor values for golden tests: TensorData from typed values and back (empty tensors too).
#pragma once

#include <cstring>
#include <vector>

#include "model/Model.h"

namespace nncosim::golden {

template <typename T>
TensorData tensor(std::vector<uint32_t> dims, const std::vector<T>& values) {
    TensorData t;
    t.dimensions = std::move(dims);
    t.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
}

template <typename T>
std::vector<T> valuesOf(const TensorData& t) {
    std::vector<T> v(t.bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
    return v;
}

}  // namespace nncosim::golden
