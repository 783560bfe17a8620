// NumPy .npy files (format versions 1.0, 2.0 and 3.0): the arrays users feed to `nncosim run
// --input` and get back from `--save-outputs`. Debian ships no C++ .npy library, so this is a
// small reader and writer of the plain numeric dtypes, C order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/Status.h"
#include "model/Types.h"

namespace nncosim::npy {

/// One array: its dtype as a little-endian NumPy descr ("<f4", "|u1", "|b1"...), its shape
/// (empty for a 0-d array) and its elements in C order, little-endian.
struct Array {
    std::string descr;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> data;
};

/// Parses the bytes of a .npy file. Accepts format versions 1.0, 2.0 and 3.0; boolean, signed
/// and unsigned integer (8 to 64 bits) and float (16, 32, 64 bits) dtypes in either byte order
/// (big-endian data is swapped to little-endian); C order, or Fortran order when it lays the
/// elements out the same way (at most one dimension above 1). Fails with INVALID_ARGUMENT naming
/// `origin` and what is wrong: no .npy magic, an unknown version, a malformed header, a
/// structured, string or object dtype, Fortran order, or data shorter or longer than the shape.
Result<Array> parse(const uint8_t* data, size_t size, const std::string& origin);

/// Reads and parses a .npy file: its header first, so that a file that is not a .npy, whose data
/// size differs from its header, or that `checkHeader` refuses (given the array without its
/// data), is refused before its data is read.
Result<Array> readFile(const std::string& path,
                       const std::function<Status(const Array&)>& checkHeader = {});

/// The bytes of a .npy file holding `array`, laid out exactly as NumPy's np.save writes them
/// (version 1.0, or 2.0 when the header needs it; the header padded to 64 bytes).
std::vector<uint8_t> serialize(const Array& array);

/// Writes serialize(array) to `path`. Fails with INVALID_ARGUMENT naming the path when it cannot.
Status writeFile(const std::string& path, const Array& array);

/// Bytes per element of a descr ("<f4" -> 4); 0 when the descr is not one this module reads.
uint32_t itemSize(const std::string& descr);

/// NumPy's name of a descr: "<f4" -> "float32", "|b1" -> "bool"; the descr itself otherwise.
std::string dtypeName(const std::string& descr);

/// The descr holding the values of an NNAPI operand type: TENSOR_FLOAT32 and FLOAT32 "<f4",
/// TENSOR_FLOAT16 and FLOAT16 "<f2", TENSOR_INT32 and INT32 "<i4", UINT32 "<u4",
/// TENSOR_QUANT8_ASYMM "|u1", TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM and
/// TENSOR_QUANT8_SYMM_PER_CHANNEL "|i1", TENSOR_QUANT16_SYMM "<i2", TENSOR_QUANT16_ASYMM "<u2",
/// TENSOR_BOOL8 and BOOL "|b1". Empty for types without values (OEM, SUBGRAPH, extensions).
std::string descrOf(OperandType type);

/// "(1, 28, 28)"-style text of a shape, as NumPy prints it.
std::string shapeText(const std::vector<uint64_t>& shape);

}  // namespace nncosim::npy
