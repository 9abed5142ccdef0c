// AtomicFile and output_target (include/neuronsim/isa/file_output.hpp): temporary file + fsync + rename for a
// regular file, writing in place for a character device, a refusal for anything else.
#include "neuronsim/isa/file_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"

namespace neuronsim::isa {

namespace {
[[noreturn]] void fail(const std::string &path, const std::string &what, int err) {
  ErrorContext c;
  c.file = path;
  throw InputError(c, what + ": " + std::strerror(err));
}
[[noreturn]] void refuse(const std::string &path, const std::string &what) {
  ErrorContext c;
  c.file = path;
  throw InputError(c, what);
}
} // namespace

OutputTarget output_target(const std::string &path) {
  OutputTarget t;
  t.path = path;
  struct stat ls {};
  if (::lstat(path.c_str(), &ls) != 0) {
    // Absent (or under something that is not a directory): created, or refused when the temporary cannot be
    // (its directory is the caller's to check).
    if (errno == ENOENT || errno == ENOTDIR)
      return t;
    fail(path, "cannot inspect the output path", errno);
  }
  struct stat st = ls;
  if (S_ISLNK(ls.st_mode)) {
    if (::stat(path.c_str(), &st) != 0)
      refuse(path, "the output path is a symbolic link to nothing (" + std::string(std::strerror(errno)) +
                       "): name the file itself");
    if (S_ISREG(st.st_mode)) {
      // Renaming over the link would turn the link into a file and leave the file it names as it was.
      char buf[PATH_MAX];
      if (!::realpath(path.c_str(), buf))
        fail(path, "cannot resolve the symbolic link", errno);
      t.path = buf;
    }
  }
  if (S_ISREG(st.st_mode)) {
    t.kind = OutputTarget::Kind::Regular;
    return t;
  }
  if (S_ISCHR(st.st_mode)) {
    t.kind = OutputTarget::Kind::CharDevice;
    return t;
  }
  // A FIFO would block the run (or feed a reader half a document); a socket, a block device or a directory is
  // never an output file; renaming a temporary over any of them would replace the node.
  refuse(path,
         std::string("the output path is ") + file_type_name(st.st_mode) +
             ": an output is a regular file (replaced whole when the run succeeds) or a character device "
             "such as /dev/null (written in place)");
}

AtomicFile::AtomicFile(const std::string &path) : path_(path) {
  const OutputTarget t = output_target(path);
  target_ = t.path;
  if (t.kind == OutputTarget::Kind::CharDevice) {
    in_place_ = true;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0)
      fail(path_, "cannot open the device for writing", errno);
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISCHR(st.st_mode)) { // replaced between the check and the open
      ::close(fd_);
      fd_ = -1;
      refuse(path_, "the output path changed while it was opened: it is no longer a character device");
    }
    return;
  }
  // Unique per process and object; O_EXCL so that an existing file of that name is never opened.
  static std::atomic<unsigned> counter{0};
  tmp_ = target_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, "cannot create a file next to it for writing", errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !in_place_)
    ::unlink(tmp_.c_str());
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
  if (in_place_) {
    // A device has nothing to flush to disk (fsync on /dev/null fails with EINVAL); close reports what is
    // left.
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      fail(path_, "write failed", errno);
    committed_ = true;
    return;
  }
  if (::fsync(fd_) != 0) fail(path_, "write failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(path_, "write failed", errno);
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0)
    fail(path_, "cannot move the written file into place", errno);
  committed_ = true;
}

void write_file_atomic(const std::string &path, const std::string &content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

} // namespace neuronsim::isa
