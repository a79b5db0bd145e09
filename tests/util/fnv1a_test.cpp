// Tests of the FNV-1a hash against the algorithm's published test vectors.
#include "sim/util/fnv1a.h"

#include <string_view>

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

uint64_t hash_bytes(std::string_view text) {
  Fnv1a hash;
  for (unsigned char byte : text) hash.add(byte);
  return hash.value();
}

TEST_CASE("Fnv1a gives the 64-bit FNV-1a test vectors over bytes") {
  // Landon Curt Noll's reference test suite (test_fnv.c, fnv1a_64 vectors).
  CHECK(hash_bytes("") == 0xcbf29ce484222325ull);
  CHECK(hash_bytes("a") == 0xaf63dc4c8601ec8cull);
  CHECK(hash_bytes("foobar") == 0x85944171f73967e8ull);
}

}  // namespace
}  // namespace clustersim
