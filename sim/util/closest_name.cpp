// Edit-distance based suggestions for misspelt names.
#include "sim/util/closest_name.h"

#include <algorithm>
#include <cctype>

namespace clustersim {
namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// `c` folded to lower case, with the separators '.', '-' and '_' made one: users mix them up
// ("aws.fsx.lustre" for "aws.fsx-lustre").
char normalised(char c) { return c == '-' || c == '_' ? '.' : fold(c); }

// How many leading characters a and b share, after normalising case and separators.
size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && normalised(a[n]) == normalised(b[n])) ++n;
  return n;
}

// True when `full` ends with "." + typed (case-insensitive): the user left out a prefix.
bool is_unprefixed_form(std::string_view typed, std::string_view full) {
  if (typed.size() + 1 > full.size()) return false;
  if (full[full.size() - typed.size() - 1] != '.') return false;
  return edit_distance(typed, full.substr(full.size() - typed.size())) == 0;
}

}  // namespace

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int substitution = diagonal + (fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (is_unprefixed_form(typed, c)) return c;
  }
  const int allowed = std::max<int>(2, static_cast<int>(typed.size()) / 3);
  std::optional<std::string> best;
  int best_distance = allowed + 1;
  size_t best_prefix = 0;
  for (const std::string& c : candidates) {
    const int d = edit_distance(typed, c);
    const size_t prefix = common_prefix(typed, c);
    if (d < best_distance || (d == best_distance && prefix > best_prefix)) {
      best_distance = d;
      best_prefix = prefix;
      best = c;
    }
  }
  if (best) return best;
  // A truncated name ("aws.p5.48xl"): the one candidate that starts with it.
  std::optional<std::string> extension;
  for (const std::string& c : candidates) {
    if (c.size() <= typed.size() || edit_distance(typed, c.substr(0, typed.size())) != 0) continue;
    if (extension) return std::nullopt;
    extension = c;
  }
  return extension;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  std::optional<std::string> best = closest_name(typed, candidates);
  return best ? " (did you mean \"" + *best + "\"?)" : "";
}

}  // namespace clustersim
