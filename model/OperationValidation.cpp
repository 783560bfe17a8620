#include "model/OperationValidation.h"

#include <algorithm>
#include <sstream>

namespace nncosim {
namespace {

std::string listOf(std::initializer_list<uint32_t> values) {
    std::ostringstream s;
    const char* sep = "";
    for (uint32_t v : values) s << sep << v, sep = " or ";
    return s.str();
}

std::string listOf(std::initializer_list<OperandType> values) {
    std::ostringstream s;
    const char* sep = "";
    for (OperandType v : values) s << sep << nameOf(v), sep = ", ";
    return s.str();
}

}  // namespace

std::optional<uint32_t> OperationContext::inputRank(uint32_t i) const {
    const Operand& op = input(i);
    if (op.dimensions.empty() && isTensorType(op.type)) return std::nullopt;
    return static_cast<uint32_t>(op.dimensions.size());
}

bool OperationContext::isConstant(uint32_t i) const {
    const auto lt = input(i).lifetime;
    return lt == OperandLifeTime::CONSTANT_COPY || lt == OperandLifeTime::CONSTANT_REFERENCE;
}

const uint8_t* OperationContext::constantData(uint32_t i) const {
    return isConstant(i) ? nncosim::constantData(mModel, input(i)) : nullptr;
}

Status OperationContext::expectInputCount(std::initializer_list<uint32_t> allowed) const {
    if (std::find(allowed.begin(), allowed.end(), numInputs()) != allowed.end()) return okStatus();
    return fail("expected ", listOf(allowed), " inputs, got ", numInputs());
}

Status OperationContext::expectOutputCount(std::initializer_list<uint32_t> allowed) const {
    if (std::find(allowed.begin(), allowed.end(), numOutputs()) != allowed.end()) return okStatus();
    return fail("expected ", listOf(allowed), " outputs, got ", numOutputs());
}

Status OperationContext::expectInputType(uint32_t i, OperandType type) const {
    if (i >= numInputs()) return fail("missing input ", i);
    if (inputType(i) != type)
        return fail("input ", i, " has type ", nameOf(inputType(i)), ", expected ", nameOf(type));
    return okStatus();
}

Status OperationContext::expectInputTypes(const std::vector<OperandType>& types) const {
    if (types.size() != numInputs())
        return fail("expected ", types.size(), " inputs, got ", numInputs());
    for (uint32_t i = 0; i < types.size(); ++i) NN_RETURN_IF_ERROR(expectInputType(i, types[i]));
    return okStatus();
}

Status OperationContext::expectOutputTypes(const std::vector<OperandType>& types) const {
    if (types.size() != numOutputs())
        return fail("expected ", types.size(), " outputs, got ", numOutputs());
    for (uint32_t i = 0; i < types.size(); ++i) {
        if (outputType(i) != types[i])
            return fail("output ", i, " has type ", nameOf(outputType(i)), ", expected ",
                        nameOf(types[i]));
    }
    return okStatus();
}

Status OperationContext::expectInputTypeIn(uint32_t i,
                                           std::initializer_list<OperandType> types) const {
    if (i >= numInputs()) return fail("missing input ", i);
    if (std::find(types.begin(), types.end(), inputType(i)) != types.end()) return okStatus();
    return fail("input ", i, " has type ", nameOf(inputType(i)), ", expected one of ",
                listOf(types));
}

Status OperationContext::expectInputRankAtMost(uint32_t i, uint32_t maxRank) const {
    auto r = inputRank(i);
    if (r && *r > maxRank)
        return fail("input ", i, " has rank ", *r, ", at most ", maxRank, " allowed");
    return okStatus();
}

}  // namespace nncosim
