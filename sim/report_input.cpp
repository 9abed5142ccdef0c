// The report's documents checked key by key (sim/report_input.hpp): the keys sim/report.cpp reads and the ones
// the page's script calls a method on (a queue's achieved_gbps.toFixed), each with its JSON type.
#include "report_input.hpp"

#include "neuronsim/error.hpp"

namespace neuronsim::sim {

namespace {

using nlohmann::json;

enum class Want { Object, Array, String, Number, Integer, Boolean };

const char *want_text(Want w) {
  switch (w) {
  case Want::Object: return "an object";
  case Want::Array: return "an array";
  case Want::String: return "a string";
  case Want::Number: return "a number";
  case Want::Integer: return "a whole number";
  case Want::Boolean: return "true or false";
  }
  return "a value";
}

bool has_type(const json &v, Want w) {
  switch (w) {
  case Want::Object: return v.is_object();
  case Want::Array: return v.is_array();
  case Want::String: return v.is_string();
  case Want::Number: return v.is_number();
  case Want::Integer: return v.is_number_integer();
  case Want::Boolean: return v.is_boolean();
  }
  return false;
}

// One document's checks: every failure names the file, the key path and what the page needs there.
class DocCheck {
public:
  DocCheck(std::string file, std::string what) : file_(std::move(file)), what_(std::move(what)) {}

  // The member `key` of object `o` (at `path`): nullptr when absent, an error when of another type.
  const json *opt(const json &o, const std::string &key, const std::string &path, Want w) const {
    const auto it = o.find(key);
    if (it == o.end())
      return nullptr;
    if (!has_type(*it, w))
      wrong(path, w, *it);
    return &*it;
  }
  // The same, and an error when absent: the page cannot be drawn without it.
  const json &need(const json &o, const std::string &key, const std::string &path, Want w,
                   const std::string &why) const {
    const json *v = opt(o, key, path, w);
    if (!v)
      throw InputError({file_, -1, "", path}, "missing: " + why);
    return *v;
  }
  void is(const json &v, const std::string &path, Want w) const {
    if (!has_type(v, w))
      wrong(path, w, v);
  }
  // Each key of `o` that is present has type `w`.
  void each(const json &o, std::initializer_list<const char *> keys, const std::string &at, Want w) const {
    for (const char *k : keys)
      opt(o, k, at + k, w);
  }

private:
  [[noreturn]] void wrong(const std::string &path, Want w, const json &got) const {
    std::string g = got.dump(-1, ' ', false, json::error_handler_t::replace);
    if (g.size() > 60)
      g = g.substr(0, 57) + "...";
    throw InputError({file_, -1, "", path}, what_ + " needs " + want_text(w) + " here, got " + g);
  }
  std::string file_, what_;
};

std::string item(const std::string &path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

void check_analysis(const DocCheck &c, const json &a) {
  if (const json *v = c.opt(a, "verdict", "analysis.verdict", Want::Object))
    c.opt(*v, "text", "analysis.verdict.text", Want::String);
  if (const json *engines = c.opt(a, "engines", "analysis.engines", Want::Object))
    for (const auto &[name, e] : engines->items()) {
      const std::string at = "analysis.engines." + name;
      c.is(e, at, Want::Object);
      c.each(e, {"busy_ns", "idle_ns"}, at + ".", Want::Number);
      if (const json *w = c.opt(e, "wait_ns", at + ".wait_ns", Want::Object))
        for (const auto &[reason, ns] : w->items())
          c.is(ns, at + ".wait_ns." + reason, Want::Number);
      if (const json *w = c.opt(e, "work", at + ".work", Want::Object)) {
        c.each(*w, {"amount", "of_peak"}, at + ".work.", Want::Number);
        c.opt(*w, "unit", at + ".work.unit", Want::String);
      }
    }
  if (const json *queues = c.opt(a, "dma_queues", "analysis.dma_queues", Want::Array))
    for (size_t i = 0; i < queues->size(); ++i) {
      const json &q = (*queues)[i];
      const std::string at = item("analysis.dma_queues", i);
      c.is(q, at, Want::Object);
      c.opt(q, "name", at + ".name", Want::String);
      // The page writes these with toFixed: a number each, present.
      for (const char *k : {"achieved_gbps", "allowed_gbps"})
        c.need(q, k, at + "." + k, Want::Number, "a DMA queue's row gives its rates");
      c.each(q, {"transfers", "bytes", "active_ns", "idle_ns", "fixed_latency_ns", "per_row_ns", "transfer_ns"},
             at + ".", Want::Number);
      if (const json *w = c.opt(q, "wait_ns", at + ".wait_ns", Want::Object))
        for (const auto &[reason, ns] : w->items())
          c.is(ns, at + ".wait_ns." + reason, Want::Number);
    }
}

} // namespace

void check_report_stats(const json &stats, const std::string &file) {
  const DocCheck c(file, "a --stats document");
  c.is(stats, "(the document)", Want::Object);
  c.each(stats, {"kernel", "arch", "bottleneck"}, "", Want::String);
  c.opt(stats, "total_ns", "total_ns", Want::Number);
  if (const json *cp = c.opt(stats, "critical_path_ns", "critical_path_ns", Want::Object))
    for (const auto &[engine, ns] : cp->items())
      c.is(ns, "critical_path_ns." + engine, Want::Number);
  if (const json *a = c.opt(stats, "analysis", "analysis", Want::Object))
    check_analysis(c, *a);
  const json *profile = c.opt(stats, "profile", "profile", Want::Object);
  if (!profile)
    return;
  const json &cp = c.need(*profile, "critical_path", "profile.critical_path", Want::Object,
                          "a --stats document's profile holds its critical_path (run the kernel again with --stats)");
  const json &rows = c.need(cp, "instructions", "profile.critical_path.instructions", Want::Array,
                            "the critical path's instructions");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string at = item("profile.critical_path.instructions", i);
    c.is(rows[i], at, Want::Object);
    c.each(rows[i], {"name", "opcode", "engine", "file"}, at + ".", Want::String);
    c.each(rows[i], {"busy_ns", "wait_total_ns", "critical_path_ns"}, at + ".", Want::Number);
    c.each(rows[i], {"executions", "line"}, at + ".", Want::Integer);
    c.opt(rows[i], "dma_trigger", at + ".dma_trigger", Want::Boolean);
  }
}

void check_report_trace(const json &trace, const std::string &file) {
  const DocCheck c(file, "a --trace document");
  c.is(trace, "(the document)", Want::Object);
  const json &events = c.need(trace, "traceEvents", "traceEvents", Want::Array, "a --trace document's events");
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    const std::string at = item("traceEvents", i);
    c.is(e, at, Want::Object);
    c.each(e, {"pid", "tid"}, at + ".", Want::Integer);
    c.each(e, {"ts", "dur"}, at + ".", Want::Number);
    const json *ph = c.opt(e, "ph", at + ".ph", Want::String);
    const json *name = c.opt(e, "name", at + ".name", Want::String);
    if (ph && *ph == "M" && name && *name == "thread_name") {
      const json &args = c.need(e, "args", at + ".args", Want::Object, "a thread_name event names its track in args");
      c.need(args, "name", at + ".args.name", Want::String, "a thread_name event names its track in args.name");
      c.need(e, "tid", at + ".tid", Want::Integer, "a thread_name event names its thread");
    }
    if (ph && *ph == "X") {
      c.need(e, "tid", at + ".tid", Want::Integer, "a slice (ph X) names its thread");
      c.need(e, "ts", at + ".ts", Want::Number, "a slice (ph X) has its start");
    }
  }
}

} // namespace neuronsim::sim
