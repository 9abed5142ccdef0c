// .npy read/write. Format: NumPy NEP 1 / numpy.lib.format ("\x93NUMPY", major, minor, header length u16 (v1)
// or u32 (v2, v3), a Python dict literal {'descr', 'fortran_order', 'shape'} padded with spaces to a 64-byte
// boundary and ended by '\n', then the raw data). Conventions for non-NumPy dtypes: include/neuronsim/io/npy.hpp.
#include "neuronsim/io/npy.hpp"

#include <cstring>
#include <limits>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"

namespace neuronsim::io {

using isa::Dtype;

namespace {

// descr -> dtype for reading. 1-byte types have no byte order ('|'), NumPy also accepts '<'/'=' there.
bool descr_to_dtype(const std::string &s, Dtype &d) {
  if (s.size() != 3) return false;
  char order = s[0];
  std::string t = s.substr(1);
  bool one_byte = t == "u1" || t == "i1" || t == "b1";
  if (!(order == '<' || (one_byte && (order == '|' || order == '=')))) return false;  // big-endian '>' rejected
  if (t == "f4") d = Dtype::float32;
  else if (t == "f2") d = Dtype::float16;
  else if (t == "i1") d = Dtype::int8;
  else if (t == "i2") d = Dtype::int16;
  else if (t == "i4") d = Dtype::int32;
  else if (t == "i8") d = Dtype::int64;
  else if (t == "u1" || t == "b1") d = Dtype::uint8;  // bool stored as uint8 bytes (NKI bool_ convention)
  else if (t == "u2") d = Dtype::uint16;
  else if (t == "u4") d = Dtype::uint32;
  else if (t == "u8") d = Dtype::uint64;
  else return false;
  return true;
}

// What to do about an unsupported descr: float64 (NumPy's default) gets the conversion to write.
std::string descr_hint(const std::string &descr) {
  if (descr == "<f8" || descr == "=f8" || descr == ">f8" || descr == "float64")
    return " (float64: save it as float32 with np.save(path, a.astype(np.float32)); supported: <f4 <f2 |i1 <i2 <i4 "
           "<i8 |u1 <u2 <u4 <u8 |b1, little-endian)";
  return " (supported: <f4 <f2 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, little-endian)";
}

// ---------------------------------------------------------------------------------- header dict parser
// A small recursive-descent parser for exactly what NumPy writes: a dict of string keys to a string, a bool, or
// a tuple of non-negative integers (trailing commas allowed, ' or " quotes).
struct HeaderParser {
  const std::string &s;
  const std::string &file;
  size_t p = 0;

  [[noreturn]] void bad(const std::string &what) {
    throw InputError(ErrorContext::of_file(file), "malformed .npy header (" + what + " at offset " + std::to_string(p) + "): " + shown(s));
  }
  // The header as quoted in a message: without its space padding and closing '\n', so the message stays one line.
  static std::string shown(const std::string &h) { return h.substr(0, h.find_last_not_of(" \t\r\n") + 1); }
  void ws() {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r')) ++p;
  }
  bool eat(char c) {
    ws();
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  }
  std::string str() {
    ws();
    if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) bad("expected a string");
    char q = s[p++];
    size_t e = s.find(q, p);
    if (e == std::string::npos) bad("unterminated string");
    std::string r = s.substr(p, e - p);
    p = e + 1;
    return r;
  }
  bool boolean() {
    ws();
    if (s.compare(p, 4, "True") == 0) return p += 4, true;
    if (s.compare(p, 5, "False") == 0) return p += 5, false;
    bad("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> r;
    if (!eat('(')) bad("expected '(' for shape");
    while (true) {
      if (eat(')')) break;
      ws();
      if (p >= s.size() || s[p] < '0' || s[p] > '9') bad("expected a non-negative integer in shape");
      int64_t v = 0;
      while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) bad("shape dimension too large");
        v = v * 10 + (s[p++] - '0');
      }
      if (p < s.size() && s[p] == 'L') ++p;  // Python 2 long suffix
      r.push_back(v);
      if (eat(',')) continue;
      if (eat(')')) break;
      bad("expected ',' or ')' in shape");
    }
    return r;
  }
};

struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

Header parse_header(const std::string &text, const std::string &file) {
  HeaderParser hp{text, file};
  Header h;
  bool got_descr = false, got_fortran = false, got_shape = false;
  if (!hp.eat('{')) hp.bad("expected '{'");
  while (!hp.eat('}')) {
    std::string key = hp.str();
    if (!hp.eat(':')) hp.bad("expected ':'");
    if (key == "descr") {
      hp.ws();
      if (hp.p < text.size() && text[hp.p] == '[') throw InputError(ErrorContext::of_file(file), "structured (record) dtypes are not supported");
      h.descr = hp.str(), got_descr = true;
    } else if (key == "fortran_order") {
      h.fortran = hp.boolean(), got_fortran = true;
    } else if (key == "shape") {
      h.shape = hp.tuple(), got_shape = true;
    } else {
      hp.bad("unknown key '" + key + "'");
    }
    if (!hp.eat(',')) {
      if (!hp.eat('}')) hp.bad("expected ',' or '}'");
      break;
    }
  }
  if (!got_descr || !got_fortran || !got_shape) throw InputError(ErrorContext::of_file(file), "malformed .npy header (missing descr, fortran_order or shape): " + HeaderParser::shown(text));
  return h;
}

int64_t checked_numel(const std::vector<int64_t> &shape, const std::string &file) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw InputError(ErrorContext::of_file(file), "negative dimension in shape " + npy_shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 16 / d) throw InputError(ErrorContext::of_file(file), "shape " + npy_shape_str(shape) + " is too large");
    n *= d;
  }
  return n;
}

}  // namespace

std::string npy_shape_str(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string npy_descr(Dtype d) {
  switch (d) {
  case Dtype::float32: case Dtype::float32r: return "<f4";
  case Dtype::float16: return "<f2";
  case Dtype::bfloat16: return "<u2";  // raw bits (npy.hpp convention)
  case Dtype::int8: return "|i1";
  case Dtype::int16: return "<i2";
  case Dtype::int32: return "<i4";
  case Dtype::int64: return "<i8";
  case Dtype::uint8: return "|u1";
  case Dtype::uint16: return "<u2";
  case Dtype::uint32: return "<u4";
  case Dtype::uint64: return "<u8";
  case Dtype::float4_e2m1fn_x4: return "<u2";
  case Dtype::float8_e4m3fn_x4: case Dtype::float8_e5m2_x4: return "<u4";
  default: return "|u1";  // the 8-bit floats: raw bits
  }
}

namespace {
NpyArray parse_npy_impl(const std::vector<uint8_t> &b, const std::string &file, std::vector<uint8_t> *owned);
} // namespace

NpyArray parse_npy(const std::vector<uint8_t> &b, const std::string &file) { return parse_npy_impl(b, file, nullptr); }

namespace {
// The preamble and header of the file whose first `n` bytes are `b` and whose size is `total`: the array's dtype
// and shape (no data), the data offset, and the data size checked against the shape.
NpyArray parse_head(const uint8_t *b, size_t n, uint64_t total, const std::string &file, size_t &data_offset) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (n < 10) throw InputError(ErrorContext::of_file(file), "truncated .npy file: " + std::to_string(n) + " bytes, shorter than the 10-byte preamble");
  if (std::memcmp(b, kMagic, 6) != 0) throw InputError(ErrorContext::of_file(file), "not a .npy file (bad magic, expected \\x93NUMPY)");
  const int major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = size_t(b[8]) | size_t(b[9]) << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {  // v3 = v2 with a UTF-8 header
    if (n < 12) throw InputError(ErrorContext::of_file(file), "truncated .npy file: v2 preamble needs 12 bytes");
    hlen = size_t(b[8]) | size_t(b[9]) << 8 | size_t(b[10]) << 16 | size_t(b[11]) << 24;
    hstart = 12;
  } else {
    throw InputError(ErrorContext::of_file(file), "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(int(b[7])));
  }
  if (n < hstart + hlen)
    throw InputError(ErrorContext::of_file(file), "truncated .npy header: needs " + std::to_string(hlen) + " bytes, file has " +
                   std::to_string(total - hstart));
  std::string text(reinterpret_cast<const char *>(b + hstart), hlen);
  Header h = parse_header(text, file);
  if (h.fortran) throw InputError(ErrorContext::of_file(file), "fortran_order True is not supported (save with np.ascontiguousarray / C order)");
  NpyArray a;
  a.dtype = npy_descr_dtype(h.descr, file);
  a.shape = h.shape;
  const int64_t count = checked_numel(a.shape, file);
  const uint64_t need = uint64_t(count) * uint64_t(isa::dtype_size(a.dtype));
  const uint64_t have = total - hstart - hlen;
  if (have < need)
    throw InputError(ErrorContext::of_file(file), "truncated .npy data: shape " + npy_shape_str(a.shape) + " of " + h.descr + " needs " + std::to_string(need) +
                   " bytes, file has " + std::to_string(have));
  if (have > need)
    throw InputError(ErrorContext::of_file(file), "malformed .npy: " + std::to_string(have - need) + " bytes after the data of shape " + npy_shape_str(a.shape));
  data_offset = hstart + hlen;
  return a;
}

// `owned`, when given, is `b` itself: its data bytes move into the array instead of being copied.
NpyArray parse_npy_impl(const std::vector<uint8_t> &b, const std::string &file, std::vector<uint8_t> *owned) {
  size_t off = 0;
  NpyArray a = parse_head(b.data(), b.size(), b.size(), file, off);
  if (owned) {
    owned->erase(owned->begin(), owned->begin() + std::ptrdiff_t(off));
    a.data = std::move(*owned);
  } else {
    a.data.assign(b.begin() + std::ptrdiff_t(off), b.end());
  }
  return a;
}
} // namespace

NpyArray read_npy_header(const std::string &path) {
  uint64_t size = 0;
  // The header is at most 1 MiB (NumPy writes ~128 bytes); the rest of the file is not read.
  const std::vector<uint8_t> head = isa::read_regular_file_head(path, uint64_t(1) << 20, ".npy file", size);
  size_t off = 0;
  return parse_head(head.data(), head.size(), size, path, off);
}

NpyArray read_npy(const std::string &path, uint64_t max_bytes) {
  // A regular file (a FIFO or device is refused without blocking), read at its size in one go.
  std::vector<uint8_t> bytes = isa::read_regular_file_bytes(path, max_bytes, ".npy file");
  return parse_npy_impl(bytes, path, &bytes);
}

Dtype npy_descr_dtype(const std::string &descr, const std::string &file) {
  Dtype d = Dtype::float32;
  if (!descr_to_dtype(descr, d)) throw InputError(ErrorContext::of_file(file), "unsupported .npy dtype '" + descr + "'" + descr_hint(descr));
  return d;
}

namespace {
// The header bytes (magic, version, length, dict, padding) of an array; its data follows them in the file.
std::vector<uint8_t> npy_header(const NpyArray &a);
} // namespace

std::vector<uint8_t> serialize_npy(const NpyArray &a) {
  std::vector<uint8_t> out = npy_header(a);
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

namespace {
std::vector<uint8_t> npy_header(const NpyArray &a) {
  const int64_t n = a.numel();
  if (a.data.size() != size_t(n) * size_t(isa::dtype_size(a.dtype)))
    throw InputError({}, "write_npy: data is " + std::to_string(a.data.size()) + " bytes, shape " + npy_shape_str(a.shape) +
                             " of " + isa::enum_name(a.dtype) + " needs " +
                             std::to_string(size_t(n) * size_t(isa::dtype_size(a.dtype))));
  std::string dict = "{'descr': '" + npy_descr(a.dtype) + "', 'fortran_order': False, 'shape': " + npy_shape_str(a.shape) + ", }";
  // Pad with spaces so magic + version + length + header is a multiple of 64, ending in '\n' (numpy.lib.format).
  auto padded = [&](size_t pre) {
    size_t total = pre + dict.size() + 1;
    return dict + std::string((64 - total % 64) % 64, ' ') + "\n";
  };
  std::string h1 = padded(10);
  std::vector<uint8_t> out;
  if (h1.size() <= 0xffff) {
    out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(h1.size() & 0xff), uint8_t(h1.size() >> 8)};
    out.insert(out.end(), h1.begin(), h1.end());
  } else {
    std::string h2 = padded(12);
    uint32_t l = uint32_t(h2.size());
    out = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, uint8_t(l), uint8_t(l >> 8), uint8_t(l >> 16), uint8_t(l >> 24)};
    out.insert(out.end(), h2.begin(), h2.end());
  }
  return out;
}
} // namespace

void write_npy(const std::string &path, const NpyArray &a) {
  // Header, then the data straight from the array: no whole-file copy of a large tensor. Through a temporary in
  // the same directory renamed into place (AtomicFile), so readers never see a half-written file.
  const std::vector<uint8_t> header = npy_header(a);
  isa::AtomicFile f(path);
  f.write(header.data(), header.size());
  f.write(a.data.data(), a.data.size());
  f.commit();
}

}  // namespace neuronsim::io
