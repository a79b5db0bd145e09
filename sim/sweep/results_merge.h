// Joins the results files of every shard of one sweep into the file a single run of the whole
// sweep gives: the same rows in configuration order, the same counts and attributes.
#pragma once

#include <string>
#include <vector>

namespace clustersim {

// Requires nothing of the inputs: each must be a complete shard of the same sweep (scenario,
// catalog, tool version), every shard present once; otherwise returns false with `*error`
// naming the offending file. Writes `output` atomically (results_file.h).
bool merge_results(const std::vector<std::string>& inputs, const std::string& output,
                   std::string* error);

}  // namespace clustersim
