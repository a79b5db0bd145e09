// How a message shows a byte that cannot be printed as it is (a control character, a byte that
// is not UTF-8): the same hexadecimal form in every file's errors.
#pragma once

#include <string>

namespace clustersim {

// The byte in hexadecimal, upper-case, two digits: hex_byte(0x1f) == "0x1F", hex_byte(0) ==
// "0x00".
std::string hex_byte(unsigned char byte);

}  // namespace clustersim
