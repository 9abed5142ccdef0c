#include "interrupt.hpp"

#include <atomic>
#include <csignal>

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace neuronsim::python {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "read and written by a signal handler");
struct sigaction g_previous; // Python's handler, chained to

void on_sigint(int sig, siginfo_t *info, void *ucontext) {
  g_interrupted.store(true, std::memory_order_relaxed);
  // Python's C-level handler only records the signal (async-signal-safe); its Python-level handler runs
  // later.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction)
      g_previous.sa_sigaction(sig, info, ucontext);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

bool python_handles_sigint_by_default() {
  py::module_ threading = py::module_::import("threading");
  if (!threading.attr("current_thread")().is(threading.attr("main_thread")()))
    return false;
  py::module_ signal = py::module_::import("signal");
  return signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler"));
}

} // namespace

SigintWatch::SigintWatch() {
  if (!python_handles_sigint_by_default())
    return;
  g_interrupted.store(false);
  struct sigaction sa {};
  sa.sa_sigaction = on_sigint;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  installed_ = sigaction(SIGINT, &sa, &g_previous) == 0;
}

SigintWatch::~SigintWatch() {
  if (installed_)
    sigaction(SIGINT, &g_previous, nullptr);
}

std::function<bool()> SigintWatch::hook() const {
  return [on = installed_] { return on && g_interrupted.load(std::memory_order_relaxed); };
}

} // namespace neuronsim::python
