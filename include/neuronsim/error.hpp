// One exception hierarchy for every error a user can cause (DESIGN.md section 7). Each carries where it
// happened -- file, instruction index and name, field -- so the CLI can print one line and pick an exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace neuronsim {

struct ErrorContext {
  // Positional, as the call sites write it ({file, index, name, field}); the source is usually added later.
  ErrorContext(std::string file_ = {}, long inst_index_ = -1, std::string inst_name_ = {}, std::string field_ = {},
               std::string source_ = {})
      : file(std::move(file_)), inst_index(inst_index_), inst_name(std::move(inst_name_)), field(std::move(field_)),
        source(std::move(source_)) {}
  std::string file;       // input file (BIR JSON, bundle stream, .npy), empty when not from a file
  long inst_index = -1;   // instruction index in its program/stream, -1 when not about one instruction
  std::string inst_name;  // instruction name ("I-4") or opcode, may be empty
  std::string field;      // JSON key / bundle field / argument ("ins[0].ap"), may be empty
  std::string source;     // the instruction's place in the user's source, from the BIR debug information
                          // ("kernel.py:42", isa::source_location), empty when unknown

  // About a whole file (a .npy, a manifest), not one instruction in it.
  static ErrorContext of_file(std::string path) {
    ErrorContext c;
    c.file = std::move(path);
    return c;
  }
};

class Error : public std::runtime_error {
public:
  Error(ErrorContext ctx, const std::string &message)
      : std::runtime_error(format(ctx, message)), ctx_(std::move(ctx)), message_(message) {}
  const ErrorContext &context() const { return ctx_; }
  const std::string &message() const { return message_; }
  // The CLI exit code (DESIGN.md section 5): 2 usage, 3 invalid input, 4 simulation error.
  virtual int exit_code() const { return 3; }

  // "file: instruction 3 'I-4' field 'op': message (kernel.py:42)", leaving out the parts that are unknown.
  static std::string format(const ErrorContext &c, const std::string &message) {
    std::string where;
    if (c.inst_index >= 0) where += "instruction " + std::to_string(c.inst_index);
    if (!c.inst_name.empty()) where += (where.empty() ? "'" : " '") + c.inst_name + "'";
    if (!c.field.empty()) where += (where.empty() ? "field '" : " field '") + c.field + "'";
    std::string s;
    if (!c.file.empty()) s += c.file + ": ";
    if (!where.empty()) s += where + ": ";
    s += message;
    if (!c.source.empty()) s += " (" + c.source + ")";
    return s;
  }

private:
  ErrorContext ctx_;
  std::string message_;
};

// The input cannot be parsed or names something unknown (exit 3).
class InputError : public Error {
public:
  using Error::Error;
};

// The input parsed but cannot run: out-of-range access pattern, capacity exceeded, unsupported combination.
class SemanticError : public Error {
public:
  using Error::Error;
};

// Something went wrong while simulating: deadlock, run-time out-of-bounds (exit 4).
class SimulationError : public Error {
public:
  using Error::Error;
  int exit_code() const override { return 4; }
};

// The command was called wrongly: an unknown option, a missing or malformed value (exit 2). No input is at fault,
// so it carries no context.
class UsageError : public Error {
public:
  explicit UsageError(const std::string &message) : Error(ErrorContext{}, message) {}
  int exit_code() const override { return 2; }
};

} // namespace neuronsim
