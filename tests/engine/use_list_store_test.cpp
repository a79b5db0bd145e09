// Tests of interned use lists: equal lists share an id, any difference (order, multiplicity,
// length) gives another, and every id reads back its list.
#include "sim/engine/use_list_store.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

using Use = MaxMinFair::Use;

bool equal(std::span<const Use> a, const std::vector<Use>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Use& x, const Use& y) {
    return x.constraint == y.constraint && x.multiplicity == y.multiplicity;
  });
}

TEST_CASE("equal use lists share one id, different ones get the next ids") {
  UseListStore store;
  const std::vector<std::vector<Use>> lists{
      {{0, 1}, {3, 1}}, {{3, 1}, {0, 1}}, {{0, 2}, {3, 1}}, {{0, 1}}, {}, {{0, 1}, {3, 1}, {4, 1}}};
  for (size_t i = 0; i < lists.size(); ++i) CHECK(store.intern(lists[i]) == int32_t(i));
  for (size_t i = 0; i < lists.size(); ++i) {
    CHECK(store.intern(std::vector<Use>(lists[i])) == int32_t(i));
    CHECK(equal(store.get(int32_t(i)), lists[i]));
  }
  CHECK(store.size() == lists.size());
}

}  // namespace
}  // namespace clustersim
