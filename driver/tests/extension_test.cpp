// The vendor extension com.nncosim.npu: LUT8 on the NPU's lookup-table unit, checked against
// the golden, and its own validation.
#include "driver/tests/TestUtil.h"
#include "golden/Executor.h"
#include "model/NpuExtension.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

constexpr uint16_t kPrefix = 7;

// LUT8 over a [2, 128] tensor with table[i] = 255 - i (as raw bytes of the output type).
Model lutModel(OperandType type, std::vector<uint32_t> tableDims = {256},
               bool constantTable = true) {
    ModelBuilder b;
    const uint32_t in =
        b.addInput(type, {2, 128}, 0.5f, type == OperandType::TENSOR_QUANT8_ASYMM ? 128 : 0);
    std::vector<uint8_t> table(256);
    for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(255 - i);
    const auto tableType =
        static_cast<OperandType>(makeExtensionType(kPrefix, npu_extension::kLutTable));
    uint32_t t;
    if (constantTable) {
        t = b.addConstantBytes(tableType, std::move(tableDims), table.data(), table.size());
    } else {
        t = b.addInput(tableType, std::move(tableDims));
    }
    const uint32_t out = b.addOutput(type, {2, 128}, 0.25f, 3);
    b.addOperation(static_cast<OperationType>(makeExtensionType(kPrefix, npu_extension::kLut8)),
                   {in, t}, {out});
    Model m = b.build();
    m.extensionNameToPrefix.push_back({std::string(npu_extension::kName), kPrefix});
    return m;
}

}  // namespace

TEST_CASE("driver_extension_lut8_matches_golden") {
    auto t = makeTestDevice();
    for (OperandType type :
         {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
        CAPTURE(nameOf(type));
        const Model model = lutModel(type);
        REQUIRE(validateModel(model).ok());
        auto supported = t.device->getSupportedOperations(model);
        REQUIRE(supported.ok());
        CHECK(*supported == std::vector<bool>{true});
        auto prepared = prepare(*t.device, model);
        auto r = makeRequest({256}, {256});
        TensorData input{{2, 128}, std::vector<uint8_t>(256)};
        for (int i = 0; i < 256; ++i) r.input(0)[i] = input.bytes[i] = static_cast<uint8_t>(i * 7);
        auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        auto golden = golden::execute(model, {input});
        REQUIRE_MESSAGE(golden.ok(), golden.status().message);
        REQUIRE((*golden)[0].bytes.size() == 256);
        for (int i = 0; i < 256; ++i) {
            // table[value - lowest]: for uint8 byte b it is 255 - b, for int8 255 - (b ^ 0x80).
            const uint8_t b = input.bytes[i];
            const uint8_t expected =
                type == OperandType::TENSOR_QUANT8_ASYMM ? 255 - b : 255 - (b ^ 0x80);
            CHECK(r.output(0)[i] == expected);
            CHECK((*golden)[0].bytes[i] == expected);
        }
    }
}

TEST_CASE("driver_extension_lut8_validation") {
    auto t = makeTestDevice();
    auto invalid = [&](const Model& model) {
        CHECK(t.device->getSupportedOperations(model).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
        CHECK(prepareModelBlocking(*t.device, model).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
    };
    invalid(lutModel(OperandType::TENSOR_QUANT8_ASYMM, {255}));
    invalid(lutModel(OperandType::TENSOR_QUANT8_ASYMM, {16, 16}));
    invalid(lutModel(OperandType::TENSOR_QUANT8_ASYMM, {256}, /*constantTable=*/false));
    Model wrongOutput = lutModel(OperandType::TENSOR_QUANT8_ASYMM);
    wrongOutput.main.operands[wrongOutput.main.outputIndexes[0]].type =
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    wrongOutput.main.operands[wrongOutput.main.outputIndexes[0]].zeroPoint = 0;
    invalid(wrongOutput);
    Model unknownOperation = lutModel(OperandType::TENSOR_QUANT8_ASYMM);
    unknownOperation.main.operations[0].type =
        static_cast<OperationType>(makeExtensionType(kPrefix, 9));
    invalid(unknownOperation);
    // Another vendor's extension is valid NNAPI but not supported here.
    Model other = lutModel(OperandType::TENSOR_QUANT8_ASYMM);
    other.extensionNameToPrefix[0].name = "com.example.other";
    auto supported = t.device->getSupportedOperations(other);
    REQUIRE(supported.ok());
    CHECK(*supported == std::vector<bool>{false});
}
