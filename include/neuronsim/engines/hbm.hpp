// A device's HBM as one resource shared by the cores of a multi-core run (docs/multicore.md): a fluid model.
// Each stream (one DMA transfer that touches HBM, or one collective's ring traffic on this device) has its
// bytes, a start time and a cap: the rate its own engines could move it at. At every instant the device's
// bandwidth is split max-min fairly among the streams that have started and not finished (water-filling: a
// stream whose cap is below the equal share keeps its cap and the rest is shared equally by the others), so a
// stream alone moves at its cap, and streams together slow each other once their caps sum above the device's
// bandwidth. The rates only change when a stream starts or finishes; a stream's finish is projected assuming
// no further arrivals, and an arrival can only make the other streams' projected finishes later.
//
// Plain C++, times in ns as doubles (projected finishes are converted to integer ps by the caller),
// independent of SystemC's thread order: the result depends only on the set of streams and their start times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace neuronsim::engines {

class HbmShare {
public:
  // Forgets every stream: a device of `bytes_per_ns` of HBM bandwidth, idle.
  void reset(double bytes_per_ns);
  // A stream of `bytes` starting at `start_ns`, moving at most `cap_bytes_per_ns`; `now_ns` is the caller's
  // current time (calls come in non-decreasing `now_ns`, start_ns >= now_ns). Returns its handle.
  int add(double now_ns, double start_ns, double bytes, double cap_bytes_per_ns);
  // Its finish as projected now (final once it is at or before the caller's current time).
  double finish_ns(int handle);
  // True when nothing but its cap limits the stream (its projected finish is start + bytes / cap).
  bool uncontended(int handle);
  // The caller is done with the stream: its handle is reused once the stream has finished.
  void release(int handle);

  double bytes_per_ns() const { return capacity_; }
  double bytes() const { return bytes_; }  // over every stream added
  int64_t streams() const { return added_; }

private:
  struct Stream {
    bool used = false;
    double start = 0, bytes = 0, cap = 0, left = 0;
    double finish = 0;            // projected (final when <= committed_)
    bool done = false;            // finished by committed_
    bool released = false;        // the caller is done with it: its slot is reused once it is done
    bool contended = false;       // ran below its cap before committed_
    bool proj_contended = false;  // ... or runs below it in the projection
  };
  // Simulates from committed_ to `until`: commit = true advances the streams' state; false only projects.
  void simulate(double until, bool commit);
  bool alone_at_caps();
  bool fits(int handle);
  void project();

  double capacity_ = 1;
  double committed_ = 0;
  bool projected_ = true;
  double bytes_ = 0;
  int64_t added_ = 0;
  std::vector<Stream> streams_;
  std::vector<int> free_;
  std::vector<int> live_;  // handles not done at committed_
  // Known: each live stream moves at its cap from its start to its finish, no time's caps summing above the
  // bandwidth (kept as streams are added: a commit or a finish keeps it; when false, simulate() checks again).
  bool alone_ = true;
  // simulate()'s scratch.
  std::vector<double> left_, rate_;
  std::vector<char> fin_, cont_;
  std::vector<std::size_t> active_;
  std::vector<int> still_;
  std::vector<std::pair<double, double>> sweep_;
};

} // namespace neuronsim::engines
