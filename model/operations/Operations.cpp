// The table of validators keyed by operation type, built from the one operation list.
#include <unordered_map>

#include "model/operations/Validators.h"

namespace nncosim {

OperationValidator findOperationValidator(OperationType type) {
    static const std::unordered_map<OperationType, OperationValidator> kValidators = {
#define NN_VALIDATOR_ROW(Type, Stem, Value) {OperationType::Type, &validate##Stem},
        NN_FOR_EACH_OPERATION(NN_VALIDATOR_ROW)
#undef NN_VALIDATOR_ROW
    };
    auto it = kValidators.find(type);
    return it == kValidators.end() ? nullptr : it->second;
}

}  // namespace nncosim
