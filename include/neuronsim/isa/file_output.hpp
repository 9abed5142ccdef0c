// Output files written in full or not at all (the counterpart of file_input.hpp; .npy outputs and the CLI's stats,
// trace and DevicePrint files use it): the content goes to a temporary file in the same directory, and commit()
// renames it over the destination. A run that fails before commit() leaves the destination untouched
// (an existing file keeps its content) and no temporary behind. Every failure is an InputError naming the
// destination path and the OS reason.
#pragma once

#include <cstddef>
#include <string>

namespace neuronsim::isa {

class AtomicFile {
public:
  // Creates the temporary "<path>.tmp.<pid>.<n>" next to `path`.
  explicit AtomicFile(const std::string &path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  void write(const void *data, size_t n);
  void write(const std::string &s) { write(s.data(), s.size()); }
  // Flushes to disk, closes and renames the temporary over the destination.
  void commit();
  const std::string &path() const { return path_; }

private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `content` to `path` through an AtomicFile.
void write_file_atomic(const std::string &path, const std::string &content);

} // namespace neuronsim::isa
