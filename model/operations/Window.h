// The sliding-window operations in one place: CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D,
// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D, and TRANSPOSE_CONV_2D with a signature of its own.
// Their signature (which input holds which parameter), the decoding of the parameters, NNAPI's
// implicit padding and the output shape are defined here once; validation, the golden and the
// driver use them, so a fix to a padding rule is one edit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/Status.h"
#include "model/Types.h"

namespace nncosim {

/// NNAPI's implicit padding schemes (PaddingCode).
inline constexpr int32_t kPaddingSame = 1;
inline constexpr int32_t kPaddingValid = 2;

/// Padding before (head) and after (tail) one spatial axis.
struct Padding {
    int32_t head = 0;
    int32_t tail = 0;
};

bool isWindowOperation(OperationType type);
bool isPoolingOperation(OperationType type);

/// Where each scalar parameter of a window operation sits among its inputs.
struct WindowSignature {
    bool explicitPadding = false;
    uint32_t padding = 0;                ///< the scheme, or padding left, right, top, bottom
    uint32_t strides = 0;                ///< stride width, then height
    std::optional<uint32_t> filterSize;  ///< pooling: filter width, then height
    std::optional<uint32_t> extra;       ///< depth multiplier (depthwise) or groups (grouped)
    uint32_t activation = 0;
    std::optional<uint32_t> layout;    ///< the NCHW flag, when given
    std::optional<uint32_t> dilation;  ///< dilation width, then height, when given
};

/// The signature of `type` with `numInputs` inputs; `inputType` tells an input's type (explicit
/// padding is told from implicit by the INT32 where the implicit form has its optional BOOL).
WindowSignature windowSignature(OperationType type, uint32_t numInputs,
                                const std::function<OperandType(uint32_t)>& inputType);

/// The values of an operation's inputs as one layer knows them (validation: constants only; the
/// golden: everything; the driver: constants and compile-time inputs).
struct OperationInputs {
    uint32_t count = 0;
    std::function<OperandType(uint32_t)> type;
    std::function<std::optional<int32_t>(uint32_t)> int32;  ///< nullopt: value unknown
    std::function<std::optional<bool>(uint32_t)> boolean;   ///< nullopt: value unknown
    /// Whether an optional input is omitted (it then takes its default); null: none is.
    std::function<bool(uint32_t)> omitted;
};

/// The decoded scalar parameters of a window operation.
struct WindowParams {
    bool explicitPadding = false;
    int32_t scheme = 0;  ///< implicit padding: kPaddingSame or kPaddingValid
    Padding padW, padH;  ///< explicit padding (resolved by windowGeometry otherwise)
    int32_t strideW = 1, strideH = 1;
    int32_t dilationW = 1, dilationH = 1;
    int32_t filterW = 0, filterH = 0;  ///< pooling only; convolutions take the filter's shape
    int32_t depthMultiplier = 1;
    int32_t groups = 1;
    int32_t activation = 0;
    bool nchw = false;
};

/// Decodes the parameters; fails naming the first one whose value is unknown or out of range.
Result<WindowParams> decodeWindowParams(OperationType type, const OperationInputs& inputs);

/// NNAPI's implicit padding of one axis: SAME pads so that the output has ceil(in / stride)
/// elements, the odd pixel going to the tail; VALID pads nothing. For TRANSPOSE_CONV_2D `inSize`
/// is the output size and the tail is fitted to the last stride (it may be negative).
Padding implicitPadding(int32_t inSize, int32_t stride, int32_t dilation, int32_t filter,
                        int32_t scheme, bool transposeConv = false);

/// Output size of a window along one axis (0 or less when the window does not fit).
int32_t windowOutputSize(int32_t inSize, int32_t filter, int32_t stride, int32_t dilation,
                         Padding pad);

/// A window operation's shapes in NHWC, with its padding resolved.
struct WindowGeometry {
    uint32_t batches = 0, inH = 0, inW = 0, inC = 0;
    uint32_t filterH = 0, filterW = 0;
    uint32_t outH = 0, outW = 0, outC = 0;
    Padding padH, padW;
};

/// Checks the shapes of the input, filter and bias (filter and bias empty for pooling) against
/// the operation and its parameters, resolves implicit padding and computes the output size.
Result<WindowGeometry> windowGeometry(OperationType type, const WindowParams& params,
                                      const std::vector<uint32_t>& input,
                                      const std::vector<uint32_t>& filter = {},
                                      const std::vector<uint32_t>& bias = {});

/// TRANSPOSE_CONV_2D's parameters and shapes. Its inputs: input, filter [outC, kh, kw, inC], bias,
/// then either the explicit padding (left, right, top, bottom; 11 inputs) or the requested output
/// shape tensor and a padding scheme (9 inputs), then strides, activation and the NCHW flag. The
/// output pixel h * stride - padding head + k receives input pixel h times filter tap k; a
/// negative tail padding only lengthens the output.
struct TransposeConvWindow {
    WindowParams p;  ///< padding resolved
    WindowGeometry g;
};

/// Decodes and checks a TRANSPOSE_CONV_2D; `outputShape`: the values of the output shape tensor
/// (implicit padding), nullopt when unknown.
Result<TransposeConvWindow> transposeConvWindow(
    const OperationInputs& inputs, const std::vector<uint32_t>& input,
    const std::vector<uint32_t>& filter, const std::vector<uint32_t>& bias,
    const std::optional<std::vector<int32_t>>& outputShape);

/// The output shape of a geometry in the operation's layout.
std::vector<uint32_t> windowOutputShape(const WindowGeometry& g, bool nchw);

/// NHWC order of a 4-D NCHW (nchw true) or NHWC shape, and back.
std::vector<uint32_t> toNhwcShape(const std::vector<uint32_t>& shape, bool nchw);
std::vector<uint32_t> fromNhwcShape(const std::vector<uint32_t>& nhwc, bool nchw);

}  // namespace nncosim
