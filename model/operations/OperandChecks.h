// Operand checks shared by the validators of the comparison, indexing, lookup, recurrent,
// detection, control-flow and miscellaneous operation families.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "model/OperationValidation.h"

namespace nncosim {

/// Every input not listed in `optional` has a value: only optional inputs may be NO_VALUE.
Status expectRequiredInputs(const OperationContext& ctx, const std::vector<uint32_t>& optional);
/// Input i has a value (is not NO_VALUE); `what` names it in the message.
Status expectPresent(const OperationContext& ctx, uint32_t input, const char* what);

/// For a TENSOR_QUANT8_ASYMM(_SIGNED) output, its scale and zero point equal those of `input`.
Status expectSameQuant8(const OperationContext& ctx, uint32_t input, uint32_t output);
/// Input i has at least `minRank` dimensions when its rank is known.
Status expectInputRankAtLeast(const OperationContext& ctx, uint32_t input, uint32_t minRank,
                              const char* what);
/// Each listed (input, rank) pair: the input has that rank when it has a value and a known rank.
/// Inputs listed in `optional` whose dimensions are all unknown are skipped as well: models stand
/// in for an absent optional tensor with a placeholder such as [0] and omit it in the request.
Status expectInputRanks(const OperationContext& ctx,
                        std::initializer_list<std::pair<uint32_t, uint32_t>> inputRanks,
                        const std::vector<uint32_t>& optional = {});
/// Input i has `size` elements along `dim` when its rank and that dimension are known.
Status expectInputDim(const OperationContext& ctx, uint32_t input, uint32_t dim, uint32_t size,
                      const char* what);
/// A TENSOR_QUANT16_ASYMM box-coordinate operand uses scale 0.125 and zero point 0 (the fixed
/// quantization of NNAPI's detection operations); other types pass.
Status expectBoxQuantization(const OperationContext& ctx, const Operand& operand, const char* what);

/// Known dimensions agree: equal ranks when both are known, equal sizes where both are known.
bool dimensionsCompatible(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
/// Two operands could describe the same value: same type, compatible dimensions, same scale,
/// zero point and extra parameters (the rule between IF/WHILE operands and subgraph operands).
bool operandsCompatible(const Operand& a, const Operand& b);

}  // namespace nncosim
