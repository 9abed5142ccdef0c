// The device's shared HBM (neuronsim/engines/hbm.hpp): max-min fair sharing of its bandwidth among the streams in
// flight, each capped by its own engines' rate.
#include "neuronsim/engines/hbm.hpp"

#include <algorithm>
#include <limits>

namespace neuronsim::engines {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

void HbmShare::reset(double bytes_per_ns) {
  capacity_ = bytes_per_ns;
  committed_ = 0;
  projected_ = true;
  bytes_ = 0;
  added_ = 0;
  streams_.clear();
  free_.clear();
  live_.clear();
  alone_ = true;
}

int HbmShare::add(double now_ns, double start_ns, double bytes, double cap_bytes_per_ns) {
  if (now_ns > committed_) simulate(now_ns, true);
  int h;
  if (!free_.empty()) {
    h = free_.back();
    free_.pop_back();
  } else {
    h = static_cast<int>(streams_.size());
    streams_.emplace_back();
  }
  Stream &s = streams_[static_cast<size_t>(h)];
  s = Stream{};
  s.used = true;
  s.start = std::max(start_ns, committed_);
  s.bytes = s.left = std::max(0.0, bytes);
  s.cap = cap_bytes_per_ns;
  s.finish = s.start;
  bytes_ += s.bytes;
  ++added_;
  if (s.bytes > 0) {
    live_.push_back(h);
    if (alone_) alone_ = fits(h);
  } else {
    s.done = s.start <= committed_;
  }
  projected_ = false;
  return h;
}

double HbmShare::finish_ns(int handle) {
  if (!projected_) project();
  return streams_[static_cast<size_t>(handle)].finish;
}

bool HbmShare::uncontended(int handle) {
  if (!projected_) project();
  return !streams_[static_cast<size_t>(handle)].proj_contended;
}

void HbmShare::release(int handle) {
  Stream &s = streams_[static_cast<size_t>(handle)];
  s.released = true;
  if (std::find(live_.begin(), live_.end(), handle) == live_.end()) {
    s.used = false;
    free_.push_back(handle);
  }
}

void HbmShare::project() {
  simulate(kInf, false);
  projected_ = true;
}

// With every other live stream at its cap from its start (alone_), whether stream h at its cap too keeps the caps
// of the streams moving at any one time within the bandwidth. Only the times it moves change: the sum there is
// largest at its own start or at another stream's start within its interval.
bool HbmShare::fits(int h) {
  const Stream &n = streams_[static_cast<size_t>(h)];
  const double a = std::max(n.start, committed_), b = a + n.left / n.cap;
  auto interval = [&](const Stream &s) {
    const double from = std::max(s.start, committed_);
    return std::make_pair(from, from + s.left / s.cap);
  };
  auto caps_at = [&](double t) {
    double sum = 0;
    for (int k : live_) {
      const Stream &s = streams_[static_cast<size_t>(k)];
      const auto [from, to] = interval(s);
      if (from <= t && t < to) sum += s.cap;  // a stream finishing at t has made way for one starting at t
    }
    return sum;
  };
  if (caps_at(a) > capacity_) return false;
  for (int k : live_) {
    const double from = interval(streams_[static_cast<size_t>(k)]).first;
    if (from > a && from < b && caps_at(from) > capacity_) return false;
  }
  return true;
}

// Whether, each stream moving at its cap from its start, the caps of the streams moving at any one time never sum
// above the bandwidth: then that is what the water-filling gives (a sweep over their starts and finishes).
bool HbmShare::alone_at_caps() {
  double caps = 0;
  for (int h : live_) caps += streams_[static_cast<size_t>(h)].cap;
  if (caps <= capacity_) return true;
  std::vector<std::pair<double, double>> &ev = sweep_;  // (time, +cap at a start / -cap at a finish)
  ev.clear();
  for (int h : live_) {
    const Stream &s = streams_[static_cast<size_t>(h)];
    const double from = std::max(s.start, committed_);
    ev.emplace_back(from, s.cap);
    ev.emplace_back(from + s.left / s.cap, -s.cap);
  }
  std::sort(ev.begin(), ev.end());  // at one time, finishes (negative) before starts
  double sum = 0;
  for (const auto &e : ev)
    if ((sum += e.second) > capacity_) return false;
  return true;
}

void HbmShare::simulate(double until, bool commit) {
  const size_t n = live_.size();
  // The streams that overlap in time at their caps stay within the bandwidth together: each moves at its cap from
  // its start (the water-filling below would give each its cap at every step).
  if (alone_ || (alone_ = alone_at_caps())) {
    std::vector<int> &still = still_;
    still.clear();
    for (int h : live_) {
      Stream &s = streams_[static_cast<size_t>(h)];
      const double from = std::max(s.start, committed_);
      s.finish = from + s.left / s.cap;
      s.proj_contended = s.contended;
      if (!commit) continue;
      if (s.finish <= until) {
        s.left = 0;
        s.done = true;
        if (s.released) s.used = false, free_.push_back(h);
      } else {
        if (until > from) s.left -= s.cap * (until - from);
        still.push_back(h);
      }
    }
    if (commit) live_.swap(still), committed_ = until;
    return;
  }
  // Scratch kept by the object: a run calls this once or twice per DMA transfer.
  std::vector<double> &left = left_, &rate = rate_;
  std::vector<char> &fin = fin_, &cont = cont_;
  std::vector<size_t> &active = active_;
  left.assign(n, 0.0), rate.assign(n, 0.0), fin.assign(n, 0), cont.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Stream &s = streams_[static_cast<size_t>(live_[i])];
    left[i] = s.left;
    cont[i] = s.contended;
  }
  double t = committed_;
  for (;;) {
    active.clear();
    double next = until;
    for (size_t i = 0; i < n; ++i) {
      if (fin[i]) continue;
      const Stream &s = streams_[static_cast<size_t>(live_[i])];
      if (s.start <= t) active.push_back(i);
      else next = std::min(next, s.start);
    }
    if (active.empty() && next == kInf) break;
    // Water-filling: in increasing cap, each stream takes min(cap, the equal share of what is left).
    std::sort(active.begin(), active.end(), [&](size_t a, size_t b) {
      const double ca = streams_[static_cast<size_t>(live_[a])].cap, cb = streams_[static_cast<size_t>(live_[b])].cap;
      return ca != cb ? ca < cb : a < b;
    });
    // The streams from the first whose cap is not under the equal share on all get that same share.
    double rest = capacity_;
    size_t k = active.size(), at = 0;
    for (; at < active.size(); ++at, --k) {
      const double cap = streams_[static_cast<size_t>(live_[active[at]])].cap;
      if (cap * static_cast<double>(k) >= rest) break;
      rate[active[at]] = cap;
      rest -= cap;
    }
    if (at < active.size()) {
      const double share = rest / static_cast<double>(k);
      for (size_t x = at; x < active.size(); ++x) {
        const size_t i = active[x];
        rate[i] = std::min(share, streams_[static_cast<size_t>(live_[i])].cap);
        if (share < streams_[static_cast<size_t>(live_[i])].cap) cont[i] = 1;
      }
    }
    for (size_t i : active) next = std::min(next, t + left[i] / rate[i]);
    for (size_t i : active) {
      const double end = t + left[i] / rate[i];
      if (end <= next) {  // it finishes now: its end exactly (start + bytes / cap for a stream alone)
        fin[i] = 1;
        left[i] = 0;
        streams_[static_cast<size_t>(live_[i])].finish = end;
      } else {
        left[i] -= rate[i] * (next - t);
      }
    }
    t = next;
    if (t >= until) break;
  }
  if (!commit) {
    for (size_t i = 0; i < n; ++i) streams_[static_cast<size_t>(live_[i])].proj_contended = cont[i];
    return;
  }
  std::vector<int> &still = still_;
  still.clear();
  for (size_t i = 0; i < n; ++i) {
    Stream &s = streams_[static_cast<size_t>(live_[i])];
    s.left = left[i];
    s.contended = cont[i];
    s.proj_contended = cont[i];
    if (!fin[i]) {
      still.push_back(live_[i]);
      continue;
    }
    s.done = true;
    if (s.released) {
      s.used = false;
      free_.push_back(live_[i]);
    }
  }
  live_.swap(still);
  committed_ = until;
}

} // namespace neuronsim::engines
