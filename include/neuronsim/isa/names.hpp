// Names a user spells -- enum values, dtypes, opcodes, keys, tensors, architectures, options -- and the one
// rule every "unknown name" message follows: it lists the valid names and suggests the nearest. The nearest
// is a case-insensitive match first ("relu" -> "Relu"), else the fewest edits within max(1, |name| / 3) and
// below |name| ("mul" -> "mult", "scael" -> "scale"), else a spelling the caller knows as another tool's word
// for a valid name ("fp32" -> "float32": hints, never accepted in its place).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neuronsim::isa {

// Edit distance: insert, delete, substitute or swap two adjacent characters, one edit each (optimal string
// alignment).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `given` by the rule above, or "" when none is near. `hints` maps other tools'
// spellings (compared case-insensitively) to a candidate.
std::string nearest_name(std::string_view given, const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints = {});

// " (did you mean 'X'?)" for the nearest candidate, or "": for messages that list the valid names themselves.
std::string did_you_mean(std::string_view given, const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints = {});

// The tail of an "unknown <what> '<given>'" message: " (did you mean 'X'?; valid: a, b, c)", the list cut
// after `max_listed` names ("..., and 70 more"); max_listed 0: no list (the caller says where it is). Without
// candidates: "".
std::string name_hint(std::string_view given, const std::vector<std::string> &candidates,
                      const std::vector<std::pair<std::string, std::string>> &hints = {},
                      size_t max_listed = 40);

// "unknown <what> '<given>'" + name_hint: the whole message.
std::string unknown_name(const std::string &what, std::string_view given,
                         const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints = {},
                         size_t max_listed = 40);

} // namespace neuronsim::isa
