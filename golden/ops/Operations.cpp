// The table of reference implementations keyed by operation type, generated from the operation
// list (model/OperationList.h): an operation without its execute<Stem> is a link error.
#include <unordered_map>

#include "golden/ops/Operations.h"

namespace nncosim::golden {

OperationExecutor findOperationExecutor(OperationType type) {
    static const std::unordered_map<OperationType, OperationExecutor> kExecutors = {
#define NN_EXECUTOR_ROW(Type, Stem, Value) {OperationType::Type, &execute##Stem},
        NN_FOR_EACH_OPERATION(NN_EXECUTOR_ROW)
#undef NN_EXECUTOR_ROW
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
