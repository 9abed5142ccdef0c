// Output files (the counterpart of file_input.hpp), and the one rule every output of the CLI, the Python
// module and the sweeps goes through (.npy outputs, --stats, --trace, --device-print, --save-inputs, encode's
// bundle folders, sweep results), decided by what the path names before anything is written (output_target):
//   - nothing yet, or a regular file: the content goes to a temporary file in the same directory, and
//     commit() renames it over the destination. A run that fails before commit() leaves the destination
//     untouched (an existing file keeps its content) and no temporary behind. A symbolic link to a regular
//     file keeps being a link: the file it names is the one replaced.
//   - a character device (/dev/null, /dev/full, a terminal, /dev/stdout on a terminal): written in place as
//     the content comes, every write error reported; nothing is ever renamed over a device node.
//   - anything else -- a FIFO, a socket, a block device, a directory, a dangling link -- is refused
//     (InputError naming the path and what it is), so that callers can refuse it before a run.
// Every failure is an InputError naming the destination path and the OS reason.
#pragma once

#include <cstddef>
#include <string>

namespace neuronsim::isa {

struct OutputTarget {
  enum class Kind { Absent, Regular, CharDevice } kind = Kind::Absent;
  std::string path; // where the content goes: the path itself, or the regular file a symbolic link names
};
// What an output path names (symbolic links followed), or InputError naming `path` when it is something an
// output may not be written to (above). Opens and creates nothing.
OutputTarget output_target(const std::string &path);

class AtomicFile {
public:
  // output_target(path), then the temporary "<target>.tmp.<pid>.<n>" next to the file it names, or the device
  // opened for writing.
  explicit AtomicFile(const std::string &path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  void write(const void *data, size_t n);
  void write(const std::string &s) { write(s.data(), s.size()); }
  // Flushes to disk, closes and renames the temporary over the destination (a device: closes it, reporting a
  // deferred write error).
  void commit();
  const std::string &path() const { return path_; }
  bool in_place() const { return in_place_; }

private:
  std::string path_, target_, tmp_;
  int fd_ = -1;
  bool committed_ = false, in_place_ = false;
};

// Writes `content` to `path` through an AtomicFile.
void write_file_atomic(const std::string &path, const std::string &content);

} // namespace neuronsim::isa
