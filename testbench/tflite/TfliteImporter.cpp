#include "testbench/tflite/TfliteImporter.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "model/Builder.h"
#include "testbench/tflite/tflite_schema_generated.h"

namespace nncosim {
namespace {

namespace tfl = nncosim::tflite;
using tfl::BuiltinOperator;

/// ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES: larger constants are referenced.
constexpr size_t kMaxCopiedConstantBytes = 128;
constexpr uint32_t kNoOperand = std::numeric_limits<uint32_t>::max();
constexpr int32_t kPaddingSame = 1;  // NNAPI's implicit padding schemes
constexpr int32_t kPaddingValid = 2;

/// Thrown inside the importer and turned into an INVALID_ARGUMENT Status at the top.
struct ImportError {
    std::string message;
};

std::string operatorName(BuiltinOperator code) {
    const char* name = tfl::EnumNameBuiltinOperator(code);
    if (name && *name) return name;
    return "BUILTIN_" + std::to_string(static_cast<int32_t>(code));
}

std::string tensorTypeName(tfl::TensorType type) {
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

OperandDesc plainDesc(OperandType type, std::vector<uint32_t> dims) {
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

void Importer::mapConv2D() {
    expectCounts(2, 3, 1);
    const auto o = options<tfl::Conv2DOptions>();
    const uint32_t x = in(0);
    const uint32_t w = weightsInput(1, x);
    const uint32_t b = has(2) ? weightsInput(2, x) : zeroBias(x, w, operand(w).dimensions.at(0));
    std::vector<uint32_t> ins{x,
                              w,
                              b,
                              int32Scalar(padding(o.padding)),
                              int32Scalar(o.stride_w),
                              int32Scalar(o.stride_h),
                              int32Scalar(fusedActivation(o.fused_activation_function))};
    if (o.dilation_w_factor != 1 || o.dilation_h_factor != 1) {
        ins.push_back(boolScalar(false));  // NHWC
        ins.push_back(int32Scalar(o.dilation_w_factor));
        ins.push_back(int32Scalar(o.dilation_h_factor));
    }
    emit(OperationType::CONV_2D, ins, {out(0)});
}

void Importer::mapDepthwiseConv2D() {
    expectCounts(2, 3, 1);
    const auto o = options<tfl::DepthwiseConv2DOptions>();
    const uint32_t x = in(0);
    const uint32_t w = in(1);
    const auto& xDims = operand(x).dimensions;
    const auto& wDims = operand(w).dimensions;
    // Newer converters leave depth_multiplier unset; the shapes define it.
    int32_t multiplier = o.depth_multiplier;
    if (xDims.size() == 4 && wDims.size() == 4 && xDims[3] > 0 && wDims[3] % xDims[3] == 0)
        multiplier = static_cast<int32_t>(wDims[3] / xDims[3]);
    const uint32_t b = has(2) ? in(2) : zeroBias(x, w, wDims.at(wDims.size() - 1));
    std::vector<uint32_t> ins{x,
                              w,
                              b,
                              int32Scalar(padding(o.padding)),
                              int32Scalar(o.stride_w),
                              int32Scalar(o.stride_h),
                              int32Scalar(multiplier),
                              int32Scalar(fusedActivation(o.fused_activation_function))};
    if (o.dilation_w_factor != 1 || o.dilation_h_factor != 1) {
        ins.push_back(boolScalar(false));  // NHWC
        ins.push_back(int32Scalar(o.dilation_w_factor));
        ins.push_back(int32Scalar(o.dilation_h_factor));
    }
    emit(OperationType::DEPTHWISE_CONV_2D, ins, {out(0)});
}

void Importer::mapFullyConnected() {
    expectCounts(2, 3, 1);
    const auto o = options<tfl::FullyConnectedOptions>();
    if (o.weights_format != tfl::FullyConnectedOptionsWeightsFormat::DEFAULT)
        fail("shuffled weights (",
             tfl::EnumNameFullyConnectedOptionsWeightsFormat(o.weights_format),
             ") have no NNAPI form");
    const uint32_t x = in(0);
    const uint32_t w = weightsInput(1, x);
    if (operand(w).type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL)
        fail("per-channel quantized weights have no NNAPI FULLY_CONNECTED form");
    const uint32_t b = has(2) ? weightsInput(2, x) : zeroBias(x, w, operand(w).dimensions.at(0));
    const std::vector<uint32_t> ins{x, w, b,
                                    int32Scalar(fusedActivation(o.fused_activation_function))};
    if (!o.keep_num_dims) {
        emit(OperationType::FULLY_CONNECTED, ins, {out(0)});
        return;
    }
    // NNAPI's output is [batch, units]; a RESHAPE restores TFLite's kept leading dimensions.
    const uint32_t y = out(0);
    const Operand result = operand(y);
    const uint32_t units = result.dimensions.back();
    if (units == 0) fail("keep_num_dims needs a known number of units");
    const uint32_t flat = mBuilder.addOperand(
        result.type, {static_cast<uint32_t>(elementCount(result.dimensions) / units), units},
        result.scale, result.zeroPoint);
    emit(OperationType::FULLY_CONNECTED, ins, {flat});
    std::vector<int32_t> shape(result.dimensions.begin(), result.dimensions.end());
    emit(OperationType::RESHAPE, {flat, int32Vector(shape)}, {y});
}

void Importer::mapTransposeConv() {
    // TFLite order: output shape, filter, input, optional bias.
    expectCounts(3, 4, 1);
    const auto o = options<tfl::TransposeConvOptions>();
    const uint32_t x = in(2);
    // The delegate always quantizes int8 TRANSPOSE_CONV filters per channel.
    const uint32_t w = operandOf(inTensor(1), Encoding::kPerChannel);
    const uint32_t b = has(3) ? in(3) : zeroBias(x, w, operand(w).dimensions.at(0));
    emit(OperationType::TRANSPOSE_CONV_2D,
         {x, w, b, int32TensorInput(0, "output shape"), int32Scalar(padding(o.padding)),
          int32Scalar(o.stride_w), int32Scalar(o.stride_h),
          int32Scalar(fusedActivation(o.fused_activation_function)), boolScalar(false)},
         {out(0)});
}

void Importer::mapPool(OperationType type) {
    expectCounts(1, 1, 1);
    const auto o = options<tfl::Pool2DOptions>();
    emit(type,
         {in(0), int32Scalar(padding(o.padding)), int32Scalar(o.stride_w), int32Scalar(o.stride_h),
          int32Scalar(o.filter_width), int32Scalar(o.filter_height),
          int32Scalar(fusedActivation(o.fused_activation_function))},
         {out(0)});
}

void Importer::mapReshape() {
    expectCounts(1, 2, 1);
    const uint32_t x = in(0);
    uint32_t shape;
    if (has(1)) {
        shape = int32TensorInput(1, "shape");
    } else {
        const auto o = options<tfl::ReshapeOptions>();
        std::vector<int32_t> dims = o.new_shape;
        if (dims.empty()) {  // no shape given: the output tensor's own
            const auto& outDims = tensorDims(mOutputs[0]);
            dims.assign(outDims.begin(), outDims.end());
        }
        shape = int32Vector(dims);
    }
    emit(OperationType::RESHAPE, {x, shape}, {out(0)});
}

void Importer::mapPad() {
    expectCounts(2, 3, 1);
    const uint32_t x = in(0);
    const uint32_t paddings = int32TensorInput(1, "paddings");
    if (!has(2)) {
        emit(OperationType::PAD, {x, paddings}, {out(0)});
        return;
    }
    // PAD_V2's pad value is a scalar: a float for float tensors, the raw quantized value else.
    const int32_t valueTensor = inTensor(2);
    const auto bytes = constantData(valueTensor);
    if (!bytes) fail("input 2 (pad value) must be constant for NNAPI");
    uint32_t value;
    switch (tensor(valueTensor).type()) {
        case tfl::TensorType::FLOAT32: {
            float v;
            std::memcpy(&v, bytes->data, sizeof(v));
            value = floatScalar(v, x);
            break;
        }
        case tfl::TensorType::FLOAT16: {
            uint16_t bits;
            std::memcpy(&bits, bytes->data, sizeof(bits));
            value = floatScalar(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits)), x);
            break;
        }
        case tfl::TensorType::UINT8:
            value = int32Scalar(bytes->data[0]);
            break;
        case tfl::TensorType::INT8:
            value = int32Scalar(static_cast<int8_t>(bytes->data[0]));
            break;
        default:
            fail("pad value of type ", tensorTypeName(tensor(valueTensor).type()),
                 " is not supported");
    }
    emit(OperationType::PAD_V2, {x, paddings, value}, {out(0)});
}

void Importer::mapResize(bool bilinear) {
    expectCounts(2, 2, 1);
    const uint32_t x = in(0);
    const uint32_t y = out(0);
    const auto& outDims = operand(y).dimensions;
    if (outDims.size() != 4) fail("output must have rank 4 (NHWC)");
    int32_t height = static_cast<int32_t>(outDims[1]);
    int32_t width = static_cast<int32_t>(outDims[2]);
    if (isConstant(inTensor(1))) {  // the size input [height, width] when known
        const auto size = constInts(1, "size");
        if (size.size() != 2) fail("input 1 (size) must hold [height, width]");
        height = size[0];
        width = size[1];
    }
    bool alignCorners = false;
    bool halfPixelCenters = false;
    if (bilinear) {
        const auto o = options<tfl::ResizeBilinearOptions>();
        alignCorners = o.align_corners;
        halfPixelCenters = o.half_pixel_centers;
    } else {
        const auto o = options<tfl::ResizeNearestNeighborOptions>();
        alignCorners = o.align_corners;
        halfPixelCenters = o.half_pixel_centers;
    }
    std::vector<uint32_t> ins{x, int32Scalar(width), int32Scalar(height)};
    // RESIZE_NEAREST_NEIGHBOR always carries the layout flag (it arrived with NNAPI 1.2).
    if (!bilinear || alignCorners || halfPixelCenters) ins.push_back(boolScalar(false));
    if (alignCorners || halfPixelCenters) {
        ins.push_back(boolScalar(alignCorners));
        ins.push_back(boolScalar(halfPixelCenters));
    }
    emit(bilinear ? OperationType::RESIZE_BILINEAR : OperationType::RESIZE_NEAREST_NEIGHBOR, ins,
         {y});
}

void Importer::mapStridedSlice() {
    expectCounts(4, 4, 1);
    const auto o = options<tfl::StridedSliceOptions>();
    if (o.ellipsis_mask != 0 || o.new_axis_mask != 0)
        fail("ellipsis_mask and new_axis_mask have no NNAPI equivalent");
    if (o.offset) fail("offset=true (end relative to begin) has no NNAPI equivalent");
    emit(OperationType::STRIDED_SLICE,
         {in(0), int32TensorInput(1, "begin"), int32TensorInput(2, "end"),
          int32TensorInput(3, "strides"), int32Scalar(o.begin_mask), int32Scalar(o.end_mask),
          int32Scalar(o.shrink_axis_mask)},
         {out(0)});
}

void Importer::mapDequantize() {
    expectCounts(1, 1, 1);
    const int32_t source = inTensor(0);
    if (tensor(source).type() != tfl::TensorType::FLOAT16) {
        emit(OperationType::DEQUANTIZE, {in(0)}, {out(0)});
        return;
    }
    const auto bytes = constantData(source);
    if (!bytes) {  // float16 activations: a type conversion
        emit(OperationType::CAST, {in(0)}, {out(0)});
        return;
    }
    // float16 weights: converted to a float32 constant, as the delegate does.
    const int32_t target = mOutputs[0];
    if (mOperands[target] != kNoOperand)
        fail("a dequantized float16 constant cannot be a subgraph output");
    std::vector<float> values(bytes->size / 2);
    for (size_t i = 0; i < values.size(); ++i) {
        uint16_t bits;
        std::memcpy(&bits, bytes->data + 2 * i, sizeof(bits));
        values[i] = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
    }
    OperandDesc d = plainDesc(OperandType::TENSOR_FLOAT32, tensorDims(source));
    mOperands[target] = addConstant(d, values.data(), values.size() * sizeof(float));
}

void Importer::mapLeakyRelu() {
    expectCounts(1, 1, 1);
    const float alpha = options<tfl::LeakyReluOptions>().alpha;
    const uint32_t x = in(0);
    const Operand& input = operand(x);
    OperandDesc d = plainDesc(input.type, {1});
    uint32_t slope;
    switch (input.type) {
        case OperandType::TENSOR_FLOAT32:
            slope = addConstant(d, &alpha, sizeof(alpha));
            break;
        case OperandType::TENSOR_FLOAT16: {
            const uint16_t half = Eigen::numext::bit_cast<uint16_t>(Eigen::half(alpha));
            slope = addConstant(d, &half, sizeof(half));
            break;
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: {
            // The delegate's encoding: the value 1 with scale alpha.
            if (!(alpha > 0.0f)) fail("quantized LEAKY_RELU needs a positive alpha, got ", alpha);
            d.scale = alpha;
            const uint8_t one = 1;
            slope = addConstant(d, &one, sizeof(one));
            break;
        }
        default:
            fail("input type ", nameOf(input.type), " is not supported");
    }
    emit(OperationType::PRELU, {x, slope}, {out(0)});
}

// TFLite's SVDF (input, weights_feature, weights_time, bias, state) is NNAPI's SVDF with the
// rank and activation as scalars; NNAPI's first output is the state after the step (a
// temporary here: nothing reads it), as the delegate maps it.
void Importer::mapSvdf() {
    expectCounts(5, 5, 1);
    expectFloatRecurrent("SVDF", 1, 4, "state");
    const auto o = options<tfl::SVDFOptions>();
    if (o.rank <= 0) fail("rank ", o.rank, " must be positive");
    const uint32_t x = in(0);
    const uint32_t featureWeights = in(1);
    const uint32_t timeWeights = in(2);
    const uint32_t bias = has(3) ? in(3) : mBuilder.addNoValue(operand(x).type);
    const uint32_t state = stateInput(4);
    const OperandType stateType = operand(state).type;
    const std::vector<uint32_t> stateDims = operand(state).dimensions;
    const uint32_t stateOut = mBuilder.addOperand(stateType, stateDims);
    emit(OperationType::SVDF,
         {x, featureWeights, timeWeights, bias, state, int32Scalar(o.rank),
          int32Scalar(fusedActivation(o.fused_activation_function))},
         {stateOut, out(0)});
}

// TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM (20 inputs, or 24 with layer normalization) is NNAPI's
// with the same 18 tensors first, the output and cell state (TFLite's variable tensors 18 and
// 19), the activation, cell clip, projection clip and time-major scalars, then the four layer
// normalization weights (omitted without them), as the delegate maps it.
void Importer::mapUnidirectionalSequenceLstm() {
    if (mInputs.size() != 20 && mInputs.size() != 24)
        fail("has ", mInputs.size(), " inputs, expected 20 or 24 (with layer normalization)");
    if (mOutputs.size() != 1) fail("has ", mOutputs.size(), " outputs, expected 1");
    expectFloatRecurrent("UNIDIRECTIONAL_SEQUENCE_LSTM", 2, 19, "cell state");
    const auto o = options<tfl::UnidirectionalSequenceLSTMOptions>();
    if (o.diagonal_recurrent_tensors) fail("diagonal recurrent weights have no NNAPI equivalent");
    // NNAPI's LSTM activations: 0 none, 1 RELU, 3 RELU6, 4 tanh (TFLite's codes are the same).
    const auto act = o.fused_activation_function;
    if (act != tfl::ActivationFunctionType::NONE && act != tfl::ActivationFunctionType::RELU &&
        act != tfl::ActivationFunctionType::RELU6 && act != tfl::ActivationFunctionType::TANH)
        fail("activation ", tfl::EnumNameActivationFunctionType(act),
             " is not an NNAPI LSTM activation");
    const uint32_t x = in(0);
    const OperandType t = operand(x).type;
    auto tensorOrNone = [&](size_t k) { return has(k) ? in(k) : mBuilder.addNoValue(t); };
    std::vector<uint32_t> ins{x};
    for (size_t k = 1; k < 18; ++k) ins.push_back(tensorOrNone(k));
    ins.push_back(stateInput(18));  // output state
    ins.push_back(stateInput(19));  // cell state
    ins.push_back(int32Scalar(static_cast<int32_t>(act)));
    ins.push_back(floatScalar(o.cell_clip, x));
    ins.push_back(floatScalar(o.proj_clip, x));
    ins.push_back(boolScalar(o.time_major));
    for (size_t k = 20; k < 24; ++k) ins.push_back(tensorOrNone(k));
    emit(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, {out(0)});
}

void Importer::mapElementwise(OperationType type, tfl::ActivationFunctionType act) {
    expectCounts(2, 2, 1);
    emit(type, {in(0), in(1), int32Scalar(fusedActivation(act))}, {out(0)});
}

void Importer::mapSimple(OperationType type, size_t inputs, size_t outputs) {
    expectCounts(inputs, inputs, outputs);
    std::vector<uint32_t> ins, outs;
    for (size_t k = 0; k < inputs; ++k) ins.push_back(in(k));
    for (size_t k = 0; k < outputs; ++k) outs.push_back(out(k));
    emit(type, ins, outs);
}

void Importer::mapOperator() {
    using Op = OperationType;
    switch (mCode) {
        case BuiltinOperator::CONV_2D:
            return mapConv2D();
        case BuiltinOperator::DEPTHWISE_CONV_2D:
            return mapDepthwiseConv2D();
        case BuiltinOperator::FULLY_CONNECTED:
            return mapFullyConnected();
        case BuiltinOperator::TRANSPOSE_CONV:
            return mapTransposeConv();
        case BuiltinOperator::AVERAGE_POOL_2D:
            return mapPool(Op::AVERAGE_POOL_2D);
        case BuiltinOperator::MAX_POOL_2D:
            return mapPool(Op::MAX_POOL_2D);
        case BuiltinOperator::L2_POOL_2D:
            return mapPool(Op::L2_POOL_2D);
        case BuiltinOperator::ADD:
            return mapElementwise(Op::ADD, options<tfl::AddOptions>().fused_activation_function);
        case BuiltinOperator::SUB:
            return mapElementwise(Op::SUB, options<tfl::SubOptions>().fused_activation_function);
        case BuiltinOperator::MUL:
            return mapElementwise(Op::MUL, options<tfl::MulOptions>().fused_activation_function);
        case BuiltinOperator::DIV:
            return mapElementwise(Op::DIV, options<tfl::DivOptions>().fused_activation_function);
        case BuiltinOperator::RELU:
            return mapSimple(Op::RELU, 1);
        case BuiltinOperator::RELU_N1_TO_1:
            return mapSimple(Op::RELU1, 1);
        case BuiltinOperator::RELU6:
            return mapSimple(Op::RELU6, 1);
        case BuiltinOperator::LOGISTIC:
            return mapSimple(Op::LOGISTIC, 1);
        case BuiltinOperator::TANH:
            return mapSimple(Op::TANH, 1);
        case BuiltinOperator::HARD_SWISH:
            return mapSimple(Op::HARD_SWISH, 1);
        case BuiltinOperator::FLOOR:
            return mapSimple(Op::FLOOR, 1);
        case BuiltinOperator::ABS:
            return mapSimple(Op::ABS, 1);
        case BuiltinOperator::EXP:
            return mapSimple(Op::EXP, 1);
        case BuiltinOperator::LOG:
            return mapSimple(Op::LOG, 1);
        case BuiltinOperator::RSQRT:
            return mapSimple(Op::RSQRT, 1);
        case BuiltinOperator::SQRT:
            return mapSimple(Op::SQRT, 1);
        case BuiltinOperator::SIN:
            return mapSimple(Op::SIN, 1);
        case BuiltinOperator::NEG:
            return mapSimple(Op::NEG, 1);
        case BuiltinOperator::CAST:
            return mapSimple(Op::CAST, 1);
        case BuiltinOperator::LOGICAL_NOT:
            return mapSimple(Op::LOGICAL_NOT, 1);
        case BuiltinOperator::LOGICAL_AND:
            return mapSimple(Op::LOGICAL_AND, 2);
        case BuiltinOperator::LOGICAL_OR:
            return mapSimple(Op::LOGICAL_OR, 2);
        case BuiltinOperator::LESS:
            return mapSimple(Op::LESS, 2);
        case BuiltinOperator::LESS_EQUAL:
            return mapSimple(Op::LESS_EQUAL, 2);
        case BuiltinOperator::GREATER:
            return mapSimple(Op::GREATER, 2);
        case BuiltinOperator::GREATER_EQUAL:
            return mapSimple(Op::GREATER_EQUAL, 2);
        case BuiltinOperator::EQUAL:
            return mapSimple(Op::EQUAL, 2);
        case BuiltinOperator::NOT_EQUAL:
            return mapSimple(Op::NOT_EQUAL, 2);
        case BuiltinOperator::MAXIMUM:
            return mapSimple(Op::MAXIMUM, 2);
        case BuiltinOperator::MINIMUM:
            return mapSimple(Op::MINIMUM, 2);
        case BuiltinOperator::POW:
            return mapSimple(Op::POW, 2);
        case BuiltinOperator::PRELU:
            return mapSimple(Op::PRELU, 2);
        case BuiltinOperator::SELECT:
            return mapSimple(Op::SELECT, 3);
        case BuiltinOperator::LEAKY_RELU:
            return mapLeakyRelu();
        case BuiltinOperator::SVDF:
            return mapSvdf();
        case BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM:
            return mapUnidirectionalSequenceLstm();
        case BuiltinOperator::SOFTMAX: {
            expectCounts(1, 1, 1);
            const uint32_t x = in(0);
            return emit(Op::SOFTMAX, {x, floatScalar(options<tfl::SoftmaxOptions>().beta, x)},
                        {out(0)});
        }
        case BuiltinOperator::LOG_SOFTMAX: {
            expectCounts(1, 1, 1);
            const uint32_t x = in(0);  // TFLite fixes beta = 1 and axis = -1
            return emit(Op::LOG_SOFTMAX, {x, floatScalar(1.0f, x), int32Scalar(-1)}, {out(0)});
        }
        case BuiltinOperator::ELU: {
            expectCounts(1, 1, 1);
            const uint32_t x = in(0);
            return emit(Op::ELU, {x, floatScalar(1.0f, x)}, {out(0)});
        }
        case BuiltinOperator::L2_NORMALIZATION: {
            expectNoActivation(options<tfl::L2NormOptions>().fused_activation_function);
            return mapSimple(Op::L2_NORMALIZATION, 1);
        }
        case BuiltinOperator::LOCAL_RESPONSE_NORMALIZATION: {
            expectCounts(1, 1, 1);
            const auto o = options<tfl::LocalResponseNormalizationOptions>();
            const uint32_t x = in(0);
            return emit(Op::LOCAL_RESPONSE_NORMALIZATION,
                        {x, int32Scalar(o.radius), floatScalar(o.bias, x), floatScalar(o.alpha, x),
                         floatScalar(o.beta, x)},
                        {out(0)});
        }
        case BuiltinOperator::CONCATENATION: {
            const auto o = options<tfl::ConcatenationOptions>();
            expectNoActivation(o.fused_activation_function);
            if (mInputs.empty() || mOutputs.size() != 1) fail("needs inputs and one output");
            std::vector<uint32_t> ins;
            for (size_t k = 0; k < mInputs.size(); ++k) ins.push_back(in(k));
            const auto rank = static_cast<int32_t>(operand(ins[0]).dimensions.size());
            ins.push_back(int32Scalar(o.axis < 0 ? o.axis + rank : o.axis));
            return emit(Op::CONCATENATION, ins, {out(0)});
        }
        case BuiltinOperator::RESHAPE:
            return mapReshape();
        case BuiltinOperator::PAD:
        case BuiltinOperator::PADV2:
            return mapPad();
        case BuiltinOperator::MEAN: {
            expectCounts(2, 2, 1);
            const bool keep = options<tfl::ReducerOptions>().keep_dims;
            return emit(Op::MEAN, {in(0), int32TensorInput(1, "axis"), int32Scalar(keep ? 1 : 0)},
                        {out(0)});
        }
        case BuiltinOperator::SUM:
        case BuiltinOperator::REDUCE_PROD:
        case BuiltinOperator::REDUCE_MAX:
        case BuiltinOperator::REDUCE_MIN:
        case BuiltinOperator::REDUCE_ANY: {
            expectCounts(2, 2, 1);
            static const std::map<BuiltinOperator, Op> kReductions = {
                {BuiltinOperator::SUM, Op::REDUCE_SUM},
                {BuiltinOperator::REDUCE_PROD, Op::REDUCE_PROD},
                {BuiltinOperator::REDUCE_MAX, Op::REDUCE_MAX},
                {BuiltinOperator::REDUCE_MIN, Op::REDUCE_MIN},
                {BuiltinOperator::REDUCE_ANY, Op::REDUCE_ANY}};
            const bool keep = options<tfl::ReducerOptions>().keep_dims;
            return emit(kReductions.at(mCode),
                        {in(0), int32TensorInput(1, "axis"), boolScalar(keep)}, {out(0)});
        }
        case BuiltinOperator::RESIZE_BILINEAR:
            return mapResize(true);
        case BuiltinOperator::RESIZE_NEAREST_NEIGHBOR:
            return mapResize(false);
        case BuiltinOperator::TRANSPOSE:
            expectCounts(2, 2, 1);
            return emit(Op::TRANSPOSE, {in(0), int32TensorInput(1, "permutation")}, {out(0)});
        case BuiltinOperator::SQUEEZE: {
            expectCounts(1, 1, 1);
            const auto dims = options<tfl::SqueezeOptions>().squeeze_dims;
            // No dimensions listed: NNAPI's omitted operand squeezes every size-1 dimension.
            const uint32_t list =
                dims.empty() ? mBuilder.addNoValue(OperandType::TENSOR_INT32) : int32Vector(dims);
            return emit(Op::SQUEEZE, {in(0), list}, {out(0)});
        }
        case BuiltinOperator::STRIDED_SLICE:
            return mapStridedSlice();
        case BuiltinOperator::SLICE:
            expectCounts(3, 3, 1);
            return emit(Op::SLICE,
                        {in(0), int32TensorInput(1, "begin"), int32TensorInput(2, "size")},
                        {out(0)});
        case BuiltinOperator::TILE:
            expectCounts(2, 2, 1);
            return emit(Op::TILE, {in(0), int32TensorInput(1, "multiples")}, {out(0)});
        case BuiltinOperator::SPACE_TO_BATCH_ND:
            expectCounts(3, 3, 1);
            return emit(
                Op::SPACE_TO_BATCH_ND,
                {in(0), int32TensorInput(1, "block shape"), int32TensorInput(2, "paddings")},
                {out(0)});
        case BuiltinOperator::BATCH_TO_SPACE_ND: {
            expectCounts(3, 3, 1);
            for (int32_t crop : constInts(2, "crops"))
                if (crop != 0) fail("non-zero crops have no NNAPI equivalent");
            return emit(Op::BATCH_TO_SPACE_ND, {in(0), int32TensorInput(1, "block shape")},
                        {out(0)});
        }
        case BuiltinOperator::DEQUANTIZE:
            return mapDequantize();
        case BuiltinOperator::QUANTIZE: {
            expectCounts(1, 1, 1);
            uint32_t x = in(0);
            if (isQuant8(x)) {  // requantization: NNAPI only quantizes from float
                const uint32_t f =
                    mBuilder.addOperand(OperandType::TENSOR_FLOAT32, operand(x).dimensions);
                emit(Op::DEQUANTIZE, {x}, {f});
                x = f;
            }
            return emit(Op::QUANTIZE, {x}, {out(0)});
        }
        case BuiltinOperator::GATHER: {
            expectCounts(2, 2, 1);
            const auto o = options<tfl::GatherOptions>();
            if (o.batch_dims != 0) fail("batch_dims ", o.batch_dims, " has no NNAPI equivalent");
            return emit(Op::GATHER, {in(0), int32Scalar(o.axis), int32TensorInput(1, "indices")},
                        {out(0)});
        }
        case BuiltinOperator::ARG_MAX:
        case BuiltinOperator::ARG_MIN: {
            expectCounts(2, 2, 1);
            if (tensor(mOutputs[0]).type() != tfl::TensorType::INT32)
                fail("output type ", tensorTypeName(tensor(mOutputs[0]).type()),
                     " is not supported (NNAPI returns int32 indices)");
            const Op type = mCode == BuiltinOperator::ARG_MAX ? Op::ARGMAX : Op::ARGMIN;
            return emit(type, {in(0), int32Scalar(constInt(1, "axis"))}, {out(0)});
        }
        case BuiltinOperator::SPACE_TO_DEPTH:
            expectCounts(1, 1, 1);
            return emit(Op::SPACE_TO_DEPTH,
                        {in(0), int32Scalar(options<tfl::SpaceToDepthOptions>().block_size)},
                        {out(0)});
        case BuiltinOperator::DEPTH_TO_SPACE:
            expectCounts(1, 1, 1);
            return emit(Op::DEPTH_TO_SPACE,
                        {in(0), int32Scalar(options<tfl::DepthToSpaceOptions>().block_size)},
                        {out(0)});
        case BuiltinOperator::EXPAND_DIMS:
            expectCounts(2, 2, 1);
            return emit(Op::EXPAND_DIMS, {in(0), int32Scalar(constInt(1, "axis"))}, {out(0)});
        case BuiltinOperator::SPLIT: {
            // TFLite order: axis, input.
            const int32_t splits = options<tfl::SplitOptions>().num_splits;
            expectCounts(2, 2, mOutputs.size());
            if (mOutputs.empty()) fail("has no outputs");
            std::vector<uint32_t> outs;
            for (size_t k = 0; k < mOutputs.size(); ++k) outs.push_back(out(k));
            return emit(Op::SPLIT, {in(1), int32Scalar(constInt(0, "axis")), int32Scalar(splits)},
                        outs);
        }
        case BuiltinOperator::TOPK_V2:
            expectCounts(2, 2, 2);
            return emit(Op::TOPK_V2, {in(0), int32Scalar(constInt(1, "k"))}, {out(0), out(1)});
        default:
            fail("has no NNAPI mapping");
    }
}

}  // namespace

Status checkTfliteFile(const uint8_t* data, size_t size, const std::string& origin) {
    if (size < 8)
        return invalidArgument(origin, ": truncated file (", size,
                               " bytes), not a TensorFlow Lite model");
    if (!tfl::ModelBufferHasIdentifier(data))
        return invalidArgument(origin,
                               ": not a TensorFlow Lite flatbuffer (file identifier is not \"",
                               tfl::ModelIdentifier(), "\")");
    flatbuffers::Verifier verifier(data, size);
    if (!tfl::VerifyModelBuffer(verifier))
        return invalidArgument(
            origin, ": corrupt or truncated TensorFlow Lite flatbuffer (verification failed)");
    const tfl::Model* model = tfl::GetModel(data);
    if (model->version() != 3)
        return invalidArgument(origin, ": TFLite schema version ", model->version(),
                               " is not supported (expected 3)");
    if (!model->subgraphs() || model->subgraphs()->size() == 0)
        return invalidArgument(origin, ": the model has no subgraph");
    return okStatus();
}

Result<TfliteImport> importTflite(const uint8_t* data, size_t size, const std::string& origin) {
    try {
        return Importer(data, size, origin).run();
    } catch (const ImportError& e) {
        return invalidArgument(e.message);
    } catch (const std::exception& e) {  // e.g. the constant pool could not be created
        return fail(ErrorStatus::GENERAL_FAILURE, origin, ": ", e.what());
    }
}

Result<std::vector<uint8_t>> readTfliteFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return invalidArgument(path, ": cannot open file");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    if (file.bad()) return invalidArgument(path, ": read error");
    return bytes;
}

Result<TfliteImport> importTfliteFile(const std::string& path) {
    auto bytes = readTfliteFile(path);
    if (!bytes) return bytes.status();
    return importTflite(bytes->data(), bytes->size(), path);
}

}  // namespace nncosim
