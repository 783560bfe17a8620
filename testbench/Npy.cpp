#include "testbench/Npy.h"
#include "model/OutputFile.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace nncosim::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLength = 6;
constexpr size_t kAlign = 64;  // NumPy's ARRAY_ALIGN
// NumPy leaves room for the growing axis to be rewritten in place (GROWTH_AXIS_MAX_DIGITS).
constexpr size_t kGrowthAxisDigits = 21;

uint64_t elementCount(const std::vector<uint64_t>& shape) {
    uint64_t n = 1;
    for (uint64_t d : shape) {
        if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d)
            return std::numeric_limits<uint64_t>::max();
        n *= d;
    }
    return n;
}

/// At most the first 120 characters of `text`, non-printable bytes as \xNN: a header quoted in a
/// message can neither flood a terminal nor steer it.
std::string printableExcerpt(const std::string& text) {
    constexpr size_t kShown = 120;
    std::string out;
    for (size_t i = 0; i < text.size() && i < kShown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
        } else {
            static const char kHex[] = "0123456789abcdef";
            out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
        }
    }
    if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

/// A cursor over the header's Python dict literal.
class HeaderParser {
  public:
    HeaderParser(const std::string& text, const std::string& origin)
        : mText(text), mOrigin(origin) {}

    Result<Array> parse() {
        Array a;
        bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
        skipSpace();
        if (!take('{')) return error("the header is not a dict");
        for (;;) {
            skipSpace();
            if (take('}')) break;
            std::string key;
            if (!quoted(&key)) return error("expected a quoted key");
            skipSpace();
            if (!take(':')) return error("expected ':' after '", key, "'");
            skipSpace();
            if (key == "descr") {
                if (peek() == '[' || peek() == '(')
                    return error("structured dtypes (records) are not supported");
                if (!quoted(&a.descr)) return error("'descr' is not a string");
                haveDescr = true;
            } else if (key == "fortran_order") {
                if (word("True")) {
                    fortran = true;
                } else if (!word("False")) {
                    return error("'fortran_order' is neither True nor False");
                }
                haveOrder = true;
            } else if (key == "shape") {
                if (!shape(&a.shape)) return error("'shape' is not a tuple of integers");
                haveShape = true;
            } else {
                return error("unexpected key '", key, "'");
            }
            skipSpace();
            if (take('}')) break;
            if (!take(',')) return error("expected ',' or '}'");
        }
        if (!haveDescr || !haveOrder || !haveShape)
            return error("the header lacks 'descr', 'fortran_order' or 'shape'");
        if (fortran) {
            const auto above1 =
                std::count_if(a.shape.begin(), a.shape.end(), [](uint64_t d) { return d > 1; });
            if (above1 > 1)
                return invalidArgument(mOrigin, ": Fortran-order arrays are not supported; save ",
                                       "a C-order array (np.ascontiguousarray)");
        }
        return a;
    }

  private:
    template <typename... Parts>
    Status error(const Parts&... parts) const {
        std::ostringstream what;
        (what << ... << parts);
        return invalidArgument(mOrigin, ": malformed .npy header (", printableExcerpt(what.str()),
                               "): ", printableExcerpt(mText));
    }
    char peek() const { return mPos < mText.size() ? mText[mPos] : '\0'; }
    bool take(char c) {
        if (peek() != c) return false;
        ++mPos;
        return true;
    }
    void skipSpace() {
        while (mPos < mText.size() && std::isspace(static_cast<unsigned char>(mText[mPos]))) ++mPos;
    }
    bool word(const char* w) {
        const std::string s(w);
        if (mText.compare(mPos, s.size(), s) != 0) return false;
        mPos += s.size();
        return true;
    }
    bool quoted(std::string* out) {
        const char q = peek();
        if (q != '\'' && q != '"') return false;
        const size_t end = mText.find(q, mPos + 1);
        if (end == std::string::npos) return false;
        *out = mText.substr(mPos + 1, end - mPos - 1);
        mPos = end + 1;
        return true;
    }
    bool shape(std::vector<uint64_t>* out) {
        if (!take('(')) return false;
        for (;;) {
            skipSpace();
            if (take(')')) return true;
            if (!std::isdigit(static_cast<unsigned char>(peek()))) return false;
            uint64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const uint64_t digit = static_cast<uint64_t>(mText[mPos++] - '0');
                if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
                v = v * 10 + digit;
            }
            if (peek() == 'L') ++mPos;  // Python 2 longs
            out->push_back(v);
            skipSpace();
            if (take(')')) return true;
            if (!take(',')) return false;
        }
    }

    const std::string& mText;
    const std::string& mOrigin;
    size_t mPos = 0;
};

/// The descr with its byte order made explicit little-endian ('<'; '|' for one-byte types), or
/// empty when the type is not one this module reads. `swap` tells whether data must be swapped.
std::string normalizeDescr(const std::string& descr, bool* swap) {
    *swap = false;
    if (descr.size() < 3) return {};
    const char order = descr[0];
    const std::string kind = descr.substr(1);
    static const std::vector<std::string> kKinds = {"b1", "i1", "u1", "i2", "u2", "f2",
                                                    "i4", "u4", "f4", "i8", "u8", "f8"};
    if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end()) return {};
    if (order != '<' && order != '>' && order != '|' && order != '=') return {};
    const bool single = kind[1] == '1';
    if (single) return "|" + kind;
    if (order == '|') return {};  // a multi-byte type needs a byte order
    *swap = order == '>';
    return "<" + kind;
}

}  // namespace

uint32_t itemSize(const std::string& descr) {
    bool swap;
    const std::string d = normalizeDescr(descr, &swap);
    return d.empty() ? 0 : static_cast<uint32_t>(d[2] - '0');
}

std::string dtypeName(const std::string& descr) {
    bool swap;
    const std::string d = normalizeDescr(descr, &swap);
    if (d.empty()) return descr;
    if (d == "|b1") return "bool";
    const char kind = d[1];
    const int bits = 8 * (d[2] - '0');
    const char* base = kind == 'f' ? "float" : kind == 'i' ? "int" : "uint";
    return base + std::to_string(bits);
}

std::string shapeText(const std::vector<uint64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) s += ",";
    return s + ")";
}

std::string descrOf(OperandType type) {
    switch (type) {
        case OperandType::FLOAT32:
        case OperandType::TENSOR_FLOAT32:
            return "<f4";
        case OperandType::FLOAT16:
        case OperandType::TENSOR_FLOAT16:
            return "<f2";
        case OperandType::INT32:
        case OperandType::TENSOR_INT32:
            return "<i4";
        case OperandType::UINT32:
            return "<u4";
        case OperandType::TENSOR_QUANT8_ASYMM:
            return "|u1";
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
            return "|i1";
        case OperandType::TENSOR_QUANT16_SYMM:
            return "<i2";
        case OperandType::TENSOR_QUANT16_ASYMM:
            return "<u2";
        case OperandType::BOOL:
        case OperandType::TENSOR_BOOL8:
            return "|b1";
        default:
            return {};
    }
}

namespace {

// NumPy's own limit on the header it reads (np.load's max_header_size).
constexpr uint64_t kMaxHeaderLength = 10000;

/// The header of a .npy file of `fileSize` bytes whose first bytes are `prefix` (at least the
/// whole header when it fits): the array without its data, checked against the file's size.
/// `swap`: the data is big-endian.
Result<Array> parseHeader(const uint8_t* prefix, size_t prefixSize, uint64_t fileSize,
                          const std::string& origin, size_t* dataStart, bool* swap) {
    if (prefixSize < kMagicLength + 2 || std::memcmp(prefix, kMagic, kMagicLength) != 0)
        return invalidArgument(origin, ": not a .npy file (it does not start with \\x93NUMPY)");
    const uint8_t major = prefix[6], minor = prefix[7];
    if (major < 1 || major > 3 || minor != 0)
        return invalidArgument(origin, ": .npy format version ", int(major), ".", int(minor),
                               " is not supported (1.0, 2.0 or 3.0)");
    const size_t lengthBytes = major == 1 ? 2 : 4;
    if (prefixSize < 8 + lengthBytes) return invalidArgument(origin, ": truncated .npy header");
    uint64_t headerLength = 0;
    for (size_t i = 0; i < lengthBytes; ++i)
        headerLength |= static_cast<uint64_t>(prefix[8 + i]) << (8 * i);
    const size_t headerStart = 8 + lengthBytes;
    if (headerLength > kMaxHeaderLength)
        return invalidArgument(origin, ": a .npy header of ", headerLength,
                               " bytes (NumPy reads at most ", kMaxHeaderLength, ")");
    if (headerLength > prefixSize - headerStart)
        return invalidArgument(origin, ": truncated .npy header (", headerLength,
                               " bytes announced, ", prefixSize - headerStart, " in the file)");
    const std::string header(reinterpret_cast<const char*>(prefix + headerStart), headerLength);
    auto array = HeaderParser(header, origin).parse();
    if (!array) return array.status();

    const std::string descr = normalizeDescr(array->descr, swap);
    if (descr.empty())
        return invalidArgument(origin, ": dtype '", printableExcerpt(array->descr),
                               "' is not supported (bool, int8-64, uint8-64, float16/32/64)");
    array->descr = descr;
    const uint32_t item = itemSize(descr);
    const uint64_t count = elementCount(array->shape);
    *dataStart = headerStart + headerLength;
    const uint64_t available = fileSize - *dataStart;
    if (count > available / item || count * item != available) {
        const bool huge = count > std::numeric_limits<uint64_t>::max() / item;
        return invalidArgument(origin, ": ", available, " bytes of data for ", dtypeName(descr),
                               " ", shapeText(array->shape), ", which needs ",
                               huge ? std::string("more than 2^64") : std::to_string(count * item));
    }
    return array;
}

/// Big-endian data to little-endian, element by element.
void swapBytes(Array& array) {
    const uint32_t item = itemSize(array.descr);
    for (size_t i = 0; i < array.data.size(); i += item)
        std::reverse(array.data.begin() + i, array.data.begin() + i + item);
}

}  // namespace

Result<Array> parse(const uint8_t* data, size_t size, const std::string& origin) {
    size_t dataStart = 0;
    bool swap = false;
    auto array = parseHeader(data, size, size, origin, &dataStart, &swap);
    if (!array) return array.status();
    array->data.assign(data + dataStart, data + size);
    if (swap) swapBytes(*array);
    return array;
}

Result<Array> readFile(const std::string& path,
                       const std::function<Status(const Array&)>& checkHeader) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return invalidArgument(path, ": is a folder, not a .npy file");
    std::ifstream file(path, std::ios::binary);
    if (!file) return invalidArgument(path, ": cannot open file");
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) return invalidArgument(path, ": cannot read file (", ec.message(), ")");
    // The header first: a wrong file is refused before its data is read.
    std::vector<uint8_t> bytes(
        static_cast<size_t>(std::min<uint64_t>(size, 12 + kMaxHeaderLength)));
    file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (static_cast<size_t>(file.gcount()) != bytes.size())
        return invalidArgument(path, ": read error");
    size_t dataStart = 0;
    bool swap = false;
    auto array = parseHeader(bytes.data(), bytes.size(), size, path, &dataStart, &swap);
    if (!array) return array.status();
    if (checkHeader) NN_RETURN_IF_ERROR(checkHeader(*array));
    const uint64_t dataBytes = size - dataStart;
    array->data.resize(static_cast<size_t>(dataBytes));
    const size_t inPrefix = bytes.size() - dataStart;
    std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end(),
              array->data.begin());
    file.read(reinterpret_cast<char*>(array->data.data() + inPrefix),
              static_cast<std::streamsize>(dataBytes - inPrefix));
    if (static_cast<uint64_t>(file.gcount()) != dataBytes - inPrefix)
        return invalidArgument(path, ": read error (the file changed while read?)");
    if (swap) swapBytes(*array);
    return array;
}

std::vector<uint8_t> serialize(const Array& array) {
    // NumPy's _write_array_header: keys sorted, the shape's repr, room for the first axis to
    // grow, then spaces up to the alignment and a newline.
    std::string dict = "{'descr': '" + array.descr +
                       "', 'fortran_order': False, 'shape': " + shapeText(array.shape) + ", }";
    if (!array.shape.empty())
        dict.append(kGrowthAxisDigits - std::to_string(array.shape[0]).size(), ' ');
    size_t lengthBytes = 2;
    size_t padded = dict.size() + 1;
    auto pad = [&] {
        const size_t prefix = kMagicLength + 2 + lengthBytes;
        padded = dict.size() + 1;
        padded += kAlign - (prefix + padded) % kAlign;
    };
    pad();
    if (padded > 0xffff) {  // version 2.0: a 4-byte header length
        lengthBytes = 4;
        pad();
    }
    std::vector<uint8_t> out(kMagic, kMagic + kMagicLength);
    out.push_back(lengthBytes == 2 ? 1 : 2);
    out.push_back(0);
    for (size_t i = 0; i < lengthBytes; ++i) out.push_back(static_cast<uint8_t>(padded >> (8 * i)));
    out.insert(out.end(), dict.begin(), dict.end());
    out.insert(out.end(), padded - dict.size() - 1, ' ');
    out.push_back('\n');
    out.insert(out.end(), array.data.begin(), array.data.end());
    return out;
}

Status writeFile(const std::string& path, const Array& array) {
    const std::vector<uint8_t> bytes = serialize(array);
    return writeOutputFile(
        path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace nncosim::npy
