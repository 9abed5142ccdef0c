// The streamed run's critical-path records, spilled to an unlinked temporary file (sim/path_log.hpp).
#include "sim/path_log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "neuronsim/error.hpp"

namespace neuronsim::sim::core_detail {

PathLog::PathLog(std::string run, int64_t block) : run_(std::move(run)), block_(std::max<int64_t>(1, block)) {}

PathLog::~PathLog() {
  if (fd_ >= 0) ::close(fd_);
}

void PathLog::fail(const std::string &what, int err) {
  throw SimulationError({run_, -1, "", ""}, "the streamed run's critical-path records: " + what + ": " +
                                                std::strerror(err) +
                                                " (set TMPDIR to a directory with room, or run with --schedule=whole)");
}

// Writes q's tail as its next block, opening the file on the first one.
void PathLog::spill(Queue &q) {
  if (fd_ < 0) {
    const char *env = std::getenv("TMPDIR");
    const std::string dir = env && *env ? env : "/tmp";
    std::string tmpl = dir + "/neuronsim-path-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) fail("cannot create a temporary file in " + dir + (env && *env ? " ($TMPDIR)" : ""), errno);
    ::unlink(name.data());  // the file lives while it is open: nothing is left behind, whatever ends the run
    fd_ = fd;
    path_ = name.data();
  }
  const size_t bytes = q.tail.size() * sizeof(PathRecord);
  const char *p = reinterpret_cast<const char *>(q.tail.data());
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(end_ + static_cast<int64_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail("cannot write " + std::to_string(bytes) + " bytes at offset " + std::to_string(end_) +
               " of the temporary file " + path_ + " (unlinked)",
           n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  q.blocks.push_back(end_);
  end_ += static_cast<int64_t>(bytes);
  q.tail.clear();
}

bool PathLog::add(int qi, const PathRecord &r) {
  if (error_) return false;
  Queue &q = queues_[static_cast<size_t>(qi)];
  if (q.tail.empty()) q.tail.reserve(static_cast<size_t>(block_));
  q.tail.push_back(r);
  ++q.size;
  if (static_cast<int64_t>(q.tail.size()) < block_) return true;
  try {
    spill(q);
  } catch (...) {
    error_ = std::current_exception();
    return false;
  }
  return true;
}

const PathRecord &PathLog::at(int qi, int64_t pos) {
  Queue &q = queues_[static_cast<size_t>(qi)];
  const int64_t b = pos / block_, k = pos % block_;
  if (b == static_cast<int64_t>(q.blocks.size())) return q.tail[static_cast<size_t>(k)];
  if (q.cached != b) {
    q.cache.resize(static_cast<size_t>(block_));
    const size_t bytes = q.cache.size() * sizeof(PathRecord);
    char *p = reinterpret_cast<char *>(q.cache.data());
    const int64_t at = q.blocks[static_cast<size_t>(b)];
    for (size_t done = 0; done < bytes;) {
      const ssize_t n = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(at + static_cast<int64_t>(done)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        fail("cannot read back " + std::to_string(bytes) + " bytes at offset " + std::to_string(at) +
                 " of the temporary file " + path_ + " (unlinked)",
             n < 0 ? errno : EIO);
      done += static_cast<size_t>(n);
    }
    q.cached = b;
  }
  return q.cache[static_cast<size_t>(k)];
}

} // namespace neuronsim::sim::core_detail
