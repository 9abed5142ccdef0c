// A streamed run's record of every dynamic instruction for the critical-path walk at the end of the run, in bounded
// memory (issue 18): private to sim/. Each queue's records are appended in queue-position order (a queue records
// its instructions in that order) and spilled, a block at a time, to one unlinked temporary file under $TMPDIR (or
// /tmp); the walk back reads them by (queue, position) through one cached block per queue. Memory: two blocks per
// queue in use, whatever the run's length; a run shorter than a block per queue never creates the file.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim::core_detail {

// One dynamic instruction (24 bytes): what the walk needs (its gate's queue and position) and what the profile
// and the shares read of a link (its issue time and profile row; the row's queue is in RunResult::profile).
struct PathRecord {
  double issue_ns = 0.0;
  uint32_t seq = 0;        // its dynamic instruction number (a streamed run numbers fewer than 2^32 entries)
  int32_t row = -1;        // profile_row
  uint32_t gate_pos1 = 0;  // the gate's queue position + 1 (0: no gate)
  uint8_t gate_queue = 0;
};

// Where a queue position is: queue q, position pos, packed (the gate's location; -1 none).
inline int64_t path_at(int q, int64_t pos) { return pos * kMaxQueues + q; }

class PathLog {
public:
  // `run` names the run (its program file) in errors; `block` records per block (at least 1).
  PathLog(std::string run, int64_t block);
  ~PathLog();
  PathLog(const PathLog &) = delete;
  PathLog &operator=(const PathLog &) = delete;

  // Queue q's next record (position size(q)). False when the file could not be written: error() says why, and
  // the log takes nothing more.
  bool add(int q, const PathRecord &r);
  int64_t size(int q) const { return queues_[static_cast<size_t>(q)].size; }
  // Queue q's record at pos (< size(q)); throws the SimulationError of a failed read.
  const PathRecord &at(int q, int64_t pos);
  std::exception_ptr error() const { return error_; }
  // The temporary file's name (unlinked; empty until the first block is spilled) and the bytes written to it.
  const std::string &file() const { return path_; }
  int64_t spilled_bytes() const { return end_; }

private:
  struct Queue {
    std::vector<PathRecord> tail;     // the records after the last spilled block
    std::vector<int64_t> blocks;      // the file offset of each spilled block
    std::vector<PathRecord> cache;    // one spilled block read back
    int64_t cached = -1;              // its index
    int64_t size = 0;
  };
  [[noreturn]] void fail(const std::string &what, int err);
  void spill(Queue &q);
  std::string run_;
  int64_t block_;
  std::array<Queue, kMaxQueues> queues_;
  int fd_ = -1;
  std::string path_;
  int64_t end_ = 0;
  std::exception_ptr error_;
};

} // namespace neuronsim::sim::core_detail
