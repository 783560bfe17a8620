// Declarations of the reference implementations, one per operation of the operation list
// (model/OperationList.h); each is defined in its family's file in this folder and
// registered by Operations.cpp's generated table. IF and WHILE run in the executor itself
// (Executor.cpp); their table entries only say so.
#pragma once

#include "golden/ExecutionContext.h"
#include "model/OperationList.h"

namespace nncosim::golden {

#define NN_DECLARE_EXECUTOR(Type, Stem, Value) Status execute##Stem(ExecutionContext& ctx);
NN_FOR_EACH_OPERATION(NN_DECLARE_EXECUTOR)
#undef NN_DECLARE_EXECUTOR

}  // namespace nncosim::golden
