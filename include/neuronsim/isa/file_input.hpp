// Reading input files safely: kernels, bundle streams and manifests, .npy inputs and expected tensors are regular
// files of bounded size (a FIFO, a device such as /dev/zero behind a symlink, or a directory is refused without
// blocking on it), and JSON documents are parsed with a bounded nesting depth and every error naming where in
// the document it is. Every problem is an InputError naming the path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace neuronsim::isa {

// The largest file any reader loads whole (1 GiB): a kernel, a manifest, a bundle stream. .npy files have their
// own bound (the tensor they fill).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t(1) << 30;
// JSON nesting limit of every document read (512 levels: a BIR module nests ~4 levels per loop and ~3 per
// expression level, well within it; deeper input is refused before any recursive code sees it).
inline constexpr int kMaxJsonDepth = 512;

// "a FIFO (named pipe)", "a character device", "a directory", ... for a stat(2) st_mode: how messages name
// what a path is.
const char *file_type_name(unsigned mode);

// Throws InputError("<what>: not a regular file (a FIFO)") etc. unless `path` names a regular file (symlinks are
// followed). Opens nothing.
void require_regular_file(const std::string &path, const std::string &what);

// The size of a regular file (refused like read_regular_file when it is not one), without reading it.
uint64_t regular_file_size(const std::string &path, const std::string &what);

// The first at most `max_head` bytes of a regular file (refused like read_regular_file when it is not one), and in
// `size` its whole size.
std::vector<uint8_t> read_regular_file_head(const std::string &path, uint64_t max_head, const std::string &what,
                                            uint64_t &size);

// The whole content of a regular file of at most `max_bytes` bytes. The file is opened non-blocking, so a FIFO
// is refused rather than waited on; `what` ("kernel", "bundle stream", ".npy file") goes into messages.
std::string read_regular_file(const std::string &path, uint64_t max_bytes, const std::string &what);
std::vector<uint8_t> read_regular_file_bytes(const std::string &path, uint64_t max_bytes, const std::string &what);

// Parses JSON text with at most kMaxJsonDepth nesting levels. Errors are InputError with file = `file` and field =
// the JSON path of the offending value ("functions[0].blocks[2].instructions[7].ins[0].value"): malformed JSON
// (with the byte offset), a number that overflows a double (1e400), nesting too deep.
nlohmann::json parse_json_text(const std::string &text, const std::string &file, int max_depth = kMaxJsonDepth);

// read_regular_file + parse_json_text.
nlohmann::json read_json_file(const std::string &path, const std::string &what);

} // namespace neuronsim::isa
