#include "golden/ExecutionContext.h"

#include <limits>

namespace nncosim::golden {

size_t ExecutionContext::inputCount(uint32_t i) const {
    size_t n = 1;
    for (uint32_t d : inputValue(i).dimensions) n *= d;
    return n;
}

size_t ExecutionContext::outputCount(uint32_t j) const {
    size_t n = 1;
    for (uint32_t d : outputValue(j).dimensions) n *= d;
    return n;
}

const SymmPerChannelQuantParams& ExecutionContext::inputChannelQuant(uint32_t i) const {
    static const SymmPerChannelQuantParams kNone;
    const auto* params = std::get_if<SymmPerChannelQuantParams>(&inputOperand(i).extraParams);
    return params ? *params : kNone;
}

std::vector<float> ExecutionContext::inputAsFloat(uint32_t i) const {
    const size_t n = inputCount(i);
    std::vector<float> out(n);
    if (inputType(i) == OperandType::TENSOR_FLOAT16 || inputType(i) == OperandType::FLOAT16) {
        Eigen::Map<Eigen::ArrayXf>(out.data(), n) =
            Eigen::Map<const Eigen::Array<half, Eigen::Dynamic, 1>>(inputData<half>(i), n)
                .cast<float>();
    } else if (n > 0) {
        std::memcpy(out.data(), inputBytes(i), n * sizeof(float));
    }
    return out;
}

Status ExecutionContext::setOutputShape(uint32_t j, std::vector<uint32_t> dims) {
    const std::vector<uint32_t>& declared = outputOperand(j).dimensions;
    bool compatible = declared.empty() || declared.size() == dims.size();
    for (size_t d = 0; compatible && d < declared.size(); ++d) {
        compatible = declared[d] == 0 || declared[d] == dims[d];
    }
    if (!compatible) {
        return fail("output ", j, " has shape ", toString(dims), " but the model declares ",
                    toString(declared));
    }
    const uint64_t bytes = byteSize(outputOperand(j).type, dims);
    if (bytes > kMaxOperandBytes) {
        return fail("output ", j, " of shape ", toString(dims), " needs ", byteSizeText(bytes),
                    ", more than 4 GiB");
    }
    if (bytes > mMemoryLeft) {
        return fail("output ", j, " of shape ", toString(dims), " needs ", byteSizeText(bytes),
                    ", past the execution's memory limit (", byteSizeText(mMemoryLeft), " left)");
    }
    mMemoryLeft -= bytes;
    OperandValue& value = outputValue(j);
    value.dimensions = std::move(dims);
    value.storage.assign(bytes, 0);
    value.owned = true;
    value.present = true;
    return okStatus();
}

void ExecutionContext::setOutputFromFloat(uint32_t j, const float* values) {
    const size_t n = outputCount(j);
    if (outputType(j) == OperandType::TENSOR_FLOAT16) {
        Eigen::Map<Eigen::Array<half, Eigen::Dynamic, 1>>(outputData<half>(j), n) =
            Eigen::Map<const Eigen::ArrayXf>(values, n).cast<half>();
    } else if (n > 0) {
        std::memcpy(outputBytes(j), values, n * sizeof(float));
    }
}

}  // namespace nncosim::golden
