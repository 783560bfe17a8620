// Reference implementations of vendor-extension operations. Extension operation types carry the
// prefix the model maps the extension name to (Model::extensionNameToPrefix), so they are looked
// up with the model, not in the table of NNAPI operations.
#pragma once

#include "golden/ExecutionContext.h"

namespace nncosim::golden {

/// The implementation of extension operation `type` as `model` maps it, or null.
OperationExecutor findExtensionOperationExecutor(const Model& model, OperationType type);

}  // namespace nncosim::golden
