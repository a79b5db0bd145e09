// Tests of RankingLeaders (sim/sweep/ranking_leaders.h): the best entry and the best of another
// configuration, whatever the order entries come in, and TopRows' leaders beyond its capacity.
#include "sim/sweep/ranking_leaders.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/sweep/ranking.h"

namespace clustersim {
namespace {

struct Offered {
  RankingLeaders<std::string>::Key key;
  int64_t configuration;
  std::string name;
};

RankingLeaders<std::string> leaders_of(const std::vector<Offered>& entries) {
  RankingLeaders<std::string> leaders;
  for (const Offered& e : entries) leaders.offer(e.key, e.configuration, e.name);
  return leaders;
}

TEST_CASE("the runner-up is the best entry of another configuration, in any order", "[ranking]") {
  // Configuration 7 leads under two billing modes (1.0, 1.1); the runner-up is configuration 3's
  // 1.2, not 7's second row, and 5's 1.3 is third. Every one of the 24 orders gives the same pair.
  std::vector<Offered> entries = {{{1.0, 0}, 7, "7 on demand"},
                                  {{1.1, 0}, 7, "7 spot"},
                                  {{1.2, 0}, 3, "3 on demand"},
                                  {{1.3, 0}, 5, "5 on demand"}};
  const auto by_name = [](const Offered& a, const Offered& b) { return a.name < b.name; };
  std::sort(entries.begin(), entries.end(), by_name);
  int orders = 0;
  do {
    const RankingLeaders<std::string> leaders = leaders_of(entries);
    REQUIRE(leaders.best() != nullptr);
    REQUIRE(leaders.runner_up() != nullptr);
    CHECK(*leaders.best() == "7 on demand");
    CHECK(*leaders.runner_up() == "3 on demand");
    ++orders;
  } while (std::next_permutation(entries.begin(), entries.end(), by_name));
  CHECK(orders == 24);
}

TEST_CASE("a new best of another configuration makes the old best the runner-up", "[ranking]") {
  const RankingLeaders<std::string> leaders =
      leaders_of({{{2.0, 0}, 1, "one"}, {{3.0, 0}, 2, "two"}, {{1.0, 0}, 3, "three"}});
  CHECK(*leaders.best() == "three");
  CHECK(*leaders.runner_up() == "one");
}

TEST_CASE("of equal keys the entry offered first ranks first", "[ranking]") {
  // As a stable sort of the entries in the order offered would rank them.
  const RankingLeaders<std::string> leaders =
      leaders_of({{{1.0, 2.0}, 1, "first"}, {{1.0, 2.0}, 2, "second"}, {{1.0, 2.0}, 3, "third"}});
  CHECK(*leaders.best() == "first");
  CHECK(*leaders.runner_up() == "second");
}

TEST_CASE("no runner-up without another configuration", "[ranking]") {
  const RankingLeaders<std::string> none;
  CHECK(none.best() == nullptr);
  CHECK(none.runner_up() == nullptr);
  const RankingLeaders<std::string> one = leaders_of({{{1.0, 0}, 4, "a"}, {{0.5, 0}, 4, "b"}});
  CHECK(*one.best() == "b");
  CHECK(one.runner_up() == nullptr);
}

// A ranked row of configuration `index` under `billing` taking `hours` to train.
ResultRow timed_row(int index, const char* billing, double hours) {
  ResultRow row(result_columns().size());
  row[0] = static_cast<double>(index);
  row[result_column("status")] = std::string(kStatusOk);
  row[result_column("billing")] = std::string(billing);
  row[result_column("time_to_train_h")] = hours;
  return row;
}

TEST_CASE("TopRows keeps its runner-up beyond its capacity", "[ranking]") {
  // A sweep's --limit 1 under four billing modes: the fastest configuration's four rows (10 h)
  // fill any list of four, and its runner-up (configuration 1, 10.5 h) is the fifth row.
  TopRows fastest(result_column("time_to_train_h"), 1);
  for (const char* billing : {"ON_DEMAND", "SUBSCRIPTION_MONTHLY", "SUBSCRIPTION_YEARLY", "SPOT"}) {
    fastest.offer(timed_row(0, billing, 10.0));
  }
  fastest.offer(timed_row(1, "ON_DEMAND", 10.5));
  REQUIRE(fastest.rows().size() == 1);
  REQUIRE(fastest.leaders().best() != nullptr);
  CHECK(*fastest.leaders().best() == fastest.rows().front());
  CHECK(row_text(*fastest.leaders().best(), result_column("billing")) == "ON_DEMAND");
  REQUIRE(fastest.leaders().runner_up() != nullptr);
  CHECK(row_number(*fastest.leaders().runner_up(), 0) == 1);
}

}  // namespace
}  // namespace clustersim
