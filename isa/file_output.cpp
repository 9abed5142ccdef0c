// AtomicFile (include/neuronsim/isa/file_output.hpp): temporary file + fsync + rename.
#include "neuronsim/isa/file_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "neuronsim/error.hpp"

namespace neuronsim::isa {

namespace {
[[noreturn]] void fail(const std::string &path, const std::string &what, int err) {
  ErrorContext c;
  c.file = path;
  throw InputError(c, what + ": " + std::strerror(err));
}
} // namespace

AtomicFile::AtomicFile(const std::string &path) : path_(path) {
  // Unique per process and object; O_EXCL so that an existing file of that name is never opened.
  static std::atomic<unsigned> counter{0};
  tmp_ = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, "cannot create a file next to it for writing", errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void *data, size_t n) {
  const auto *p = static_cast<const char *>(data);
  size_t off = 0;
  while (off < n) {
    const ssize_t w = ::write(fd_, p + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(path_, "write failed", w < 0 ? errno : ENOSPC);
    off += static_cast<size_t>(w);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail(path_, "write failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(path_, "write failed", errno);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail(path_, "cannot move the written file into place", errno);
  committed_ = true;
}

void write_file_atomic(const std::string &path, const std::string &content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

} // namespace neuronsim::isa
