// The operations described by an element map (model/operations/ElementMap.h): TRANSPOSE, TILE,
// REVERSE, SPLIT, CHANNEL_SHUFFLE, PAD, PAD_V2, MIRROR_PAD, SLICE, STRIDED_SLICE, GATHER,
// RESIZE_NEAREST_NEIGHBOR, DENSIFY, DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND,
// SPACE_TO_BATCH_ND. They copy elements of the input's size whatever their type, so the result
// keeps the input's quantization, as NNAPI requires.
#include "golden/ops/DataMovement.h"

#include <cstring>

#include "golden/ops/Operations.h"

namespace nncosim::golden {

Status executeElementMap(ExecutionContext& ctx) {
    ElementMapInputs inputs;
    inputs.outputs = ctx.numOutputs();
    inputs.shape = [&](uint32_t i) { return ctx.inputShape(i); };
    inputs.omitted = [&](uint32_t i) { return ctx.isOmitted(i); };
    inputs.ints = [&](uint32_t i) -> std::optional<std::vector<int32_t>> {
        if (ctx.isOmitted(i)) return std::nullopt;
        if (ctx.inputType(i) == OperandType::BOOL) return std::vector<int32_t>{ctx.scalar<bool>(i)};
        const int32_t* data = ctx.inputData<int32_t>(i);
        return std::vector<int32_t>(data, data + ctx.inputCount(i));
    };
    inputs.bits = [&](uint32_t i) -> std::optional<uint32_t> {
        const uint32_t size = elementSize(ctx.inputType(i));
        if (ctx.isOmitted(i) || size > 4) return std::nullopt;
        uint32_t bits = 0;
        std::memcpy(&bits, ctx.inputBytes(i), size);
        return bits;
    };
    inputs.type = [&](uint32_t i) { return ctx.inputType(i); };
    auto map = elementMap(ctx.type(), inputs);
    if (!map) return ctx.fail(map.status().message);
    for (uint32_t j = 0; j < map->shapes.size(); ++j) {
        NN_RETURN_IF_ERROR(ctx.setOutputShape(j, map->shapes[j]));
    }
    for (const ElementCopy& copy : map->copies) {
        const uint32_t bytes = elementSize(ctx.inputType(copy.input));
        const uint32_t pad =
            paddingBits(*map, ctx.outputType(copy.output), ctx.outputZeroPoint(copy.output));
        copyMapped(ctx.inputBytes(copy.input), ctx.outputBytes(copy.output) + copy.offset * bytes,
                   bytes, copy.axes, pad);
    }
    return okStatus();
}

#define NN_ELEMENT_MAP_EXECUTOR(Stem)             \
    Status execute##Stem(ExecutionContext& ctx) { \
        return executeElementMap(ctx);            \
    }
NN_ELEMENT_MAP_EXECUTOR(Transpose)
NN_ELEMENT_MAP_EXECUTOR(Tile)
NN_ELEMENT_MAP_EXECUTOR(Reverse)
NN_ELEMENT_MAP_EXECUTOR(Split)
NN_ELEMENT_MAP_EXECUTOR(ChannelShuffle)
NN_ELEMENT_MAP_EXECUTOR(Pad)
NN_ELEMENT_MAP_EXECUTOR(PadV2)
NN_ELEMENT_MAP_EXECUTOR(MirrorPad)
NN_ELEMENT_MAP_EXECUTOR(ResizeNearestNeighbor)
NN_ELEMENT_MAP_EXECUTOR(Densify)
NN_ELEMENT_MAP_EXECUTOR(Slice)
NN_ELEMENT_MAP_EXECUTOR(StridedSlice)
NN_ELEMENT_MAP_EXECUTOR(Gather)
NN_ELEMENT_MAP_EXECUTOR(DepthToSpace)
NN_ELEMENT_MAP_EXECUTOR(SpaceToDepth)
NN_ELEMENT_MAP_EXECUTOR(BatchToSpaceNd)
NN_ELEMENT_MAP_EXECUTOR(SpaceToBatchNd)
#undef NN_ELEMENT_MAP_EXECUTOR

}  // namespace nncosim::golden
