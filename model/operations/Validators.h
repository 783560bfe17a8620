// Declarations of every operation's validator (defined in the family files beside this one).
#pragma once

#include "model/OperationList.h"
#include "model/OperationValidation.h"

namespace nncosim {

#define NN_DECLARE_VALIDATOR(Type, Stem, Value) Status validate##Stem(OperationContext& ctx);
NN_FOR_EACH_OPERATION(NN_DECLARE_VALIDATOR)
#undef NN_DECLARE_VALIDATOR

}  // namespace nncosim
