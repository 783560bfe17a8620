// Fuzz target: .tflite bytes -> importTflite -> validateModel of the converted model.
#include "fuzz/FuzzCommon.h"
#include "model/Validation.h"
#include "testbench/tflite/TfliteImporter.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Result<TfliteImport> imported = importTflite(data, size, "fuzz.tflite");
    if (!imported.ok()) return 0;
    (void)validateModel(imported.value().model);
    return 0;
}
