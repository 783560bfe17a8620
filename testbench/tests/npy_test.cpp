// .npy reading and writing (testbench/Npy.h) against bytes NumPy 1.24's np.save wrote, and the
// model input/output files built on it (testbench/TensorFiles.h).
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/Builder.h"
#include "testbench/Npy.h"
#include "testbench/TensorFiles.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;

namespace {

std::vector<uint8_t> fromHex(const std::string& hex) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

/// A .npy file as np.save writes it: version 1.0 magic, the header, the data.
std::vector<uint8_t> npyBytes(const std::string& header, const std::string& dataHex,
                              uint8_t major = 1) {
    std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
    const size_t n = header.size();
    out.push_back(static_cast<uint8_t>(n));
    out.push_back(static_cast<uint8_t>(n >> 8));
    if (major > 1) {
        out.push_back(static_cast<uint8_t>(n >> 16));
        out.push_back(static_cast<uint8_t>(n >> 24));
    }
    out.insert(out.end(), header.begin(), header.end());
    const auto data = fromHex(dataHex);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

std::string padded(const std::string& dict, size_t total) {
    return dict + std::string(total - dict.size() - 1, ' ') + "\n";
}

// np.save(f, np.array([[1.5, -2.0, 3.25], [0, 1e-3, -7]], dtype=np.float32))
const std::vector<uint8_t> kFloat32x2x3 =
    npyBytes(padded("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 118),
             "0000c03f000000c000005040000000006f12833a0000e0c0");
// np.save(f, np.uint8(200))
const std::vector<uint8_t> kUint8Scalar =
    npyBytes(padded("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 118), "c8");
// np.save(f, np.array([True, False, False, True]))
const std::vector<uint8_t> kBool4 =
    npyBytes(padded("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", 118), "01000001");
// np.save(f, np.array([1.0], dtype=np.float16))
const std::vector<uint8_t> kFloat16x1 =
    npyBytes(padded("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", 118), "003c");

std::string writeBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

float floatAt(const std::vector<uint8_t>& bytes, size_t i) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
}

}  // namespace

TEST_CASE("npy_reads_numpy_files") {
    auto a = npy::parse(kFloat32x2x3.data(), kFloat32x2x3.size(), "a.npy");
    REQUIRE_MESSAGE(a.ok(), a.status().message);
    CHECK(a->descr == "<f4");
    CHECK(a->shape == std::vector<uint64_t>{2, 3});
    REQUIRE(a->data.size() == 24);
    CHECK(floatAt(a->data, 0) == 1.5f);
    CHECK(floatAt(a->data, 4) == 1e-3f);
    CHECK(floatAt(a->data, 5) == -7.0f);

    auto s = npy::parse(kUint8Scalar.data(), kUint8Scalar.size(), "s.npy");
    REQUIRE(s.ok());
    CHECK(s->shape.empty());
    CHECK(s->data == std::vector<uint8_t>{200});

    auto b = npy::parse(kBool4.data(), kBool4.size(), "b.npy");
    REQUIRE(b.ok());
    CHECK(b->descr == "|b1");
    CHECK(npy::dtypeName(b->descr) == "bool");

    // Version 2.0 (a 4-byte header length), big-endian int16 swapped to little-endian:
    // numpy.lib.format.write_array(f, np.arange(6, dtype='>i2').reshape(2, 3), version=(2, 0))
    const auto v2 =
        npyBytes(padded("{'descr': '>i2', 'fortran_order': False, 'shape': (2, 3), }", 116),
                 "000000010002000300040005", 2);
    auto big = npy::parse(v2.data(), v2.size(), "v2.npy");
    REQUIRE_MESSAGE(big.ok(), big.status().message);
    CHECK(big->descr == "<i2");
    CHECK(big->data == fromHex("000001000200030004000500"));

    // Fortran order of a vector-shaped array is the same layout; of a matrix it is refused.
    const auto column =
        npyBytes(padded("{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2), }", 118),
                 "0100000002000000");
    CHECK(npy::parse(column.data(), column.size(), "c.npy").ok());
}

TEST_CASE("npy_writes_what_numpy_writes") {
    // Byte for byte what np.save writes for the same arrays (header layout, padding, growth
    // room for the first axis), so both sides read each other's files.
    for (const auto* bytes : {&kFloat32x2x3, &kUint8Scalar, &kBool4, &kFloat16x1}) {
        auto a = npy::parse(bytes->data(), bytes->size(), "x.npy");
        REQUIRE(a.ok());
        CHECK(npy::serialize(*a) == *bytes);
    }
    // A round trip of an empty array and of a file on disk.
    npy::Array empty{"|i1", {1, 0}, {}};
    const auto bytes = npy::serialize(empty);
    CHECK(bytes.size() % 64 == 0);
    auto back = npy::parse(bytes.data(), bytes.size(), "e.npy");
    REQUIRE(back.ok());
    CHECK(back->shape == empty.shape);
    const std::string dir = testing::makeTempDir("nncosim-npy-");
    REQUIRE(npy::writeFile(dir + "/f.npy",
                           *npy::parse(kFloat32x2x3.data(), kFloat32x2x3.size(), "f.npy"))
                .ok());
    auto file = npy::readFile(dir + "/f.npy");
    REQUIRE(file.ok());
    CHECK(file->shape == std::vector<uint64_t>{2, 3});
    CHECK_FALSE(npy::writeFile(dir + "/missing/f.npy", empty).ok());
    std::filesystem::remove_all(dir);
}

TEST_CASE("npy_rejects_what_it_cannot_read") {
    auto message = [](const std::vector<uint8_t>& bytes) {
        auto a = npy::parse(bytes.data(), bytes.size(), "bad.npy");
        REQUIRE_FALSE(a.ok());
        CHECK(a.status().message.rfind("bad.npy: ", 0) == 0);
        return a.status().message;
    };
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(message(fromHex("00112233445566778899")).find("not a .npy file") != std::string::npos);
    CHECK(message(npyBytes(padded(dict, 118), "0000", 4)).find("version 4.0") != std::string::npos);
    // Data shorter or longer than the shape.
    CHECK(message(npyBytes(padded(dict, 118), "0000c03f"))
              .find("4 bytes of data for float32 (2, 3), which needs 24") != std::string::npos);
    auto longer = kFloat32x2x3;
    longer.push_back(0);
    CHECK(message(longer).find("25 bytes of data for float32 (2, 3), which needs 24") !=
          std::string::npos);
    // Fortran order, structured and string dtypes, malformed headers.
    CHECK(
        message(npyBytes(padded("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 118),
                         "000000000000000000000000000000000000000000000000"))
            .find("Fortran-order") != std::string::npos);
    CHECK(message(npyBytes(padded("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                  "'shape': (1,), }",
                                  118),
                           "00000000"))
              .find("structured") != std::string::npos);
    CHECK(message(npyBytes(padded("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", 118),
                           "000000000000000000000000"))
              .find("dtype '<U3' is not supported") != std::string::npos);
    CHECK(message(npyBytes(padded("{'descr': '<f4', 'shape': (1,), }", 118), "00000000"))
              .find("malformed .npy header") != std::string::npos);
    CHECK(
        message(npyBytes(padded("{'descr': '<f4', 'fortran_order': False, 'shape': (1,x), }", 118),
                         "00000000"))
            .find("'shape' is not a tuple") != std::string::npos);
    // A header longer than the file.
    auto truncated = kFloat32x2x3;
    truncated.resize(40);
    CHECK(message(truncated).find("truncated") != std::string::npos);
}

TEST_CASE("npy_model_input_files") {
    // in0: float32 [2,3]; in1: int8 [4] (quantized); in2: float32 [0,3] (unknown batch).
    ModelBuilder b;
    const uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {2, 3});
    const uint32_t q = b.addInput(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {4}, 0.5f, 0);
    const uint32_t u = b.addInput(OperandType::TENSOR_FLOAT32, {0, 3});
    const uint32_t y = b.addOutput(OperandType::TENSOR_FLOAT32, {2, 3});
    b.addOperation(OperationType::ADD, {x, u, b.addInt32(0)}, {y});
    const uint32_t z = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {4}, 0.5f, 0);
    b.addOperation(OperationType::RELU, {q}, {z});
    const Model model = b.build();

    const std::string dir = testing::makeTempDir("nncosim-npy-");
    const std::string f32 = writeBytes(dir + "/x.npy", kFloat32x2x3);
    const std::string raw = writeBytes(dir + "/q.bin", {1, 0xff, 3, 0x80});

    auto inputs = readInputFiles(model, {f32, raw, f32}, {"x", "q", "u"});
    REQUIRE_MESSAGE(inputs.ok(), inputs.status().message);
    CHECK((*inputs)[0].dimensions == std::vector<uint32_t>{2, 3});
    CHECK(floatAt((*inputs)[0].bytes, 2) == 3.25f);
    CHECK((*inputs)[1].bytes == std::vector<uint8_t>{1, 0xff, 3, 0x80});
    CHECK((*inputs)[2].dimensions == std::vector<uint32_t>{2, 3});  // the file fills the 0

    auto error = [&](const std::vector<std::string>& paths) {
        auto r = readInputFiles(model, paths, {"x", "q", "u"});
        REQUIRE_FALSE(r.ok());
        CHECK(r.status().code == ErrorStatus::INVALID_ARGUMENT);
        return r.status().message;
    };
    // Wrong count: lists every input.
    std::string m = error({f32});
    CHECK(m.find("1 input file given, but the model has 3 inputs") != std::string::npos);
    CHECK(m.find("input 2 'u' (operand 2, TENSOR_FLOAT32 [0,3])") != std::string::npos);
    // Wrong dtype: names the input, the dtype expected and how to convert.
    const std::string u8 = writeBytes(dir + "/u8.npy", kUint8Scalar);
    m = error({f32, u8, f32});
    CHECK(m.find("input 1 'q' (operand 1, TENSOR_QUANT8_ASYMM_SIGNED [4])") == 0);
    CHECK(m.find("holds uint8, expected int8 ('|i1'); convert it with a.astype(np.int8)") !=
          std::string::npos);
    // Wrong shape.
    const std::string f16 = writeBytes(dir + "/f16.npy", kFloat16x1);
    m = error({f16, raw, f32});
    CHECK(m.find("holds float16, expected float32") != std::string::npos);
    npy::Array wrongShape{"<f4", {3, 2}, std::vector<uint8_t>(24)};
    REQUIRE(npy::writeFile(dir + "/s.npy", wrongShape).ok());
    m = error({dir + "/s.npy", raw, f32});
    CHECK(m.find("has shape (3, 2), expected (2, 3)") != std::string::npos);
    m = error({f32, raw, dir + "/s.npy"});
    CHECK(m.find("has shape (3, 2), expected (?, 3)") != std::string::npos);
    // Wrong raw size, raw bytes for unknown dimensions, a missing file.
    const std::string raw3 = writeBytes(dir + "/q3.bin", {1, 2, 3});
    m = error({f32, raw3, f32});
    CHECK(m.find("has 3 bytes, expected 4 (raw int8 (4,)") != std::string::npos);
    m = error({f32, raw, raw});
    CHECK(m.find("input 2 'u' (operand 2, TENSOR_FLOAT32 [0,3]) has unknown dimensions") == 0);
    m = error({dir + "/none.npy", raw, f32});
    CHECK(m.find("cannot open file") != std::string::npos);

    // Outputs: written with their dtype, read back by the reader (and by NumPy, same bytes).
    TensorData out{{2, 3}, std::vector<uint8_t>(kFloat32x2x3.end() - 24, kFloat32x2x3.end())};
    REQUIRE(writeTensorFile(dir + "/out.npy", OperandType::TENSOR_FLOAT32, out).ok());
    std::ifstream written(dir + "/out.npy", std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(written)),
                                     std::istreambuf_iterator<char>());
    CHECK(bytes == kFloat32x2x3);
    TensorData flags{{4}, {1, 0, 0, 1}};
    REQUIRE(writeTensorFile(dir + "/b.npy", OperandType::TENSOR_BOOL8, flags).ok());
    auto bools = npy::readFile(dir + "/b.npy");
    REQUIRE(bools.ok());
    CHECK(bools->descr == "|b1");
    CHECK_FALSE(writeTensorFile(dir + "/c.npy", OperandType::TENSOR_FLOAT32, flags).ok());
    std::filesystem::remove_all(dir);
}

TEST_CASE("npy_refuses_from_the_header") {
    // A model whose one input is float32 [1]: 4 bytes.
    ModelBuilder b;
    const uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {1});
    const uint32_t y = b.addOutput(OperandType::TENSOR_FLOAT32, {1});
    b.addOperation(OperationType::RELU, {x}, {y});
    const Model model = b.build();
    const std::string dir = testing::makeTempDir("nncosim-npy-");
    auto error = [&](const std::string& path) {
        auto r = readInputFiles(model, {path}, {"x"});
        REQUIRE_FALSE(r.ok());
        return r.status().message;
    };

    // 6 GiB of float32 (a sparse file): refused from its header, its data never read.
    const auto header = npyBytes(
        padded("{'descr': '<f4', 'fortran_order': False, 'shape': (1610612736,), }", 118), "");
    const std::string huge = writeBytes(dir + "/huge.npy", header);
    std::filesystem::resize_file(huge, header.size() + (uint64_t{6} << 30));
    std::string m = error(huge);
    CHECK(m.find("huge.npy has shape (1610612736,), expected (1,)") != std::string::npos);
    CHECK(m.find("memory-limit") == std::string::npos);

    // A folder with a .npy name.
    std::filesystem::create_directories(dir + "/folder.npy");
    CHECK(error(dir + "/folder.npy").find("folder.npy: is a folder") != std::string::npos);

    // A 10 MB header: refused by its announced length, as NumPy does.
    const auto longHeader =
        npyBytes(padded("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 10'000'000),
                 "00000000", 2);
    m = error(writeBytes(dir + "/long.npy", longHeader));
    CHECK(m.find("a .npy header of 10000000 bytes (NumPy reads at most 10000)") !=
          std::string::npos);

    // Terminal escapes and a long header quoted in an error: escaped and cut.
    const std::string hostile =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
        "'\x1b[2J\x1b[31mred': 1, " +
        std::string(500, 'z') + "}";
    m = error(writeBytes(dir + "/escape.npy", npyBytes(padded(hostile, 700), "00000000")));
    CHECK(m.find("malformed .npy header") != std::string::npos);
    CHECK(m.find('\x1b') == std::string::npos);
    CHECK(m.find("\\x1b[2J") != std::string::npos);
    CHECK(m.size() < 400);
    std::filesystem::remove_all(dir);
}
