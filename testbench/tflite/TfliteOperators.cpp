// The TFLite operators as NNAPI operations: one mapping each (Importer::mapOperator picks it),
// with the delegate's conventions for what NNAPI expresses differently.
#include "testbench/tflite/Importer.h"

namespace nncosim::tflite_import {

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

}  // namespace nncosim::tflite_import
