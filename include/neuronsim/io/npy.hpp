// .npy tensor files (NumPy format v1.0 / v2.0 / v3.0, https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// inputs are read with read_npy, outputs written with write_npy. Little-endian, C order only.
//
// Stored dtypes (descr -> isa::Dtype):
//   <f4 float32   <f2 float16   <i1/|i1 int8   <i2 int16   <i4 int32   <i8 int64
//   |u1/<u1 uint8 <u2 uint16    <u4 uint32     <u8 uint64  |b1 bool, read as uint8 (0/1 bytes)
//
// Convention for dtypes NumPy lacks: bfloat16 and the 8-bit floats (float8e3/e4/e5, float8_e4m3fn,
// float8_e8m0fnu) are stored as their raw bit patterns, bfloat16 as `<u2`, fp8 as `|u1`; the x4-packed MX
// containers as `<u2` (float4_e2m1fn_x4) / `<u4` (float8_*_x4). write_npy writes those descrs for such arrays and
// engines::npy_to_dtype accepts them for a tensor of the narrow type. (ml_dtypes' own descrs, e.g. '<V2', are not
// portable and are rejected.) float32r is written as `<f4`.
//
// Loading such an array into a tensor of another dtype, and building one from fp32 values, applies the engines'
// rounding rules: include/neuronsim/engines/npy_dtype.hpp. This file is the format only (the io layer:
// isa <- io <- engines, docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::io {

struct NpyArray {
  isa::Dtype dtype = isa::Dtype::float32;
  std::vector<int64_t> shape;  // empty = 0-d scalar (one element)
  std::vector<uint8_t> data;   // little-endian elements in C order, numel() * dtype_size(dtype) bytes

  int64_t numel() const;
};

// Reads and validates a file. Not a regular file (a FIFO, a device, a directory)/larger than max_bytes/
// truncated/bad magic/unsupported version or descr (float64 with the conversion to write)/fortran_order True/bad
// shape/data shorter or longer than the shape -> InputError naming the file and what is wrong.
NpyArray read_npy(const std::string &path, uint64_t max_bytes = uint64_t(1) << 36);
// The dtype and shape of a .npy file (NpyArray::data left empty), checked like read_npy (the data size against the
// shape) without reading the data: for checks before a run.
NpyArray read_npy_header(const std::string &path);
// The same on bytes already in memory; `name` is used in error messages.
NpyArray parse_npy(const std::vector<uint8_t> &bytes, const std::string &name);

// Writes atomically: a temporary file in the same directory, then rename() over `path`, so readers never see a
// half-written file (on failure the temporary is removed and the old file, if any, is untouched).
void write_npy(const std::string &path, const NpyArray &a);
// The complete file image write_npy would write (v1.0 header when it fits, else v2.0; 64-byte aligned).
std::vector<uint8_t> serialize_npy(const NpyArray &a);

// The descr a dtype is written with (see the table above).
std::string npy_descr(isa::Dtype d);
// The stored dtype of a descr as read_npy reads it (the table above; NumPy's dtype.str spells it the same way), for
// files and for arrays held in memory (the Python module). An unsupported one (float64, big-endian, structured) is
// an InputError naming `file` and listing the supported descrs (float64 with the conversion to write).
isa::Dtype npy_descr_dtype(const std::string &descr, const std::string &file);

// "(2, 3)", "(4,)", "()": a shape as NumPy prints it, for error messages.
std::string npy_shape_str(const std::vector<int64_t> &shape);

}  // namespace neuronsim::io
