// "Did you mean ...?" suggestions for misspelt names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// Case-insensitive Levenshtein distance between a and b.
int edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, if one is close enough to be a plausible typo: equal to `typed`
// after removing a dotted prefix ("p5.48xlarge" for "aws.p5.48xlarge"), else within max(2, len/3)
// edits, else the only candidate that `typed` is the beginning of ("aws.p5.48xl"). Ties in edits go
// to the candidate sharing the longest beginning with `typed` once case and the separators . - _
// are made one ("aws.fsx.lustre.persistent2" gives "aws.fsx-lustre.persistent2-125", not the
// equally distant "aws.fsx-lustre.persistent1-200"), then to the first in the list, so the answer
// is deterministic.
std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates);

// " (did you mean \"x\"?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace clustersim
