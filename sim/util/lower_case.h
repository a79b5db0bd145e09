// ASCII lower-casing, for matching names case-insensitively.
#pragma once

#include <string>

namespace clustersim {

// `text` with A-Z turned into a-z (other bytes unchanged).
std::string lower_case(std::string text);

}  // namespace clustersim
