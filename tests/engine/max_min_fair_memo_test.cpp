// Tests of remembered max-min fair rates: on random sets of random flows, seen once or again,
// before and after the memo is full and forgets, the rates are MaxMinFair::solve's bit for bit.
#include "sim/engine/max_min_fair_memo.h"

#include <bit>
#include <catch2/catch.hpp>
#include <random>

namespace clustersim {
namespace {

using Use = MaxMinFair::Use;

TEST_CASE("remembered rates are the solver's, bit for bit, for sets seen again or forgotten") {
  std::mt19937 random(7);
  std::vector<double> capacities(16);
  for (double& c : capacities) c = std::uniform_real_distribution<double>(1e9, 1e11)(random);
  UseListStore store;
  std::vector<int32_t> ids;  // of 24 random lists (equal ones share an id)
  for (int l = 0; l < 24; ++l) {
    std::vector<Use> uses;
    const int n = std::uniform_int_distribution<int>(0, 4)(random);
    for (int i = 0; i < n; ++i) {
      uses.push_back({std::uniform_int_distribution<int32_t>(0, 15)(random),
                      std::uniform_int_distribution<int32_t>(1, 3)(random)});
    }
    ids.push_back(store.intern(uses));
  }
  MaxMinFairMemo memo;
  memo.set_capacities(capacities);
  MaxMinFair solver;
  solver.set_capacities(capacities);
  // About twice the flows the memo keeps (3.5 a set), each set solved twice: the second pass finds
  // the sets kept since it last forgot, and solves again those it forgot.
  std::vector<std::vector<int32_t>> sets(MaxMinFairMemo::kMaxFlows / 2);
  for (std::vector<int32_t>& flows : sets) {
    flows.resize(std::uniform_int_distribution<size_t>(1, 6)(random));
    for (int32_t& f : flows) f = ids[std::uniform_int_distribution<size_t>(0, 23)(random)];
  }
  size_t mismatches = 0;
  std::vector<double> expected;
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::vector<int32_t>& flows : sets) {
      std::vector<std::span<const Use>> uses;
      for (int32_t f : flows) uses.push_back(store.get(f));
      solver.solve(uses, 1e30, &expected);
      const std::vector<double>& rates = memo.solve(flows, store, 1e30);
      REQUIRE(rates.size() == expected.size());
      for (size_t i = 0; i < rates.size(); ++i) {
        mismatches += std::bit_cast<uint64_t>(rates[i]) != std::bit_cast<uint64_t>(expected[i]);
      }
    }
  }
  CHECK(mismatches == 0);
}

}  // namespace
}  // namespace clustersim
