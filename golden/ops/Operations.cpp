// The table of reference implementations keyed by operation type: one row per implemented
// operation. An operation without a row fails with "golden: no reference implementation of X".
#include <unordered_map>

#include "golden/ops/Operations.h"

namespace nncosim::golden {

OperationExecutor findOperationExecutor(OperationType type) {
    static const std::unordered_map<OperationType, OperationExecutor> kExecutors = {
        {OperationType::CONV_2D, &executeConv2D},
        {OperationType::DEPTHWISE_CONV_2D, &executeDepthwiseConv2D},
        {OperationType::GROUPED_CONV_2D, &executeGroupedConv2D},
        {OperationType::TRANSPOSE_CONV_2D, &executeTransposeConv2D},
        {OperationType::ADD, &executeAdd},
        {OperationType::SUB, &executeSub},
        {OperationType::MUL, &executeMul},
        {OperationType::DIV, &executeDiv},
        {OperationType::FULLY_CONNECTED, &executeFullyConnected},
        {OperationType::AVERAGE_POOL_2D, &executeAveragePool2D},
        {OperationType::MAX_POOL_2D, &executeMaxPool2D},
        {OperationType::L2_POOL_2D, &executeL2Pool2D},
        {OperationType::RELU, &executeRelu},
        {OperationType::RELU1, &executeRelu1},
        {OperationType::RELU6, &executeRelu6},
        {OperationType::LOGISTIC, &executeLogistic},
        {OperationType::TANH, &executeTanh},
        {OperationType::SOFTMAX, &executeSoftmax},
        {OperationType::RESHAPE, &executeReshape},
        {OperationType::CONCATENATION, &executeConcatenation},
        {OperationType::PAD, &executePad},
        {OperationType::PAD_V2, &executePadV2},
        {OperationType::MEAN, &executeMean},
        {OperationType::RESIZE_BILINEAR, &executeResizeBilinear},
        {OperationType::RESIZE_NEAREST_NEIGHBOR, &executeResizeNearestNeighbor},
        {OperationType::ROI_ALIGN, &executeRoiAlign},
        {OperationType::ROI_POOLING, &executeRoiPooling},
        {OperationType::AXIS_ALIGNED_BBOX_TRANSFORM, &executeAxisAlignedBboxTransform},
        {OperationType::BOX_WITH_NMS_LIMIT, &executeBoxWithNmsLimit},
        {OperationType::DETECTION_POSTPROCESSING, &executeDetectionPostprocessing},
        {OperationType::GENERATE_PROPOSALS, &executeGenerateProposals},
        {OperationType::HEATMAP_MAX_KEYPOINT, &executeHeatmapMaxKeypoint},
        {OperationType::DENSIFY, &executeDensify},
        {OperationType::LSTM, &executeLstm},
        {OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, &executeUnidirectionalSequenceLstm},
        {OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, &executeBidirectionalSequenceLstm},
        {OperationType::RNN, &executeRnn},
        {OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, &executeUnidirectionalSequenceRnn},
        {OperationType::BIDIRECTIONAL_SEQUENCE_RNN, &executeBidirectionalSequenceRnn},
        {OperationType::SVDF, &executeSvdf},
        {OperationType::EMBEDDING_LOOKUP, &executeEmbeddingLookup},
        {OperationType::HASHTABLE_LOOKUP, &executeHashtableLookup},
        {OperationType::LSH_PROJECTION, &executeLshProjection},
        {OperationType::RANDOM_MULTINOMIAL, &executeRandomMultinomial},
        {OperationType::QUANTIZED_LSTM, &executeQuantizedLstm},
        {OperationType::QUANTIZED_16BIT_LSTM, &executeQuantized16BitLstm},
        {OperationType::ABS, &executeAbs},
        {OperationType::EXP, &executeExp},
        {OperationType::LOG, &executeLog},
        {OperationType::NEG, &executeNeg},
        {OperationType::RSQRT, &executeRsqrt},
        {OperationType::SIN, &executeSin},
        {OperationType::SQRT, &executeSqrt},
        {OperationType::FLOOR, &executeFloor},
        {OperationType::ELU, &executeElu},
        {OperationType::HARD_SWISH, &executeHardSwish},
        {OperationType::PRELU, &executePrelu},
        {OperationType::LOG_SOFTMAX, &executeLogSoftmax},
        {OperationType::CAST, &executeCast},
        {OperationType::QUANTIZE, &executeQuantize},
        {OperationType::DEQUANTIZE, &executeDequantize},
        {OperationType::EQUAL, &executeEqual},
        {OperationType::NOT_EQUAL, &executeNotEqual},
        {OperationType::GREATER, &executeGreater},
        {OperationType::GREATER_EQUAL, &executeGreaterEqual},
        {OperationType::LESS, &executeLess},
        {OperationType::LESS_EQUAL, &executeLessEqual},
        {OperationType::LOGICAL_AND, &executeLogicalAnd},
        {OperationType::LOGICAL_OR, &executeLogicalOr},
        {OperationType::LOGICAL_NOT, &executeLogicalNot},
        {OperationType::MAXIMUM, &executeMaximum},
        {OperationType::MINIMUM, &executeMinimum},
        {OperationType::POW, &executePow},
        {OperationType::SELECT, &executeSelect},
        {OperationType::L2_NORMALIZATION, &executeL2Normalization},
        {OperationType::LOCAL_RESPONSE_NORMALIZATION, &executeLocalResponseNormalization},
        {OperationType::INSTANCE_NORMALIZATION, &executeInstanceNormalization},
        {OperationType::MIRROR_PAD, &executeMirrorPad},
        {OperationType::REDUCE_ALL, &executeReduceAll},
        {OperationType::REDUCE_ANY, &executeReduceAny},
        {OperationType::REDUCE_MAX, &executeReduceMax},
        {OperationType::REDUCE_MIN, &executeReduceMin},
        {OperationType::REDUCE_PROD, &executeReduceProd},
        {OperationType::REDUCE_SUM, &executeReduceSum},
        {OperationType::DEPTH_TO_SPACE, &executeDepthToSpace},
        {OperationType::SPACE_TO_DEPTH, &executeSpaceToDepth},
        {OperationType::SPACE_TO_BATCH_ND, &executeSpaceToBatchNd},
        {OperationType::BATCH_TO_SPACE_ND, &executeBatchToSpaceNd},
        {OperationType::SQUEEZE, &executeSqueeze},
        {OperationType::STRIDED_SLICE, &executeStridedSlice},
        {OperationType::TRANSPOSE, &executeTranspose},
        {OperationType::SLICE, &executeSlice},
        {OperationType::SPLIT, &executeSplit},
        {OperationType::TILE, &executeTile},
        {OperationType::EXPAND_DIMS, &executeExpandDims},
        {OperationType::FILL, &executeFill},
        {OperationType::RANK, &executeRank},
        {OperationType::PACK, &executePack},
        {OperationType::REVERSE, &executeReverse},
        {OperationType::GATHER, &executeGather},
        {OperationType::ARGMAX, &executeArgmax},
        {OperationType::ARGMIN, &executeArgmin},
        {OperationType::TOPK_V2, &executeTopkV2},
        {OperationType::CHANNEL_SHUFFLE, &executeChannelShuffle},
        {OperationType::BATCH_MATMUL, &executeBatchMatmul},
    };
    auto it = kExecutors.find(type);
    return it == kExecutors.end() ? nullptr : it->second;
}

bool acceptsOmittedInputs(OperationType type) {
    switch (type) {
        case OperationType::LSTM:
        case OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM:
        case OperationType::BIDIRECTIONAL_SEQUENCE_LSTM:
        case OperationType::BIDIRECTIONAL_SEQUENCE_RNN:
        case OperationType::QUANTIZED_LSTM:
        case OperationType::SVDF:
        case OperationType::LSH_PROJECTION:
        case OperationType::SQUEEZE:
        case OperationType::TRANSPOSE:
        case OperationType::DENSIFY:
            return true;
        default:
            return false;
    }
}

}  // namespace nncosim::golden
