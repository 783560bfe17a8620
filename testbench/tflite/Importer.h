// The .tflite importer's state (internal to testbench/tflite/): the file's tensors and buffers
// as NNAPI operands, and one mapping per TFLite operator. TfliteImporter.cpp reads the file and
// its tensors; TfliteOperators.cpp maps the operators.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "model/Builder.h"
#include "testbench/tflite/TfliteImporter.h"
#include "testbench/tflite/tflite_schema_generated.h"

namespace nncosim::tflite_import {

namespace tfl = nncosim::tflite;
using tfl::BuiltinOperator;

/// ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES: larger constants are referenced.
inline constexpr size_t kMaxCopiedConstantBytes = 128;
inline constexpr uint32_t kNoOperand = std::numeric_limits<uint32_t>::max();
inline constexpr int32_t kPaddingSame = 1;  // NNAPI's implicit padding schemes
inline constexpr int32_t kPaddingValid = 2;

/// Thrown inside the importer and turned into an INVALID_ARGUMENT Status at the top.
struct ImportError {
    std::string message;
};

inline std::string operatorName(BuiltinOperator code) {
    const char* name = tfl::EnumNameBuiltinOperator(code);
    if (name && *name) return name;
    return "BUILTIN_" + std::to_string(static_cast<int32_t>(code));
}

inline std::string tensorTypeName(tfl::TensorType type) {
    const char* name = tfl::EnumNameTensorType(type);
    if (name && *name) return name;
    return "TYPE_" + std::to_string(static_cast<int32_t>(type));
}

template <typename T>
std::vector<T> toVector(const flatbuffers::Vector<T>* v) {
    // Copied bytewise (the file is little-endian, as is the host): the verifier aligns a vector
    // to 4 bytes only, so an int64 vector's elements may be misaligned for a typed read.
    std::vector<T> out(v ? v->size() : 0);
    if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
    return out;
}

/// Constant bytes of a tensor inside the file.
struct Bytes {
    const uint8_t* data = nullptr;
    size_t size = 0;
};

/// How an operator wants a tensor encoded when it differs from the tensor's own type.
enum class Encoding {
    kAsTyped,
    kPerChannel,    // int8 quantized per channel even with a single scale (TRANSPOSE_CONV)
    kLegacyHybrid,  // uint8 weights of a float operator hold int8 values (old TFLite files)
};

/// How to represent a TFLite tensor as an NNAPI operand.
struct OperandDesc {
    OperandType type = OperandType::TENSOR_FLOAT32;
    std::vector<uint32_t> dims;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
    std::optional<SymmPerChannelQuantParams> perChannel;
};

inline OperandDesc plainDesc(OperandType type, std::vector<uint32_t> dims) {
    OperandDesc d;
    d.type = type;
    d.dims = std::move(dims);
    return d;
}

class Importer {
  public:
    Importer(const uint8_t* data, size_t size, std::string origin)
        : mData(data), mSize(size), mOrigin(std::move(origin)) {}

    TfliteImport run() {
        parseModel();
        addGraphInputsAndOutputs();
        const auto* ops = mGraph->operators();
        for (uint32_t i = 0; ops && i < ops->size(); ++i) importOperator(i, *ops->Get(i));
        mOperator.clear();
        if (mStateTensors > 0)
            mResult.notes.push_back(
                std::to_string(mStateTensors) +
                " variable (state) tensor(s) of recurrent operators start at zero, as TFLite "
                "resets them: a run is one inference from the reset state, whose state after "
                "the run is not an output");
        mResult.model = mBuilder.build();
        return std::move(mResult);
    }

  private:
    template <typename... Parts>
    [[noreturn]] void fail(const Parts&... parts) const {
        std::ostringstream out;
        out << mOrigin << ": ";
        if (!mOperator.empty()) out << mOperator << ": ";
        (out << ... << parts);
        throw ImportError{out.str()};
    }

    // ---- file level --------------------------------------------------------------------

    void parseModel() {
        if (Status st = checkTfliteFile(mData, mSize, mOrigin); !st.ok())
            throw ImportError{st.message};
        mModel = tfl::GetModel(mData);
        const auto* subgraphs = mModel->subgraphs();
        if (subgraphs->size() > 1)
            mResult.notes.push_back(std::to_string(subgraphs->size() - 1) +
                                    " subgraph(s) besides subgraph 0 were not imported "
                                    "(only the main subgraph is converted)");
        mGraph = subgraphs->Get(0);
        mTensorCount = mGraph->tensors() ? mGraph->tensors()->size() : 0;
        mOperands.assign(mTensorCount, kNoOperand);
    }

    void addGraphInputsAndOutputs() {
        for (int32_t index : toVector(mGraph->inputs())) {
            checkTensorIndex(index, "subgraph input");
            if (constantData(index)) continue;  // constants are not NNAPI inputs
            if (mOperands[index] != kNoOperand)
                fail(tensorLabel(index), " is listed twice as input");
            const OperandDesc d = describe(index, Encoding::kAsTyped);
            mOperands[index] = mBuilder.addInput(d.type, d.dims, d.scale, d.zeroPoint);
            applyPerChannel(mOperands[index], d);
            mResult.inputNames.push_back(tensorName(index));
        }
        // Nothing to compute, nothing to compare: a run of it would pass vacuously.
        if (toVector(mGraph->outputs()).empty()) fail("subgraph 0 has no outputs");
        for (int32_t index : toVector(mGraph->outputs())) {
            checkTensorIndex(index, "subgraph output");
            if (mOperands[index] != kNoOperand)
                fail(tensorLabel(index),
                     " is both a subgraph input and an output (or listed twice)"
                     ", which an NNAPI model cannot express");
            if (constantData(index)) fail(tensorLabel(index), " is a constant subgraph output");
            const OperandDesc d = describe(index, Encoding::kAsTyped);
            mOperands[index] = mBuilder.addOutput(d.type, d.dims, d.scale, d.zeroPoint);
            applyPerChannel(mOperands[index], d);
            mResult.outputNames.push_back(tensorName(index));
        }
    }

    // ---- tensors -----------------------------------------------------------------------

    void checkTensorIndex(int32_t index, const std::string& what) const {
        if (index < 0 || static_cast<uint32_t>(index) >= mTensorCount)
            fail(what, " refers to tensor ", index, ", but subgraph 0 has ", mTensorCount,
                 " tensors");
    }

    const tfl::Tensor& tensor(int32_t index) const { return *mGraph->tensors()->Get(index); }

    std::string tensorName(int32_t index) const {
        const auto* name = tensor(index).name();
        return name ? name->str() : std::string();
    }

    std::string tensorLabel(int32_t index) const {
        const std::string name = tensorName(index);
        return "tensor " + std::to_string(index) + (name.empty() ? "" : " '" + name + "'");
    }

    std::vector<uint32_t> tensorDims(int32_t index) const {
        std::vector<uint32_t> dims;
        for (int32_t d : toVector(tensor(index).shape())) {
            // -1 is TFLite's unknown size; any other negative size is a broken file.
            if (d < -1) fail(tensorLabel(index), " has dimension ", d);
            dims.push_back(d < 0 ? 0 : d);
        }
        if (dims.empty()) dims.push_back(1);  // NNAPI has no rank-0 tensors; TFLite scalars are [1]
        return dims;
    }

    static uint32_t tfliteElementSize(tfl::TensorType type) {
        switch (type) {
            case tfl::TensorType::BOOL:
            case tfl::TensorType::UINT8:
            case tfl::TensorType::INT8:
                return 1;
            case tfl::TensorType::FLOAT16:
            case tfl::TensorType::INT16:
            case tfl::TensorType::UINT16:
                return 2;
            case tfl::TensorType::FLOAT32:
            case tfl::TensorType::INT32:
            case tfl::TensorType::UINT32:
                return 4;
            case tfl::TensorType::INT64:
            case tfl::TensorType::UINT64:
            case tfl::TensorType::FLOAT64:
            case tfl::TensorType::COMPLEX64:
                return 8;
            case tfl::TensorType::COMPLEX128:
                return 16;
            default:
                return 0;
        }
    }

    /// The tensor's constant data, or nothing when it is computed or fed at run time.
    std::optional<Bytes> constantData(int32_t index) const {
        const tfl::Tensor& t = tensor(index);
        const uint32_t b = t.buffer();
        if (b == 0) return std::nullopt;  // the empty sentinel buffer
        const auto* buffers = mModel->buffers();
        if (!buffers || b >= buffers->size())
            fail(tensorLabel(index), " refers to buffer ", b, ", but the model has ",
                 buffers ? buffers->size() : 0, " buffers");
        const tfl::Buffer& buffer = *buffers->Get(b);
        Bytes bytes;
        if (buffer.offset() > 1) {  // data stored after the flatbuffer (models above 2 GB)
            if (buffer.offset() > mSize || buffer.size() > mSize - buffer.offset())
                fail(tensorLabel(index), ": buffer ", b, " lies outside the file");
            if (buffer.offset() < flatbufferEnd())
                fail(tensorLabel(index), ": buffer ", b, " at offset ", buffer.offset(),
                     " points into the model's own flatbuffer (which reaches byte ",
                     flatbufferEnd(), "), not at data after it");
            bytes = {mData + buffer.offset(), static_cast<size_t>(buffer.size())};
        } else if (buffer.data()) {
            bytes = {buffer.data()->data(), buffer.data()->size()};
        }
        if (bytes.size == 0) return std::nullopt;
        const uint64_t expected = elementCount(tensorDims(index)) * tfliteElementSize(t.type());
        if (expected != bytes.size)
            fail(tensorLabel(index), " has ", bytes.size, " bytes of data, expected ", expected,
                 " for ", tensorTypeName(t.type()), " ", toString(tensorDims(index)));
        return bytes;
    }

    bool isConstant(int32_t index) const { return constantData(index).has_value(); }

    OperandDesc describe(int32_t index, Encoding encoding) const {
        const tfl::Tensor& t = tensor(index);
        if (t.sparsity()) fail(tensorLabel(index), " is sparse (needs DENSIFY, not mapped)");
        const auto* q = t.quantization();
        if (q && q->details_type() != tfl::QuantizationDetails::NONE)
            fail(tensorLabel(index), " uses custom quantization, which NNAPI cannot represent");
        const std::vector<float> scales = q ? toVector(q->scale()) : std::vector<float>{};
        const std::vector<int64_t> zeroPoints =
            q ? toVector(q->zero_point()) : std::vector<int64_t>{};
        OperandDesc d;
        d.dims = tensorDims(index);
        auto perTensor = [&](bool defaultScaleOne) {
            if (scales.size() > 1)
                fail(tensorLabel(index), " of type ", tensorTypeName(t.type()), " has ",
                     scales.size(), " per-channel scales; NNAPI quantizes only int8 per channel");
            d.scale = scales.empty() ? 0.0f : scales[0];
            if (!zeroPoints.empty() && (zeroPoints[0] < std::numeric_limits<int32_t>::min() ||
                                        zeroPoints[0] > std::numeric_limits<int32_t>::max()))
                fail(tensorLabel(index), " has zero point ", zeroPoints[0],
                     ", outside any NNAPI operand's range");
            d.zeroPoint = zeroPoints.empty() ? 0 : static_cast<int32_t>(zeroPoints[0]);
            // Quantized NNAPI tensors must have a positive scale; the delegate uses 1.
            if (defaultScaleOne && d.scale == 0.0f) d.scale = 1.0f;
        };
        switch (t.type()) {
            case tfl::TensorType::FLOAT32:
                d.type = OperandType::TENSOR_FLOAT32;
                break;
            case tfl::TensorType::FLOAT16:
                d.type = OperandType::TENSOR_FLOAT16;
                break;
            case tfl::TensorType::BOOL:
                d.type = OperandType::TENSOR_BOOL8;
                break;
            case tfl::TensorType::INT32:
                d.type = OperandType::TENSOR_INT32;
                // A per-channel bias has no single scale: NNAPI wants 0 and derives it.
                if (scales.size() == 1) perTensor(false);
                break;
            case tfl::TensorType::UINT8:
                d.type = OperandType::TENSOR_QUANT8_ASYMM;
                perTensor(true);
                if (encoding == Encoding::kLegacyHybrid) {  // the delegate reads them as int8
                    d.type = OperandType::TENSOR_QUANT8_SYMM;
                    d.zeroPoint = 0;
                }
                break;
            case tfl::TensorType::INT16:
                d.type = OperandType::TENSOR_QUANT16_SYMM;
                perTensor(true);
                break;
            case tfl::TensorType::INT8:
                if (scales.size() > 1 ||
                    (encoding == Encoding::kPerChannel && scales.size() == 1)) {
                    d.type = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
                    d.perChannel = perChannelParams(index, scales, zeroPoints,
                                                    q->quantized_dimension(), d.dims);
                } else {
                    d.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
                    perTensor(true);
                }
                break;
            default:
                fail(tensorLabel(index), " has type ", tensorTypeName(t.type()),
                     ", which NNAPI cannot represent");
        }
        return d;
    }

    SymmPerChannelQuantParams perChannelParams(int32_t index, const std::vector<float>& scales,
                                               const std::vector<int64_t>& zeroPoints, int32_t dim,
                                               const std::vector<uint32_t>& dims) const {
        if (dim < 0 || static_cast<size_t>(dim) >= dims.size())
            fail(tensorLabel(index), " is quantized along dimension ", dim, " of a rank-",
                 dims.size(), " tensor");
        for (int64_t zp : zeroPoints)
            if (zp != 0)
                fail(tensorLabel(index), " is per-channel quantized with zero point ", zp,
                     "; NNAPI per-channel quantization is symmetric (zero point 0)");
        SymmPerChannelQuantParams p{scales, static_cast<uint32_t>(dim)};
        // One scale forced per channel (TRANSPOSE_CONV filters) applies to every channel.
        if (p.scales.size() == 1) p.scales.assign(dims[dim], scales[0]);
        if (p.scales.size() != dims[dim])
            fail(tensorLabel(index), " has ", scales.size(), " per-channel scales for ", dims[dim],
                 " channels");
        return p;
    }

    void applyPerChannel(uint32_t operand, const OperandDesc& d) {
        if (d.perChannel)
            mBuilder.setPerChannelQuant(operand, d.perChannel->scales, d.perChannel->channelDim);
    }

    uint32_t addConstant(const OperandDesc& d, const void* data, size_t size) {
        const uint32_t id =
            size <= kMaxCopiedConstantBytes
                ? mBuilder.addConstantBytes(d.type, d.dims, data, size, d.scale, d.zeroPoint)
                : mBuilder.addReferenceBytes(d.type, d.dims, data, size, d.scale, d.zeroPoint);
        applyPerChannel(id, d);
        return id;
    }

    /// The NNAPI operand standing for a TFLite tensor, created on first use.
    uint32_t operandOf(int32_t index, Encoding encoding = Encoding::kAsTyped) {
        if (mOperands[index] != kNoOperand) return mOperands[index];
        if (tensor(index).is_variable())
            fail(tensorLabel(index), " is a variable (state) tensor, which is not mapped");
        const OperandDesc d = describe(index, encoding);
        if (auto bytes = constantData(index)) {
            mOperands[index] = addConstant(d, bytes->data, bytes->size);
        } else {
            mOperands[index] = mBuilder.addOperand(d.type, d.dims, d.scale, d.zeroPoint);
            applyPerChannel(mOperands[index], d);
        }
        return mOperands[index];
    }

    const Operand& operand(uint32_t id) { return mBuilder.model().main.operands[id]; }

    /// A recurrent operator's state input k. TFLite keeps the state in a variable tensor, which
    /// it resets to zero; a model run from that state reads a zero constant. (TFLite's NNAPI
    /// delegate feeds the variable tensor's current contents as an extra model input instead,
    /// which for the first inference are these zeros.)
    uint32_t stateInput(size_t k) {
        const int32_t index = inTensor(k);
        if (!tensor(index).is_variable()) return in(k);
        if (mOperands[index] != kNoOperand) return mOperands[index];
        const OperandDesc d = describe(index, Encoding::kAsTyped);
        const std::vector<uint8_t> zeros(byteSize(d.type, d.dims), 0);
        mOperands[index] = addConstant(d, zeros.data(), zeros.size());
        ++mStateTensors;
        return mOperands[index];
    }

    /// Recurrent operators NNAPI has only in float: fails naming the types when the operator is
    /// integer (its int8 form) or hybrid (float activations, quantized weights).
    void expectFloatRecurrent(const char* nnapiName, size_t weights, size_t state,
                              const char* stateName) const {
        auto typeOf = [&](size_t k) {
            return has(k) ? tensorTypeName(tensor(inTensor(k)).type()) : std::string("none");
        };
        const tfl::TensorType input = tensor(inTensor(0)).type();
        const bool floatInput =
            input == tfl::TensorType::FLOAT32 || input == tfl::TensorType::FLOAT16;
        const std::string types = "(here input " + typeOf(0) + ", weights " + typeOf(weights) +
                                  ", " + stateName + " " + typeOf(state) + ")";
        if (!floatInput)
            fail("the integer (", tensorTypeName(input), ") form has no NNAPI equivalent: NNAPI's ",
                 nnapiName, " takes only float32 or float16 tensors ", types);
        if (tensor(inTensor(weights)).type() != input)
            fail(
                "the hybrid form (float input, quantized weights) has no NNAPI equivalent: "
                "NNAPI's ",
                nnapiName, " takes weights of the input's float type ", types);
    }

    // ---- operators ---------------------------------------------------------------------

    void importOperator(uint32_t index, const tfl::Operator& op) {
        const auto* codes = mModel->operator_codes();
        mOperator = "operator " + std::to_string(index);
        if (!codes || op.opcode_index() >= codes->size())
            fail("opcode index ", op.opcode_index(), " is out of range (",
                 codes ? codes->size() : 0, " operator codes)");
        const tfl::OperatorCode& code = *codes->Get(op.opcode_index());
        // Files from before operator codes above 127 only fill the byte-sized field.
        mCode = std::max(code.builtin_code(),
                         static_cast<BuiltinOperator>(code.deprecated_builtin_code()));
        mOperator += " (" + operatorName(mCode) + ")";
        if (mCode == BuiltinOperator::CUSTOM) {
            const std::string name = code.custom_code() ? code.custom_code()->str() : "";
            mOperator = "operator " + std::to_string(index) + " (CUSTOM '" + name + "')";
            fail("custom operators have no NNAPI mapping");
        }
        mOp = &op;
        mInputs = toVector(op.inputs());
        mOutputs = toVector(op.outputs());
        for (size_t i = 0; i < mInputs.size(); ++i)
            if (mInputs[i] != -1) checkTensorIndex(mInputs[i], "input " + std::to_string(i));
        for (size_t i = 0; i < mOutputs.size(); ++i)
            checkTensorIndex(mOutputs[i], "output " + std::to_string(i));
        mapOperator();
    }

    // Operator helpers: inputs/outputs of the current operator by position.
    bool has(size_t k) const { return k < mInputs.size() && mInputs[k] != -1; }
    int32_t inTensor(size_t k) const {
        if (!has(k)) fail("input ", k, " is missing");
        return mInputs[k];
    }
    uint32_t in(size_t k) { return operandOf(inTensor(k)); }
    uint32_t out(size_t k) {
        if (k >= mOutputs.size()) fail("output ", k, " is missing");
        return operandOf(mOutputs[k]);
    }
    void expectCounts(size_t minInputs, size_t maxInputs, size_t outputs) const {
        if (mInputs.size() < minInputs || mInputs.size() > maxInputs)
            fail("has ", mInputs.size(), " inputs, expected ", minInputs,
                 minInputs == maxInputs ? "" : " to " + std::to_string(maxInputs));
        if (mOutputs.size() != outputs)
            fail("has ", mOutputs.size(), " outputs, expected ", outputs);
    }
    void emit(OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
        mBuilder.addOperation(type, std::move(inputs), std::move(outputs));
    }

    template <typename Table>
    typename Table::NativeTableType options() const {
        typename Table::NativeTableType native;
        if (mOp->builtin_options_type() == tfl::BuiltinOptions::NONE) return native;
        const auto* table = mOp->builtin_options_as<Table>();
        if (!table)
            fail("carries builtin options of union type ",
                 static_cast<int>(mOp->builtin_options_type()), ", which does not fit it");
        table->UnPackTo(&native);
        return native;
    }

    int32_t fusedActivation(tfl::ActivationFunctionType act) const {
        switch (act) {
            case tfl::ActivationFunctionType::NONE:
                return 0;
            case tfl::ActivationFunctionType::RELU:
                return 1;
            case tfl::ActivationFunctionType::RELU_N1_TO_1:
                return 2;
            case tfl::ActivationFunctionType::RELU6:
                return 3;
            default:
                fail("fused activation ", tfl::EnumNameActivationFunctionType(act),
                     " has no NNAPI equivalent");
        }
    }
    void expectNoActivation(tfl::ActivationFunctionType act) const {
        if (act != tfl::ActivationFunctionType::NONE)
            fail("fused activation ", tfl::EnumNameActivationFunctionType(act),
                 " is not supported on this operator by NNAPI");
    }
    int32_t padding(tfl::Padding p) const {
        if (p == tfl::Padding::VALID) return kPaddingValid;
        if (p == tfl::Padding::SAME) return kPaddingSame;
        fail("padding ", static_cast<int>(p), " is neither SAME nor VALID");
    }

    /// Where the flatbuffer's own tables and inline data end (a bound from below: the furthest
    /// byte of the buffers, tensors and operators it holds). Data stored by offset lies beyond.
    uint64_t flatbufferEnd() const {
        if (mFlatbufferEnd) return *mFlatbufferEnd;
        const auto at = [&](const void* p) {
            return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - mData);
        };
        uint64_t end = 8;  // root offset and file identifier
        if (const auto* buffers = mModel->buffers()) {
            for (const tfl::Buffer* buffer : *buffers) {
                end = std::max(end, at(buffer));
                if (buffer->data())
                    end = std::max(end, at(buffer->data()->data()) + buffer->data()->size());
            }
        }
        if (mGraph->tensors())
            for (const tfl::Tensor* t : *mGraph->tensors()) end = std::max(end, at(t));
        if (mGraph->operators())
            for (const tfl::Operator* o : *mGraph->operators()) end = std::max(end, at(o));
        mFlatbufferEnd = end;
        return end;
    }

    uint32_t int32Scalar(int32_t v) { return mBuilder.addInt32(v); }
    uint32_t boolScalar(bool v) { return mBuilder.addBool(v); }
    /// FLOAT16 next to float16 tensors, FLOAT32 otherwise (NNAPI's rule for float parameters).
    uint32_t floatScalar(float v, uint32_t like) {
        if (operand(like).type != OperandType::TENSOR_FLOAT16) return mBuilder.addFloat32(v);
        const uint16_t half = Eigen::numext::bit_cast<uint16_t>(Eigen::half(v));
        return mBuilder.addConstantBytes(OperandType::FLOAT16, {}, &half, sizeof(half));
    }
    uint32_t int32Vector(const std::vector<int32_t>& values) {
        OperandDesc d =
            plainDesc(OperandType::TENSOR_INT32, {static_cast<uint32_t>(values.size())});
        return addConstant(d, values.data(), values.size() * sizeof(int32_t));
    }

    /// Values of a constant int32 or int64 tensor (int64 must fit in int32).
    std::vector<int32_t> constInts(size_t k, const char* what) const {
        const int32_t index = inTensor(k);
        const auto bytes = constantData(index);
        if (!bytes) fail("input ", k, " (", what, ") must be constant for NNAPI");
        const tfl::TensorType type = tensor(index).type();
        std::vector<int32_t> values;
        if (type == tfl::TensorType::INT32) {
            values.resize(bytes->size / 4);
            std::memcpy(values.data(), bytes->data, bytes->size);
        } else if (type == tfl::TensorType::INT64) {
            std::vector<int64_t> wide(bytes->size / 8);
            std::memcpy(wide.data(), bytes->data, bytes->size);
            for (int64_t v : wide) {
                if (v < std::numeric_limits<int32_t>::min() ||
                    v > std::numeric_limits<int32_t>::max())
                    fail("input ", k, " (", what, ") value ", v, " does not fit in int32");
                values.push_back(static_cast<int32_t>(v));
            }
        } else {
            fail("input ", k, " (", what, ") has type ", tensorTypeName(type),
                 ", expected INT32 or INT64");
        }
        return values;
    }
    int32_t constInt(size_t k, const char* what) const {
        const auto values = constInts(k, what);
        if (values.size() != 1) fail("input ", k, " (", what, ") must hold one value");
        return values[0];
    }
    /// An index-like TENSOR_INT32 operand; a constant int64 tensor is narrowed to int32.
    uint32_t int32TensorInput(size_t k, const char* what) {
        const int32_t index = inTensor(k);
        if (tensor(index).type() != tfl::TensorType::INT64) return in(k);
        const auto values = constInts(k, what);
        OperandDesc d = plainDesc(OperandType::TENSOR_INT32, tensorDims(index));
        return addConstant(d, values.data(), values.size() * sizeof(int32_t));
    }

    bool isQuant8(uint32_t id) {
        const OperandType t = operand(id).type;
        return t == OperandType::TENSOR_QUANT8_ASYMM ||
               t == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
               t == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    }

    /// NNAPI requires a bias; TFLite may omit it. Zeros with the scale NNAPI expects.
    uint32_t zeroBias(uint32_t input, uint32_t filter, uint32_t count) {
        // One bias per output channel; a hostile shape must not size the allocation.
        constexpr uint32_t kMaxChannels = 1u << 24;
        if (count > kMaxChannels)
            fail("the filter declares ", count, " output channels (at most ", kMaxChannels, ")");
        const Operand& x = operand(input);
        const Operand& w = operand(filter);
        OperandDesc d = plainDesc(x.type, {count});
        if (isQuant8(input)) {
            d.type = OperandType::TENSOR_INT32;
            d.scale =
                w.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ? 0.0f : x.scale * w.scale;
        }
        const std::vector<uint8_t> zeros(count * elementSize(d.type), 0);
        return addConstant(d, zeros.data(), zeros.size());
    }

    bool isHybrid(uint32_t input, uint32_t weights) {
        return operand(input).type == OperandType::TENSOR_FLOAT32 &&
               (isQuant8(weights) || operand(weights).type == OperandType::TENSOR_QUANT8_SYMM);
    }

    /// Weights (or bias) input k of an operator whose data input is `input`. Hybrid operators
    /// (float input, quantized weights) get their weights through a DEQUANTIZE, as the delegate
    /// inserts it.
    uint32_t weightsInput(size_t k, uint32_t input) {
        const bool floatInput = operand(input).type == OperandType::TENSOR_FLOAT32;
        const int32_t index = inTensor(k);
        const uint32_t weights = floatInput && tensor(index).type() == tfl::TensorType::UINT8
                                     ? operandOf(index, Encoding::kLegacyHybrid)
                                     : operandOf(index);
        if (!isHybrid(input, weights)) return weights;
        auto it = mDequantized.find(weights);
        if (it != mDequantized.end()) return it->second;
        const uint32_t f =
            mBuilder.addOperand(OperandType::TENSOR_FLOAT32, operand(weights).dimensions);
        emit(OperationType::DEQUANTIZE, {weights}, {f});
        return mDequantized[weights] = f;
    }

    void mapOperator();
    void mapConv2D();
    void mapDepthwiseConv2D();
    void mapFullyConnected();
    void mapTransposeConv();
    void mapPool(OperationType type);
    void mapReshape();
    void mapPad();
    void mapResize(bool bilinear);
    void mapStridedSlice();
    void mapDequantize();
    void mapLeakyRelu();
    void mapSvdf();
    void mapUnidirectionalSequenceLstm();
    void mapElementwise(OperationType type, tfl::ActivationFunctionType act);
    void mapSimple(OperationType type, size_t inputs, size_t outputs = 1);

    const uint8_t* mData;
    size_t mSize;
    mutable std::optional<uint64_t> mFlatbufferEnd;
    std::string mOrigin;
    const tfl::Model* mModel = nullptr;
    const tfl::SubGraph* mGraph = nullptr;
    uint32_t mTensorCount = 0;
    std::vector<uint32_t> mOperands;            // TFLite tensor -> NNAPI operand
    std::map<uint32_t, uint32_t> mDequantized;  // quantized weights -> their float copy
    uint32_t mStateTensors = 0;                 // variable tensors read as zero constants
    ModelBuilder mBuilder;
    TfliteImport mResult;

    // The operator being converted.
    std::string mOperator;
    BuiltinOperator mCode = BuiltinOperator::ADD;
    const tfl::Operator* mOp = nullptr;
    std::vector<int32_t> mInputs;
    std::vector<int32_t> mOutputs;
};

}  // namespace nncosim::tflite_import
