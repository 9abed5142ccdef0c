// The "unknown name" rule of include/neuronsim/isa/names.hpp.
#include "neuronsim/isa/names.hpp"

#include <algorithm>
#include <cctype>

namespace neuronsim::isa {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto &c : r)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

} // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insert, delete, substitute, or swap two adjacent characters ("scael" ->
  // "scale").
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string nearest_name(std::string_view given, const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints) {
  const std::string g = lower(given);
  for (const auto &c : candidates)
    if (lower(c) == g)
      return c;
  // Edits are counted on the lower-case forms, so that a wrong case costs nothing on top of a typo.
  // At most max(1, |name| / 3) edits, and fewer than the name has characters (any one letter is one edit from
  // "x").
  std::string best;
  size_t best_d = std::min(std::max<size_t>(1, given.size() / 3) + 1, given.size());
  for (const auto &c : candidates) {
    const size_t d = edit_distance(g, lower(c));
    if (d < best_d)
      best_d = d, best = c;
  }
  if (!best.empty())
    return best;
  for (const auto &[other, name] : hints)
    if (lower(other) == g && std::find(candidates.begin(), candidates.end(), name) != candidates.end())
      return name;
  return "";
}

std::string did_you_mean(std::string_view given, const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints) {
  const std::string near = nearest_name(given, candidates, hints);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

std::string name_hint(std::string_view given, const std::vector<std::string> &candidates,
                      const std::vector<std::pair<std::string, std::string>> &hints, size_t max_listed) {
  if (candidates.empty())
    return "";
  const std::string near = nearest_name(given, candidates, hints);
  if (max_listed == 0) // the caller says where the list is
    return near.empty() ? "" : " (did you mean '" + near + "'?)";
  std::string s = " (";
  if (!near.empty())
    s += "did you mean '" + near + "'?; ";
  s += "valid: ";
  for (size_t i = 0; i < candidates.size() && i < max_listed; ++i)
    s += (i ? ", " : "") + candidates[i];
  if (candidates.size() > max_listed)
    s += ", and " + std::to_string(candidates.size() - max_listed) + " more";
  return s + ")";
}

std::string unknown_name(const std::string &what, std::string_view given,
                         const std::vector<std::string> &candidates,
                         const std::vector<std::pair<std::string, std::string>> &hints, size_t max_listed) {
  return "unknown " + what + " '" + std::string(given) + "'" +
         name_hint(given, candidates, hints, max_listed);
}

} // namespace neuronsim::isa
