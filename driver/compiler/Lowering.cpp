#include "driver/compiler/Lowering.h"

#include <algorithm>
#include <cstring>

#include <Eigen/Core>

#include "driver/CostModel.h"
#include "model/NpuExtension.h"

namespace nncosim::driver {
namespace {

// Where a tensor of `bytes` placed at `at` ends, aligned; past kMaxArenaBytes it only says so.
uint64_t placeEnd(uint64_t at, uint64_t bytes) {
    if (at > kMaxArenaBytes || bytes > kMaxArenaBytes) return kMaxArenaBytes + 1;
    return (at + bytes + kAlign - 1) / kAlign * kAlign;
}

bool fullyKnown(const std::vector<uint32_t>& dims) {
    return !dims.empty() &&
           std::none_of(dims.begin(), dims.end(), [](uint32_t d) { return d == 0; });
}

// The computed shape where it agrees with what the model declares (0 = unknown).
bool agrees(const std::vector<uint32_t>& declared, const std::vector<uint32_t>& actual) {
    if (declared.empty()) return true;
    if (declared.size() != actual.size()) return false;
    for (size_t i = 0; i < declared.size(); ++i) {
        if (declared[i] != 0 && declared[i] != actual[i]) return false;
    }
    return true;
}

}  // namespace

std::optional<npu::Format> floatFormat(OperandType t) {
    if (t == OperandType::TENSOR_FLOAT32) return npu::Format::FP32;
    if (t == OperandType::TENSOR_FLOAT16) return npu::Format::FP16;
    return std::nullopt;
}

std::vector<float> floatValues(OperandType type, const uint8_t* data, size_t count) {
    std::vector<float> values(count);
    if (type == OperandType::TENSOR_FLOAT32) {
        std::memcpy(values.data(), data, count * sizeof(float));
        return values;
    }
    for (size_t i = 0; i < count; ++i) {
        Eigen::half h;
        std::memcpy(&h, data + 2 * i, 2);
        values[i] = static_cast<float>(h);
    }
    return values;
}

npu::OutputStage floatStage(npu::Format format, int32_t activation) {
    npu::OutputStage stage;
    stage.format = static_cast<uint32_t>(format);
    const auto [lo, hi] = activationRangeFloat(activation);
    std::memcpy(&stage.fpMin, &lo, sizeof lo);
    std::memcpy(&stage.fpMax, &hi, sizeof hi);
    return stage;
}

npu::OutputStage unclampedFloatStage(npu::Format format) {
    npu::OutputStage stage;
    stage.format = static_cast<uint32_t>(format);
    stage.fpMin = npu::kFp32NegInf, stage.fpMax = npu::kFp32Inf;
    return stage;
}

npu::Descriptor floatDescriptor(npu::Opcode opcode, const npu::OutputStage& stage, bool negateB) {
    npu::Descriptor d;
    d.opcode = opcode;
    d.format = stage.format;
    d.negateB = negateB;
    d.fpMin = stage.fpMin, d.fpMax = stage.fpMax;
    return d;
}

std::optional<fixedpoint::ActivationRange> activationRange(int32_t activation, const Operand& out) {
    if (activation < 0 || activation > 3) return std::nullopt;
    return fixedpoint::calculateActivationRange(static_cast<FusedActivation>(activation), out.scale,
                                                out.zeroPoint, typeMin(out.type),
                                                typeMax(out.type));
}

std::optional<std::vector<fixedpoint::QuantizedMultiplier>> channelMultipliers(
    const Operand& in, const Operand& filter, const Operand& bias, const Operand& out,
    uint32_t channels) {
    std::vector<float> filterScales(channels, filter.scale);
    std::vector<float> biasScales(channels, bias.scale);
    if (filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        const auto* pc = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
        if (!pc || pc->scales.size() != channels) return std::nullopt;
        filterScales = pc->scales;
        for (uint32_t c = 0; c < channels; ++c) biasScales[c] = filterScales[c] * in.scale;
    }
    std::vector<fixedpoint::QuantizedMultiplier> result;
    for (uint32_t c = 0; c < channels; ++c) {
        const auto real = fixedpoint::getQuantizedConvolutionMultiplier(in.scale, filterScales[c],
                                                                        biasScales[c], out.scale);
        if (!real) return std::nullopt;
        const auto m = fixedpoint::quantizeMultiplier(*real);
        if (!m || m->shift < -31 || m->shift > 31) return std::nullopt;
        result.push_back(*m);
    }
    return result;
}

Result<std::array<uint32_t, 4>> fourDims(const Lowering& lw, const Operation& op, uint32_t k) {
    const auto& dims = lw.dims(k);
    if (dims.size() > 4)
        return lw.fail(op, "operand " + std::to_string(k) + " has rank " +
                               std::to_string(dims.size()) + ": the NPU streams ranks 1 to 4");
    std::array<uint32_t, 4> d4{1, 1, 1, 1};
    for (size_t i = 0; i < dims.size(); ++i) d4[4 - dims.size() + i] = dims[i];
    return d4;
}

Status unsupported(const Operation& op, const std::string& why) {
    return fail(ErrorStatus::GENERAL_FAILURE, nameOf(op.type), ": ", why);
}

npu::Descriptor lookupDescriptor(Lowering& lowering, OperandType in, OperandType out,
                                 const Table& table) {
    npu::Descriptor d;
    d.opcode = npu::Opcode::LUT;
    d.aSigned = d.bSigned = isSigned(in);
    d.outSigned = isSigned(out);
    d.wAddr = lowering.addConstant(table.data(), table.size());
    d.actMin = typeMin(out), d.actMax = typeMax(out);
    return d;
}

// ---------------------------------------------------------------------------------------------
// Constants.

bool Constants::isConstant(uint32_t index) const {
    const auto lt = operand(index).lifetime;
    return lt == OperandLifeTime::CONSTANT_COPY || lt == OperandLifeTime::CONSTANT_REFERENCE ||
           (mInputValues && mInputValues->count(index));
}

bool Constants::isConstantOrInput(uint32_t index) const {
    return isConstant(index) || operand(index).lifetime == OperandLifeTime::SUBGRAPH_INPUT;
}

const uint8_t* Constants::data(uint32_t index) const {
    if (mInputValues) {
        auto it = mInputValues->find(index);
        if (it != mInputValues->end()) return it->second.data();
    }
    return isConstant(index) ? constantData(mModel, operand(index)) : nullptr;
}

size_t Constants::length(uint32_t index) const {
    if (mInputValues) {
        auto it = mInputValues->find(index);
        if (it != mInputValues->end()) return it->second.size();
    }
    return operand(index).location.length;
}

OperationInputs Constants::inputsOf(const Operation& op) const {
    OperationInputs in;
    in.count = static_cast<uint32_t>(op.inputs.size());
    in.type = [this, &op](uint32_t i) { return operand(op.inputs[i]).type; };
    in.int32 = [this, &op](uint32_t i) { return scalar<int32_t>(op.inputs[i]); };
    in.boolean = [this, &op](uint32_t i) -> std::optional<bool> {
        auto v = scalar<uint8_t>(op.inputs[i]);
        if (!v) return std::nullopt;
        return *v != 0;
    };
    return in;
}

// ---------------------------------------------------------------------------------------------
// Lowering.

Lowering::Lowering(const Model& original, const RewrittenModel& rewritten,
                   const std::vector<std::vector<uint32_t>>& inputShapes, const InputValues& values)
    : mOriginal(original),
      mModel(rewritten.model),
      mOrigin(rewritten.origin),
      mConstants(rewritten.model, &values),
      mInputShapes(inputShapes) {}

Result<Program> Lowering::run() {
    const auto& g = mModel.main;
    for (const Operation& op : g.operations) mOps.push_back(findNpuOperation(mModel, op));
    mDims.resize(g.operands.size());
    mPlace.resize(g.operands.size());
    for (size_t k = 0; k < g.operands.size(); ++k) mDims[k] = g.operands[k].dimensions;
    for (size_t i = 0; i < g.inputIndexes.size(); ++i) {
        if (i < mInputShapes.size() && !mInputShapes[i].empty())
            mDims[g.inputIndexes[i]] = mInputShapes[i];
    }
    for (size_t i = 0; i < g.operations.size(); ++i) {
        mOpIndex = static_cast<uint32_t>(i);
        NN_RETURN_IF_ERROR(inferShape(g.operations[i]));
    }
    planDepthwisePointwiseFusion(*this);
    planResidualAdds(*this);
    planPlanarInputs(*this);
    NN_RETURN_IF_ERROR(planTensors());
    mProgram.constantsOffset = mTensorEnd;
    // Named per original operation: one folded away by a rewrite has no descriptors.
    for (const Operation& op : mOriginal.main.operations) {
        mProgram.operationNames.push_back(
            npu_extension::isLut8(mOriginal, op.type) ? "com.nncosim.npu:LUT8" : nameOf(op.type));
    }
    for (size_t i = 0; i < g.operations.size(); ++i) {
        mOpIndex = static_cast<uint32_t>(i);
        NN_RETURN_IF_ERROR(mOps[i]->lower(*this, g.operations[i]));
    }
    npu::placeFences(mProgram.descriptors);
    if (mProgram.descriptors.empty()) {  // e.g. a lone RESHAPE: the data is already in place
        npu::Descriptor nop;
        mProgram.descriptors.push_back(nop);
    }
    mProgram.descriptors.back().flags |= static_cast<uint32_t>(npu::DescFlag::LAST);
#ifndef NDEBUG
    // Debug builds decode the program as the NPU will: a compiler bug shows here, without the RTL.
    if (const auto refused =
            npu::chainError(mProgram.descriptors.data(), mProgram.descriptors.size());
        refused.code != npu::ErrorCode::NONE)
        return nncosim::fail(ErrorStatus::GENERAL_FAILURE, "compiler bug: descriptor ",
                             refused.index, " is ", npu::errorName(refused.code));
#endif
    for (uint32_t k : g.inputIndexes) mProgram.inputs.push_back(io(k));
    for (uint32_t k : g.outputIndexes) mProgram.outputs.push_back(io(k));
    mProgram.descriptorOffset =
        alignUp(uint64_t{mProgram.constantsOffset} + mProgram.constants.size(), kAlign);
    mProgram.completionOffset = alignUp(uint64_t{mProgram.descriptorOffset} +
                                            mProgram.descriptors.size() * npu::kDescriptorWords * 4,
                                        kAlign);
    const uint64_t arena = uint64_t{mProgram.completionOffset} + npu::kCompletionWords * 4;
    if (arena > kMaxArenaBytes)
        return nncosim::fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the program needs ",
                             byteSizeText(arena), " of device memory, more than ",
                             byteSizeText(kMaxArenaBytes));
    mProgram.arenaSize = alignUp(arena, kAlign);
    mProgram.estimatedCycles += kJobOverheadCycles;
    return std::move(mProgram);
}

Status Lowering::fail(const Operation& op, const std::string& why) const {
    return nncosim::fail(ErrorStatus::GENERAL_FAILURE, "operation ", mOrigin[mOpIndex], " (",
                         nameOf(op.type), "): ", why);
}

Status Lowering::inferShape(const Operation& op) {
    for (uint32_t k : op.inputs) {
        // An omitted optional input (NO_VALUE) has no shape.
        if (isTensorType(operand(k).type) && operand(k).lifetime != OperandLifeTime::NO_VALUE &&
            !fullyKnown(mDims[k]))
            return fail(op, "input shape unknown at compile time");
    }
    const NpuOperation& npuOp = *mOps[mOpIndex];
    std::vector<std::vector<uint32_t>> shapes;
    if (npuOp.outputShapes) {
        auto all = npuOp.outputShapes(*this, op);
        if (!all) return fail(op, all.status().message);
        shapes = std::move(*all);
    } else {
        auto out = npuOp.outputShape(*this, op);
        if (!out) return fail(op, out.status().message);
        shapes.push_back(std::move(*out));
    }
    if (shapes.size() != op.outputs.size()) return fail(op, "output count");
    for (size_t j = 0; j < shapes.size(); ++j) {
        if (!agrees(operand(op.outputs[j]).dimensions, shapes[j]))
            return fail(op, "computed shape " + toString(shapes[j]) + " of output " +
                                std::to_string(j) + " contradicts the model");
        mDims[op.outputs[j]] = std::move(shapes[j]);
    }
    return okStatus();
}

// Device memory of every tensor: inputs, outputs and intermediates in the tensor region, with
// the scratch areas operations ask for; aliasing outputs share their input's bytes; constants
// are placed on first use.
Status Lowering::planTensors() {
    const auto& g = mModel.main;
    // 64-bit sums: the tensors together may pass 4 GiB although each fits 32 bits.
    uint64_t next = 0;
    auto allocate = [&](uint64_t bytes) {
        const auto at = static_cast<uint32_t>(next);
        next = placeEnd(next, std::max<uint64_t>(1, bytes));
        return at;
    };
    auto allocateOperand = [&](uint32_t k) {
        mPlace[k] = {allocate(byteSize(operand(k).type, mDims[k])), true};
    };
    for (uint32_t k : g.inputIndexes) allocateOperand(k);
    for (uint32_t i = 0; i < g.operations.size() && next <= kMaxArenaBytes; ++i) {
        const Operation& op = g.operations[i];
        if (mOps[i]->scratch) {
            for (uint64_t bytes : mOps[i]->scratch(*this, op))
                mScratch[i].push_back(allocate(bytes));
        }
        if (mOps[i]->aliasesInput) {
            // A view of a constant is placed with the constants.
            if (!mConstants.isConstant(op.inputs[0])) mAlias[op.outputs[0]] = op.inputs[0];
            continue;
        }
        for (uint32_t k : op.outputs) {
            if (!mOnChip.count(k)) allocateOperand(k);
        }
    }
    if (next > kMaxArenaBytes)
        return nncosim::fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                             "the model's tensors need more than ", byteSizeText(kMaxArenaBytes),
                             " of device memory");
    mTensorEnd = static_cast<uint32_t>(next);
    return okStatus();
}

void Lowering::placeConstantIfNeeded(uint32_t k) {
    if (auto it = mAlias.find(k); it != mAlias.end()) {
        placeConstantIfNeeded(it->second);
        mPlace[k] = mPlace[it->second];
        return;
    }
    if (mPlace[k].placed) return;
    // A constant used as data (or a view of one): copy its bytes into the constants.
    uint32_t source = k;
    for (size_t i = 0; i < mModel.main.operations.size(); ++i) {
        const Operation& op = mModel.main.operations[i];
        if (op.outputs[0] == k && mOps[i]->aliasesInput) source = op.inputs[0];
    }
    mPlace[k] = {
        addConstant(mConstants.data(source), byteSize(operand(source).type, mDims[source])), true};
}

ProgramIo Lowering::io(uint32_t k) {
    ProgramIo r;
    r.offset = address(k);
    r.size = static_cast<uint32_t>(byteSize(operand(k).type, mDims[k]));
    r.dimensions = mDims[k];
    return r;
}

uint32_t Lowering::address(uint32_t k) {
    placeConstantIfNeeded(k);
    return mPlace[k].offset;
}

uint32_t Lowering::addConstant(const void* data, size_t size) {
    auto& c = mProgram.constants;
    c.resize(alignUp(c.size(), kAlign));
    const auto offset = static_cast<uint32_t>(mProgram.constantsOffset + c.size());
    const auto* bytes = static_cast<const uint8_t*>(data);
    if (bytes)
        c.insert(c.end(), bytes, bytes + size);
    else
        c.resize(c.size() + size);
    return offset;
}

const std::vector<uint32_t>& Lowering::scratch() const {
    static const std::vector<uint32_t> kNone;
    auto it = mScratch.find(mOpIndex);
    return it == mScratch.end() ? kNone : it->second;
}

void Lowering::emit(npu::Descriptor d, std::optional<uint32_t> tag) {
    d.tag = mOrigin[tag.value_or(mOpIndex)];
    mProgram.estimatedCycles += estimateDescriptorCycles(d);
    mProgram.descriptors.push_back(d);
}

void Lowering::emitChain(const npu::ChainBuilder& chain) {
    for (const npu::Descriptor& d : chain.descriptors()) emit(d);
}

void Lowering::fuse(uint32_t first, uint32_t second, uint32_t intermediate) {
    mFusedInto[first] = second;
    mFusedFrom[second] = first;
    mOnChip.insert(intermediate);
}

void Lowering::addInDrain(uint32_t conv, uint32_t add, uint32_t convOutput) {
    mDrainAdd[conv] = add;
    mAddedInDrain.insert(add);
    mOnChip.insert(convOutput);
}

std::optional<uint32_t> Lowering::drainAddOf(uint32_t conv) const {
    auto it = mDrainAdd.find(conv);
    if (it == mDrainAdd.end()) return std::nullopt;
    return it->second;
}

void Lowering::readAsPlanes(uint32_t op, uint32_t output, uint32_t planes) {
    mReadAsPlanes.insert(op);
    mPlanarSource[output] = planes;
    mOnChip.insert(output);
}

std::optional<uint32_t> Lowering::planarSource(uint32_t k) const {
    auto it = mPlanarSource.find(k);
    if (it == mPlanarSource.end()) return std::nullopt;
    return it->second;
}

std::optional<uint32_t> Lowering::fusedFrom(uint32_t op) const {
    auto it = mFusedFrom.find(op);
    if (it == mFusedFrom.end()) return std::nullopt;
    return it->second;
}

}  // namespace nncosim::driver
