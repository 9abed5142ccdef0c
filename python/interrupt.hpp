// Ctrl-C during a run. The simulation runs with the GIL released, so Python's SIGINT handler cannot run until
// it returns; while it runs, a SIGINT handler of ours raises a flag that the SystemC core polls
// (sim::RunOptions::cancelled) and passes the signal on to Python's handler, which runs once the run has
// stopped and raises KeyboardInterrupt (python/errors.cpp).
#pragma once

#include <functional>

namespace neuronsim::python {

class SigintWatch {
public:
  // Call with the GIL held. Installs the handler only on Python's main thread (the one Python delivers
  // signals to) and only while SIGINT has Python's default handler (KeyboardInterrupt): a program that
  // handles SIGINT its own way keeps it, and the run then finishes before that handler runs.
  SigintWatch();
  ~SigintWatch(); // puts the previous handler back
  SigintWatch(const SigintWatch &) = delete;
  SigintWatch &operator=(const SigintWatch &) = delete;

  // For sim::RunOptions::cancelled: true once SIGINT arrived while the watch was installed. An atomic read.
  std::function<bool()> hook() const;

private:
  bool installed_ = false;
};

} // namespace neuronsim::python
