// The registry: every NNAPI operation the NPU executes, each with its family's registration.
#include "driver/compiler/Lowering.h"
#include "model/NpuExtension.h"
#include "model/operations/ElementMap.h"

namespace nncosim::driver {

// Defined in the family files.
extern const NpuOperation kConvolutionOperation;     // Convolution.cpp
extern const NpuOperation kPoolingOperation;         // Pooling.cpp
extern const NpuOperation kMeanOperation;            // Pooling.cpp
extern const NpuOperation kReduceOperation;          // Pooling.cpp
extern const NpuOperation kTransposeConvOperation;   // TransposeConv.cpp
extern const NpuOperation kFullyConnectedOperation;  // FullyConnected.cpp
extern const NpuOperation kResizeBilinearOperation;  // Resize.cpp
extern const NpuOperation kElementwiseOperation;     // Elementwise.cpp
extern const NpuOperation kComparisonOperation;      // Elementwise.cpp
extern const NpuOperation kArgMinMaxOperation;       // ArgMinMax.cpp
extern const NpuOperation kActivationOperation;      // Lookup.cpp
extern const NpuOperation kPreluOperation;           // Lookup.cpp
extern const NpuOperation kMaxMinOperation;          // Lookup.cpp
extern const NpuOperation kLut8Operation;            // Lookup.cpp
extern const NpuOperation kReshapeOperation;         // DataMovement.cpp
extern const NpuOperation kSqueezeOperation;         // DataMovement.cpp
extern const NpuOperation kExpandDimsOperation;      // DataMovement.cpp
extern const NpuOperation kConcatenationOperation;   // DataMovement.cpp
extern const NpuOperation kPackOperation;            // DataMovement.cpp
extern const NpuOperation kElementMapOperation;      // DataMovement.cpp
extern const NpuOperation kFloatFunctionOperation;   // Normalization.cpp
extern const NpuOperation kNormalizationOperation;   // Normalization.cpp

const NpuOperation* findNpuOperation(const Model& model, const Operation& op) {
    const OperationType type = op.type;
    if (npu_extension::isLut8(model, type)) return &kLut8Operation;
    if (hasElementMap(type)) return &kElementMapOperation;
    switch (type) {
        case OperationType::CONV_2D:
        case OperationType::DEPTHWISE_CONV_2D:
        case OperationType::GROUPED_CONV_2D:
            return &kConvolutionOperation;
        case OperationType::AVERAGE_POOL_2D:
        case OperationType::MAX_POOL_2D:
        case OperationType::L2_POOL_2D:
            return &kPoolingOperation;
        case OperationType::MEAN:
            return &kMeanOperation;
        case OperationType::REDUCE_MAX:
        case OperationType::REDUCE_MIN:
        case OperationType::REDUCE_SUM:
            return &kReduceOperation;
        case OperationType::TRANSPOSE_CONV_2D:
            return &kTransposeConvOperation;
        case OperationType::FULLY_CONNECTED:
            return &kFullyConnectedOperation;
        case OperationType::ADD:
        case OperationType::SUB:
        case OperationType::MUL:
        case OperationType::DIV:
            return &kElementwiseOperation;
        case OperationType::EQUAL:
        case OperationType::NOT_EQUAL:
        case OperationType::GREATER:
        case OperationType::GREATER_EQUAL:
        case OperationType::LESS:
        case OperationType::LESS_EQUAL:
            return &kComparisonOperation;
        case OperationType::ARGMAX:
        case OperationType::ARGMIN:
            return &kArgMinMaxOperation;
        case OperationType::RSQRT:
        case OperationType::LOGISTIC:
        case OperationType::TANH:
            return !op.inputs.empty() && op.inputs[0] < model.main.operands.size() &&
                           floatFormat(model.main.operands[op.inputs[0]].type)
                       ? &kFloatFunctionOperation
                       : &kActivationOperation;
        case OperationType::ELU:
        case OperationType::EXP:
        case OperationType::LOG:
        case OperationType::SQRT:
            return &kFloatFunctionOperation;
        case OperationType::SOFTMAX:
        case OperationType::L2_NORMALIZATION:
        case OperationType::LOCAL_RESPONSE_NORMALIZATION:
            return &kNormalizationOperation;
        case OperationType::RELU:
        case OperationType::RELU1:
        case OperationType::RELU6:
        case OperationType::HARD_SWISH:
        case OperationType::CAST:
        case OperationType::DEQUANTIZE:
            return &kActivationOperation;
        case OperationType::PRELU:
            return &kPreluOperation;
        case OperationType::MAXIMUM:
        case OperationType::MINIMUM:
            return &kMaxMinOperation;
        case OperationType::RESHAPE:
            return &kReshapeOperation;
        case OperationType::SQUEEZE:
            return &kSqueezeOperation;
        case OperationType::EXPAND_DIMS:
            return &kExpandDimsOperation;
        case OperationType::CONCATENATION:
            return &kConcatenationOperation;
        case OperationType::PACK:
            return &kPackOperation;
        case OperationType::RESIZE_BILINEAR:
            return &kResizeBilinearOperation;
        default:
            return nullptr;
    }
}

}  // namespace nncosim::driver
