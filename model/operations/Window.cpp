#include "model/operations/Window.h"

#include "model/Model.h"

namespace nncosim {

bool isPoolingOperation(OperationType type) {
    return type == OperationType::AVERAGE_POOL_2D || type == OperationType::MAX_POOL_2D ||
           type == OperationType::L2_POOL_2D;
}

bool isWindowOperation(OperationType type) {
    return type == OperationType::CONV_2D || type == OperationType::DEPTHWISE_CONV_2D ||
           type == OperationType::GROUPED_CONV_2D || isPoolingOperation(type);
}

WindowSignature windowSignature(OperationType type, uint32_t numInputs,
                                const std::function<OperandType(uint32_t)>& inputType) {
    // Tensor inputs, then padding, strides, [filter size], [extra], activation, [layout],
    // [dilation]. Pooling has one tensor input, the convolutions three.
    const bool pooling = isPoolingOperation(type);
    const uint32_t first = pooling ? 1 : 3;
    const bool hasExtra =
        type == OperationType::DEPTHWISE_CONV_2D || type == OperationType::GROUPED_CONV_2D;
    // Inputs of the implicit form up to the activation; the next one is the optional layout.
    const uint32_t implicitEnd = first + 1 + 2 + (pooling ? 2 : 0) + (hasExtra ? 1 : 0) + 1;
    WindowSignature s;
    if (type == OperationType::GROUPED_CONV_2D) {
        s.explicitPadding = numInputs == 12;  // the layout is not optional here
    } else {
        // The explicit form has three more inputs; the implicit form may have as many (layout
        // and dilation), with a BOOL where the explicit form has an INT32.
        s.explicitPadding =
            numInputs >= implicitEnd + 3 && inputType(implicitEnd) == OperandType::INT32;
    }
    s.padding = first;
    s.strides = first + (s.explicitPadding ? 4 : 1);
    uint32_t next = s.strides + 2;
    if (pooling) {
        s.filterSize = next;
        next += 2;
    }
    if (hasExtra) s.extra = next++;
    s.activation = next++;
    if (next < numInputs) s.layout = next++;
    if (!pooling && type != OperationType::GROUPED_CONV_2D && next + 1 < numInputs)
        s.dilation = next;
    return s;
}

Result<WindowParams> decodeWindowParams(OperationType type, const OperationInputs& in) {
    const WindowSignature s = windowSignature(type, in.count, in.type);
    auto int32 = [&](uint32_t i, const char* what, int32_t min) -> Result<int32_t> {
        auto v = i < in.count ? in.int32(i) : std::nullopt;
        if (!v) return fail(ErrorStatus::INVALID_ARGUMENT, "input ", i, " (", what, ") is unknown");
        if (*v < min)
            return fail(ErrorStatus::INVALID_ARGUMENT, "input ", i, " (", what,
                        ") must be >= ", min, ", got ", *v);
        return *v;
    };
    WindowParams p;
    p.explicitPadding = s.explicitPadding;
    auto read = [&](uint32_t i, const char* what, int32_t min, int32_t* to) {
        auto v = int32(i, what, min);
        if (v) *to = *v;
        return v.status();
    };
    if (s.explicitPadding) {
        NN_RETURN_IF_ERROR(read(s.padding, "padding left", 0, &p.padW.head));
        NN_RETURN_IF_ERROR(read(s.padding + 1, "padding right", 0, &p.padW.tail));
        NN_RETURN_IF_ERROR(read(s.padding + 2, "padding top", 0, &p.padH.head));
        NN_RETURN_IF_ERROR(read(s.padding + 3, "padding bottom", 0, &p.padH.tail));
    } else {
        NN_RETURN_IF_ERROR(read(s.padding, "padding scheme", kPaddingSame, &p.scheme));
        if (p.scheme > kPaddingValid)
            return fail(ErrorStatus::INVALID_ARGUMENT, "input ", s.padding,
                        " (padding scheme) must be 1 (SAME) or 2 (VALID), got ", p.scheme);
    }
    NN_RETURN_IF_ERROR(read(s.strides, "stride width", 1, &p.strideW));
    NN_RETURN_IF_ERROR(read(s.strides + 1, "stride height", 1, &p.strideH));
    if (s.filterSize) {
        NN_RETURN_IF_ERROR(read(*s.filterSize, "filter width", 1, &p.filterW));
        NN_RETURN_IF_ERROR(read(*s.filterSize + 1, "filter height", 1, &p.filterH));
    }
    if (s.extra) {
        const bool depthwise = type == OperationType::DEPTHWISE_CONV_2D;
        NN_RETURN_IF_ERROR(read(*s.extra, depthwise ? "depth multiplier" : "number of groups", 1,
                                depthwise ? &p.depthMultiplier : &p.groups));
    }
    NN_RETURN_IF_ERROR(read(s.activation, "fused activation", 0, &p.activation));
    if (p.activation > 3)
        return fail(ErrorStatus::INVALID_ARGUMENT, "input ", s.activation,
                    " (fused activation) must be 0..3, got ", p.activation);
    const auto given = [&](uint32_t i) { return !in.omitted || !in.omitted(i); };
    if (s.layout && given(*s.layout)) {
        auto nchw = in.boolean(*s.layout);
        if (!nchw)
            return fail(ErrorStatus::INVALID_ARGUMENT, "input ", *s.layout,
                        " (NCHW layout flag) is unknown");
        p.nchw = *nchw;
    }
    if (s.dilation && given(*s.dilation) && given(*s.dilation + 1)) {
        NN_RETURN_IF_ERROR(read(*s.dilation, "dilation width", 1, &p.dilationW));
        NN_RETURN_IF_ERROR(read(*s.dilation + 1, "dilation height", 1, &p.dilationH));
    }
    return p;
}

Padding implicitPadding(int32_t inSize, int32_t stride, int32_t dilation, int32_t filter,
                        int32_t scheme, bool transposeConv) {
    Padding p;
    if (scheme != kPaddingSame) return p;
    const int64_t effectiveFilter = int64_t{filter - 1} * dilation + 1;
    const int64_t outSize = (int64_t{inSize} + stride - 1) / stride;
    const int64_t needed = (outSize - 1) * stride + effectiveFilter;
    if (needed > inSize) {
        p.head = static_cast<int32_t>((needed - inSize) / 2);
        p.tail = static_cast<int32_t>(needed - inSize - p.head);
    }
    if (transposeConv) p.tail = static_cast<int32_t>(needed - inSize - p.head);
    return p;
}

int32_t windowOutputSize(int32_t inSize, int32_t filter, int32_t stride, int32_t dilation,
                         Padding pad) {
    const int64_t effectiveFilter = int64_t{filter - 1} * dilation + 1;
    const int64_t span = int64_t{inSize} + pad.head + pad.tail - effectiveFilter;
    if (span < 0 || stride <= 0) return 0;
    return static_cast<int32_t>(span / stride + 1);
}

std::vector<uint32_t> toNhwcShape(const std::vector<uint32_t>& shape, bool nchw) {
    return nchw ? std::vector<uint32_t>{shape[0], shape[2], shape[3], shape[1]} : shape;
}

std::vector<uint32_t> fromNhwcShape(const std::vector<uint32_t>& nhwc, bool nchw) {
    return nchw ? std::vector<uint32_t>{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : nhwc;
}

Result<WindowGeometry> windowGeometry(OperationType type, const WindowParams& p,
                                      const std::vector<uint32_t>& input,
                                      const std::vector<uint32_t>& filter,
                                      const std::vector<uint32_t>& bias) {
    auto bad = [](auto&&... parts) { return fail(ErrorStatus::INVALID_ARGUMENT, parts...); };
    const bool pooling = isPoolingOperation(type);
    if (input.size() != 4) return bad("input must be 4-D, got ", toString(input));
    if (!pooling && (filter.size() != 4 || bias.size() != 1))
        return bad("filter must be 4-D and bias 1-D, got ", toString(filter), ", ", toString(bias));
    const std::vector<uint32_t> in = toNhwcShape(input, p.nchw);
    WindowGeometry g;
    g.batches = in[0], g.inH = in[1], g.inW = in[2], g.inC = in[3];
    if (pooling) {
        if (g.inH == 0 || g.inW == 0 || g.inC == 0)
            return bad("only the batch dimension of the input may be 0, got ", toString(input));
        g.filterH = static_cast<uint32_t>(p.filterH);
        g.filterW = static_cast<uint32_t>(p.filterW);
        g.outC = g.inC;
    } else {
        g.filterH = filter[1], g.filterW = filter[2];
        if (g.filterH == 0 || g.filterW == 0) return bad("empty filter ", toString(filter));
        const auto inC = uint64_t{g.inC};
        bool channelsMatch = false;
        switch (type) {
            case OperationType::CONV_2D:
                g.outC = filter[0];
                channelsMatch = filter[3] == inC;
                break;
            case OperationType::DEPTHWISE_CONV_2D:
                g.outC = filter[3];
                channelsMatch = filter[0] == 1 && inC * uint64_t(p.depthMultiplier) == g.outC;
                break;
            default:  // GROUPED_CONV_2D
                g.outC = filter[0];
                channelsMatch = uint64_t{filter[3]} * uint64_t(p.groups) == inC &&
                                g.outC % static_cast<uint32_t>(p.groups) == 0;
                break;
        }
        if (!channelsMatch || bias[0] != g.outC)
            return bad("filter ", toString(filter), " and bias ", toString(bias),
                       " do not match input ", toString(input), " (depth multiplier ",
                       p.depthMultiplier, ", groups ", p.groups, ")");
    }
    const int32_t dilationH = pooling ? 1 : p.dilationH, dilationW = pooling ? 1 : p.dilationW;
    const auto fh = static_cast<int32_t>(g.filterH), fw = static_cast<int32_t>(g.filterW);
    const auto ih = static_cast<int32_t>(g.inH), iw = static_cast<int32_t>(g.inW);
    g.padH = p.explicitPadding ? p.padH : implicitPadding(ih, p.strideH, dilationH, fh, p.scheme);
    g.padW = p.explicitPadding ? p.padW : implicitPadding(iw, p.strideW, dilationW, fw, p.scheme);
    // Android requires every pooling window to overlap the input.
    if (pooling &&
        (g.padW.head >= fw || g.padW.tail >= fw || g.padH.head >= fh || g.padH.tail >= fh))
        return bad("padding must be smaller than the filter");
    const int32_t outH = windowOutputSize(ih, fh, p.strideH, dilationH, g.padH);
    const int32_t outW = windowOutputSize(iw, fw, p.strideW, dilationW, g.padW);
    if (outH <= 0 || outW <= 0)
        return bad("the window does not fit the padded input (output ", outH, "x", outW, ")");
    g.outH = static_cast<uint32_t>(outH);
    g.outW = static_cast<uint32_t>(outW);
    return g;
}

Result<TransposeConvWindow> transposeConvWindow(
    const OperationInputs& in, const std::vector<uint32_t>& input,
    const std::vector<uint32_t>& filter, const std::vector<uint32_t>& bias,
    const std::optional<std::vector<int32_t>>& outputShape) {
    auto bad = [](auto&&... parts) { return fail(ErrorStatus::INVALID_ARGUMENT, parts...); };
    if (input.size() != 4 || filter.size() != 4 || bias.size() != 1)
        return bad("input and filter must be 4-D and bias 1-D, got ", toString(input), ", ",
                   toString(filter), ", ", toString(bias));
    if (filter[1] == 0 || filter[2] == 0) return bad("empty filter ", toString(filter));
    TransposeConvWindow w;
    WindowParams& p = w.p;
    WindowGeometry& g = w.g;
    const auto int32 = [&](uint32_t i, const char* what, int32_t* to) {
        auto v = i < in.count ? in.int32(i) : std::nullopt;
        if (!v) return bad("input ", i, " (", what, ") is unknown");
        *to = *v;
        return okStatus();
    };
    p.explicitPadding = in.count == 11;
    if (p.explicitPadding) {
        NN_RETURN_IF_ERROR(int32(3, "padding left", &p.padW.head));
        NN_RETURN_IF_ERROR(int32(4, "padding right", &p.padW.tail));
        NN_RETURN_IF_ERROR(int32(5, "padding top", &p.padH.head));
        NN_RETURN_IF_ERROR(int32(6, "padding bottom", &p.padH.tail));
    } else {
        NN_RETURN_IF_ERROR(int32(4, "padding scheme", &p.scheme));
    }
    const uint32_t strides = p.explicitPadding ? 7 : 5;
    NN_RETURN_IF_ERROR(int32(strides, "stride width", &p.strideW));
    NN_RETURN_IF_ERROR(int32(strides + 1, "stride height", &p.strideH));
    NN_RETURN_IF_ERROR(int32(strides + 2, "fused activation", &p.activation));
    const auto nchw = strides + 3 < in.count ? in.boolean(strides + 3) : std::nullopt;
    if (!nchw) return bad("input ", strides + 3, " (layout) is unknown");
    p.nchw = *nchw;
    if (p.strideW <= 0 || p.strideH <= 0 || p.activation < 0 || p.activation > 3)
        return bad("invalid stride or activation");
    const std::vector<uint32_t> nhwc = toNhwcShape(input, p.nchw);
    g.batches = nhwc[0], g.inH = nhwc[1], g.inW = nhwc[2], g.inC = nhwc[3];
    g.filterH = filter[1], g.filterW = filter[2];
    if (!p.explicitPadding) {
        // The requested output shape only decides the padding; the output size follows from it.
        if (!outputShape || outputShape->size() != 4)
            return bad("the output shape must be a known 4-element tensor");
        const auto& shape = *outputShape;
        const auto fw = static_cast<int32_t>(g.filterW), fh = static_cast<int32_t>(g.filterH);
        p.padW = implicitPadding(p.nchw ? shape[3] : shape[2], p.strideW, 1, fw, p.scheme, true);
        p.padH = implicitPadding(p.nchw ? shape[2] : shape[1], p.strideH, 1, fh, p.scheme, true);
    }
    // Only the head padding must be non-negative: a negative tail resolves the output size.
    if (p.padW.head < 0 || p.padH.head < 0) return bad("negative padding");
    g.padW = p.padW, g.padH = p.padH;
    g.outC = filter[0];
    if (filter[3] != g.inC || bias[0] != g.outC)
        return bad("filter ", toString(filter), " and bias ", toString(bias),
                   " do not match input channels ", g.inC);
    const int64_t outW =
        int64_t{g.inW} * p.strideW + g.filterW - p.strideW - p.padW.head - int64_t{p.padW.tail};
    const int64_t outH =
        int64_t{g.inH} * p.strideH + g.filterH - p.strideH - p.padH.head - int64_t{p.padH.tail};
    if (outW <= 0 || outH <= 0 || outW > UINT32_MAX || outH > UINT32_MAX)
        return bad("output size ", outH, "x", outW);
    g.outW = static_cast<uint32_t>(outW);
    g.outH = static_cast<uint32_t>(outH);
    return w;
}

std::vector<uint32_t> windowOutputShape(const WindowGeometry& g, bool nchw) {
    return fromNhwcShape({g.batches, g.outH, g.outW, g.outC}, nchw);
}

}  // namespace nncosim
