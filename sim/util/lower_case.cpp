// ASCII lower-casing.
#include "sim/util/lower_case.h"

#include <algorithm>
#include <cctype>

namespace clustersim {

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace clustersim
