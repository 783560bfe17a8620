// The model zoo: MobileNet-v1, MobileNet-v2 and ResNet-18 shaped classifiers and DeepLab- and
// SSD-like segmentation and detection heads with deterministic synthetic weights, in float32 and
// quant8, for demos, benchmarks and regression; optionally in the form model converters write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::zoo {

enum class Network { kMobileNetV1, kMobileNetV2, kResNet18, kDeepLabHead, kSsdHead };

enum class Precision {
    kFloat32,
    kFloat16,           ///< TENSOR_FLOAT16 activations and weights (rounded from the float32 ones)
    kRelaxed,           ///< float32, relaxComputationFloat32toFloat16: float16 range and precision
                        ///< allowed
    kQuant8,            ///< TENSOR_QUANT8_ASYMM activations and per-tensor weights
    kQuant8PerChannel,  ///< TENSOR_QUANT8_ASYMM activations, TENSOR_QUANT8_SYMM_PER_CHANNEL
                        ///< conv weights (FULLY_CONNECTED stays per-tensor, as NNAPI requires)
};

struct ZooConfig {
    Network network = Network::kMobileNetV1;
    Precision precision = Precision::kFloat32;
    uint32_t inputSize = 224;      ///< input height and width (NHWC [1, size, size, 3])
    float widthMultiplier = 1.0f;  ///< scales every layer's channel count (MobileNet's alpha)
    uint32_t numClasses = 1000;    ///< classifiers only; the heads have their datasets' classes
    uint32_t seed = 1;
    /// The form a PyTorch -> TFLite conversion writes: an NCHW input [1, 3, size, size] with a
    /// TRANSPOSE to NHWC, an explicit PAD before every convolution with a kernel over 1 (the
    /// convolution itself VALID), and MEAN as the global average.
    bool converterStyle = false;
};

/// "mobilenet_v1", "mobilenet_v2", "resnet18", "deeplab_head", "ssd_head".
std::string nameOf(Network network);
std::optional<Network> networkFromName(std::string_view name);
const std::vector<Network>& allNetworks();
/// The classifiers: one output [1, numClasses] of SOFTMAX probabilities.
const std::vector<Network>& classifierNetworks();
/// "float32", "quant8", "quant8_per_channel".
std::string nameOf(Precision precision);

/// A descriptive name, e.g. "mobilenet_v1_1.0_224_quant8" ("..._quant8_converter" in converter
/// style).
std::string modelName(const ZooConfig& config);

/// Builds the network: NHWC, batch 1, one input [1, size, size, 3] (quant8: scale 1/128,
/// zero point 128, i.e. reals in [-1, 1)). A classifier has one output [1, numClasses] of
/// SOFTMAX probabilities. The DeepLab-like head (a two-convolution stem to 1/4 of the input, an
/// atrous pyramid of a 1x1 and 3x3 convolutions dilated 2 and 4 and an image-pooling branch
/// resized back by RESIZE_BILINEAR, CONCATENATION, a 1x1 classifier) outputs 21 class logits per
/// input pixel through RESIZE_BILINEAR. The SSD-like head (a stem to 1/8 and 1/16 of the input,
/// 3x3 box and class convolutions with 3 anchors per position, RESHAPE and CONCATENATION over
/// both maps) outputs boxes [1, anchors, 4] and LOGISTIC scores of 91 classes
/// [1, anchors, 91]. Weights are drawn from `seed` and normalized per output channel (like
/// folded batch normalization) so that every pre-activation has a chosen mean and spread for
/// inputs uniform in [-1, 1]; quant8 tensors get scales covering ±4 standard deviations of
/// the values they hold, so activations do not saturate. Constants over 128 bytes live in a
/// shared-memory pool (CONSTANT_REFERENCE), as the NNAPI runtime sends them.
/// Fails with INVALID_ARGUMENT on a zero size, a non-positive width multiplier or no classes.
Result<Model> buildZooModel(const ZooConfig& config);

/// Multiply-accumulates of the main graph's CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
/// operations (e.g. about 569 M for MobileNet-v1 at 224).
uint64_t countMacs(const Model& model);

/// Random values for every main-graph input of `model`, drawn from `seed`: TENSOR_FLOAT32
/// uniform in [-1, 1], TENSOR_QUANT8_ASYMM uniform over 0..255. Fails with INVALID_ARGUMENT
/// for other input types or unknown dimensions.
Result<std::vector<TensorData>> randomInputs(const Model& model, uint32_t seed);

}  // namespace nncosim::zoo
