// The converter-produced .tflite files of ../shared/models (see its README) through the CLI:
// every model NNAPI can express imports and runs under `run --backend auto` with outputs
// identical to the golden (quantized) or within the CTS float tolerance; the integer forms of
// SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM, which NNAPI lacks, fail naming the operator and why;
// `run --input/--save-outputs` feed and keep real tensors; `convert` makes a model a CTS test
// that `validate`, `cts` and `run` read back.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/CtsReader.h"
#include "testbench/Npy.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

std::string modelPath(const std::string& name) {
    return std::string(NNCOSIM_MODELS_DIR) + "/" + name + ".tflite";
}

/// Runs `nncosim ARGS` with its output captured in `dir`.
class TempDir {
  public:
    TempDir() : mPath(testing::makeTempDir("nncosim-models-")) { REQUIRE_FALSE(mPath.empty()); }
    ~TempDir() { std::filesystem::remove_all(mPath); }
    const std::string& path() const { return mPath; }

  private:
    std::string mPath;
};

/// `run MODEL --backend auto` on random inputs passes: quantized outputs identical to the
/// golden, float outputs within the float rule; `npuOperations` ran on the NPU.
void checkRunsUnderAuto(const std::string& name, size_t npuOperations) {
    TempDir dir;
    const std::string json = dir.path() + "/report.json";
    const CliResult r =
        cli(dir.path(), "run " + modelPath(name) + " --backend auto --json " + json);
    INFO(r.output);
    CHECK(r.status == 0);
    const nlohmann::json report = readJson(json);
    CHECK(report["verdict"] == "pass");
    size_t onNpu = 0;
    for (const auto& op : report["operations"]) onNpu += op["device"] == "npu";
    CHECK(onNpu == npuOperations);
    REQUIRE_FALSE(report["outputs"].empty());
    for (const auto& out : report["outputs"]) {
        CHECK(out["verdict"] == "match");
        CHECK(out["mismatches"] == 0);
        const std::string type = out["type"];
        if (type == "TENSOR_FLOAT32") {
            CHECK(out["tolerance"]["worst_fraction_used"].get<double>() <= 1.0);
            CHECK(out.contains("max_rel_error"));
            CHECK(out.contains("max_ulp_error"));
        } else {
            CHECK(out["max_abs_error"] == 0.0);  // identical
        }
    }
}

/// An image of a stroke drawn for the MNIST LSTM: 28 x 28 floats in [0, 1].
std::string writeDigit(const std::string& path, bool zero) {
    npy::Array a{"<f4", {1, 28, 28}, std::vector<uint8_t>(28 * 28 * 4)};
    auto set = [&](int y, int x) {
        const float one = 1.0f;
        std::memcpy(a.data.data() + 4 * (y * 28 + x), &one, 4);
    };
    if (zero) {  // an ellipse
        for (int t = 0; t < 200; ++t) {
            const double th = 2 * 3.14159265358979 * t / 200;
            const int y = static_cast<int>(14 + 8 * std::sin(th));
            const int x = static_cast<int>(14 + 6 * std::cos(th));
            set(y, x);
            set(y, x + 1);
        }
    } else {  // a vertical bar
        for (int y = 4; y < 24; ++y) {
            set(y, 13);
            set(y, 14);
        }
    }
    REQUIRE(npy::writeFile(path, a).ok());
    return path;
}

size_t argmax(const npy::Array& a) {
    REQUIRE(a.descr == "<f4");
    std::vector<float> v(a.data.size() / 4);
    std::memcpy(v.data(), a.data.data(), a.data.size());
    return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST_CASE("models_hello_world_float_runs") {
    checkRunsUnderAuto("hello_world_float", 3);  // three float FULLY_CONNECTED layers
}
TEST_CASE("models_hello_world_int8_runs") {
    checkRunsUnderAuto("hello_world_int8", 3);
}
TEST_CASE("models_micro_speech_quantized_runs") {
    checkRunsUnderAuto("micro_speech_quantized", 4);  // every operation, the SOFTMAX too
}
TEST_CASE("models_simple_add_model_runs") {
    checkRunsUnderAuto("simple_add_model", 1);
}
TEST_CASE("models_trained_lstm_runs") {
    checkRunsUnderAuto("trained_lstm", 3);  // the LSTM on the CPU
}

TEST_CASE("models_integer_recurrent_forms_are_refused") {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"trained_lstm_int8", "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)"},
        {"dtln_noise_suppression", "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)"},
        {"keyword_scrambled", "operator 1 (SVDF)"},
        {"keyword_scrambled_8bit", "operator 1 (SVDF)"},
    };
    for (const auto& [name, op] : cases) {
        const CliResult r = cli(dir.path(), "run " + modelPath(name) + " --backend auto");
        INFO(name, ": ", r.output);
        CHECK(r.status == 2);
        CHECK(r.output.find(op + ": the integer (INT8) form has no NNAPI equivalent: NNAPI's ") !=
              std::string::npos);
        CHECK(r.output.find("takes only float32 or float16 tensors") != std::string::npos);
    }
}

TEST_CASE("models_run_with_input_files_and_saved_outputs") {
    // The MNIST LSTM reads a drawn 1 and a drawn 0 fed as .npy files; the saved outputs are the
    // device's and the golden's softmax (within the float rule: the classifier runs on the NPU).
    TempDir dir;
    const std::string model = modelPath("trained_lstm");
    for (const bool zero : {false, true}) {
        const std::string image = writeDigit(dir.path() + "/digit.npy", zero);
        const std::string out = dir.path() + (zero ? "/zero" : "/one");
        const CliResult r =
            cli(dir.path(), "run " + model + " --input " + image + " --save-outputs " + out +
                                " --json " + out + ".json");
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK(r.output.find("inputs: " + image) != std::string::npos);
        auto device = npy::readFile(out + "/output_0.npy");
        auto golden = npy::readFile(out + "/golden_0.npy");
        REQUIRE(device.ok());
        REQUIRE(golden.ok());
        CHECK(device->shape == std::vector<uint64_t>{1, 10});
        CHECK(argmax(*device) == (zero ? 0u : 1u));
        CHECK(argmax(*golden) == argmax(*device));
        const nlohmann::json report = readJson(out + ".json");
        CHECK(report["verdict"] == "pass");
        CHECK(report["saved_outputs"]["device"][0] == out + "/output_0.npy");
    }

    // An int8 model: raw bytes work; a float file for the quantized input is refused naming the
    // input (TFLite's tensor name), the dtype expected and its quantization; so is a wrong count.
    const std::string int8Model = modelPath("hello_world_int8");
    std::ofstream(dir.path() + "/x.bin", std::ios::binary) << char(40);
    CliResult r =
        cli(dir.path(), "run " + int8Model + " --input " + dir.path() + "/x.bin --save-outputs " +
                            dir.path() + "/int8 --compare none");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(std::filesystem::exists(dir.path() + "/int8/output_0.npy"));
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/int8/golden_0.npy"));
    r = cli(dir.path(), "run " + int8Model + " --input " + dir.path() + "/digit.npy");
    CHECK(r.status == 2);
    CHECK(r.output.find("input 0 'serving_default_dense_input:0' (operand 0, "
                        "TENSOR_QUANT8_ASYMM_SIGNED [1,1]): ") != std::string::npos);
    CHECK(r.output.find("holds float32, expected int8 ('|i1'); it is quantized with scale") !=
          std::string::npos);
    r = cli(dir.path(),
            "run " + int8Model + " --input " + dir.path() + "/x.bin " + dir.path() + "/x.bin");
    CHECK(r.status == 2);
    CHECK(r.output.find("2 input files given, but the model has 1 input") != std::string::npos);
}

TEST_CASE("models_convert_round_trip") {
    // Imported models become CTS tests: validate and cts (auto: NPU where it can) read them back,
    // and run on them compares against the inputs and golden outputs they carry.
    TempDir dir;
    const std::string d = dir.path();
    const std::string image = writeDigit(d + "/digit.npy", false);
    CliResult r = cli(d, "convert " + modelPath("trained_lstm") + " --input " + image + " -o " + d +
                             "/lstm.json");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("trained_lstm: 4 operations, inputs from 1 file, 1 golden output") !=
          std::string::npos);
    r = cli(
        d, "convert " + modelPath("micro_speech_quantized") + " --seed 7 -o " + d + "/speech.json");
    REQUIRE(r.status == 0);
    CHECK(r.output.find("random inputs (seed 7)") != std::string::npos);

    r = cli(d, "validate " + d);
    CHECK(r.status == 0);
    CHECK(r.output.find("2 valid, 0 invalid") != std::string::npos);
    r = cli(d, "cts --backend auto -j 1 --summary " + d + "/summary.json " + d);
    CHECK(r.status == 0);
    const nlohmann::json summary = readJson(d + "/summary.json");
    CHECK(summary["total"] == 2);
    CHECK(summary["passed"] == 2);

    // The file holds the image as the input and the golden's outputs as expected outputs: a
    // run of the .tflite on the same image saves the same bytes.
    auto file = readCtsFile(d + "/lstm.json");
    REQUIRE(file.ok());
    REQUIRE(file->tests.size() == 1);
    const CtsTest& test = file->tests[0];
    auto imageArray = npy::readFile(image);
    REQUIRE(imageArray.ok());
    REQUIRE(test.inputs.size() == 1);
    CHECK(test.inputs[0].bytes == imageArray->data);
    r = cli(d, "run " + modelPath("trained_lstm") + " --input " + image + " --save-outputs " + d +
                   "/out");
    REQUIRE(r.status == 0);
    auto golden = npy::readFile(d + "/out/golden_0.npy");
    REQUIRE(golden.ok());
    REQUIRE(test.expectedOutputs.size() == 1);
    CHECK(test.expectedOutputs[0].bytes == golden->data);

    // Same seed, same random inputs as `run`: the converted speech test reproduces run's golden.
    r = cli(d, "run " + modelPath("micro_speech_quantized") + " --seed 7 --save-outputs " + d +
                   "/speech");
    REQUIRE(r.status == 0);
    auto speech = readCtsFile(d + "/speech.json");
    REQUIRE(speech.ok());
    auto speechGolden = npy::readFile(d + "/speech/golden_0.npy");
    REQUIRE(speechGolden.ok());
    CHECK(speech->tests[0].expectedOutputs[0].bytes == speechGolden->data);

    // What cannot be converted fails with status 2 and the reason.
    r = cli(d, "convert " + modelPath("keyword_scrambled") + " -o " + d + "/kw.json");
    CHECK(r.status == 2);
    CHECK(r.output.find("operator 1 (SVDF)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(d + "/kw.json"));
}
