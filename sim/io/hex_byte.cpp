// Writing one byte in hexadecimal for a message.
#include "sim/io/hex_byte.h"

namespace clustersim {

std::string hex_byte(unsigned char byte) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[byte >> 4] + kDigits[byte & 15];
}

}  // namespace clustersim
