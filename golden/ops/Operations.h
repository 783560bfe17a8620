// Declarations of the reference implementations, one per operation of the operation list
// (model/operations/OperationList.h); each is defined in its family's file in this folder and
// registered with one row in Operations.cpp. IF and WHILE run in the executor itself.
#pragma once

#include "golden/ExecutionContext.h"
#include "model/operations/OperationList.h"

namespace nncosim::golden {

#define NN_DECLARE_EXECUTOR(Type, Stem) Status execute##Stem(ExecutionContext& ctx);
NN_FOR_EACH_OPERATION(NN_DECLARE_EXECUTOR)
#undef NN_DECLARE_EXECUTOR

}  // namespace nncosim::golden
