// Tests of the labels a chart tells configurations apart by (plot's breakdown bars): an input
// sweep's bars of one layout differ by their storage and workers, named only where they vary, the
// choices all bars share said once; a mix's say whether its pools are pipeline stages or
// data-parallel replicas.
#include "sim/sweep/configuration_labels.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

namespace clustersim {
namespace {

// A ranked row of one p5 node, TP 1 PP 1 DP 8 mbs 1, ZeRO 1, no recompute, 1F1B, with `cells`
// (key, value) set on top.
ResultRow row(const std::vector<std::pair<const char*, Table::Cell>>& cells) {
  ResultRow r(result_columns().size());
  const auto set = [&](const char* key, Table::Cell value) {
    r[result_column(key)] = std::move(value);
  };
  set("instance", std::string("aws.p5.48xlarge"));
  set("pools", 1.0);
  for (const char* key : {"nodes", "tensor_parallel", "context_parallel", "pipeline_parallel",
                          "expert_parallel", "micro_batch_size", "virtual_stages", "zero_stage"}) {
    set(key, 1.0);
  }
  set("data_parallel", 8.0);
  set("data_parallel_shard", 8.0);
  set("distributed_optimizer", false);
  set("sequence_parallel", false);
  set("recompute", std::string("RECOMPUTE_NONE"));
  set("schedule", std::string("ONE_F_ONE_B"));
  for (const auto& [key, value] : cells) set(key, value);
  return r;
}

ResultRow input_row(const char* tier, double gib, double workers) {
  return row({{"storage_tier", std::string(tier)},
              {"storage_capacity_gib", gib},
              {"dataloader_workers_per_gpu", workers}});
}

constexpr const char* kLayout = "aws.p5.48xlarge x 1, TP 1 PP 1 DP 8 mbs 1";
constexpr const char* kShared = "ZeRO 1, RECOMPUTE_NONE, ONE_F_ONE_B, no SP";

TEST_CASE("an input sweep's labels name the storage and workers where they vary") {
  const std::string layout = kLayout, shared = kShared;
  // Workers vary, the volume does not: the workers are named, the volume shared.
  ConfigurationLabels l = configuration_labels(
      {input_row("aliyun.essd.pl1", 200, 2), input_row("aliyun.essd.pl1", 200, 6)});
  CHECK(l.labels ==
        std::vector<std::string>{layout + ", 2 workers/GPU", layout + ", 6 workers/GPU"});
  CHECK(l.shared == shared + ", aliyun.essd.pl1 200 GiB");
  // The volume varies (its tier, or its capacity), the workers do not.
  l = configuration_labels({input_row("aliyun.essd.pl0", 200, 4),
                            input_row("aliyun.essd.pl1", 200, 4),
                            input_row("aliyun.essd.pl1", 500, 4)});
  CHECK(l.labels == std::vector<std::string>{layout + ", aliyun.essd.pl0 200 GiB",
                                             layout + ", aliyun.essd.pl1 200 GiB",
                                             layout + ", aliyun.essd.pl1 500 GiB"});
  CHECK(l.shared == shared + ", 4 workers/GPU");
  // Both vary.
  l = configuration_labels(
      {input_row("aliyun.essd.pl0", 200, 4), input_row("aliyun.essd.pl1", 200, 8)});
  CHECK(l.labels == std::vector<std::string>{layout + ", aliyun.essd.pl0 200 GiB, 4 workers/GPU",
                                             layout + ", aliyun.essd.pl1 200 GiB, 8 workers/GPU"});
  CHECK(l.shared == shared);
}

TEST_CASE("a label names the layout and the choices that differ, the rest said once") {
  const std::string layout = kLayout;
  const ResultRow two_nodes =
      row({{"nodes", 2.0}, {"data_parallel", 16.0}, {"data_parallel_shard", 16.0}});
  ConfigurationLabels l = configuration_labels({row({}), two_nodes});
  CHECK(l.labels == std::vector<std::string>{layout, "aws.p5.48xlarge x 2, TP 1 PP 1 DP 16 mbs 1"});
  CHECK(l.shared == kShared);  // no dataloader: no storage or workers
  l = configuration_labels({row({}), row({{"sequence_parallel", true},
                                          {"distributed_optimizer", true},
                                          {"virtual_stages", 2.0}})});
  CHECK(l.labels == std::vector<std::string>{layout + ", ZeRO 1, no SP",
                                             layout + " v 2, dist opt, SP"});
  CHECK(l.shared == "RECOMPUTE_NONE, ONE_F_ONE_B");
  // A single row's label says everything.
  l = configuration_labels({input_row("aliyun.essd.pl1", 200, 6)});
  CHECK(l.labels == std::vector<std::string>{
                        layout + ", " + kShared + ", aliyun.essd.pl1 200 GiB, 6 workers/GPU"});
  CHECK(l.shared.empty());
}

TEST_CASE("a mix's labels say whether its pools are pipeline stages or data-parallel replicas") {
  const auto mix = [](const char* placement) {
    return row({{"instance", std::string("aws.p5.48xlarge x 4 + aws.p4d.24xlarge x 4")},
                {"pools", 2.0},
                {"nodes", 8.0},
                {"tensor_parallel", 8.0},
                {"pipeline_parallel", 4.0},
                {"data_parallel", 2.0},
                {"data_parallel_shard", 2.0},
                {"pool_placement", std::string(placement)},
                {"pools_as", std::string(std::string(placement).find(": stage") != std::string::npos
                                             ? "PIPELINE_ACROSS_POOLS"
                                             : "DATA_PARALLEL_POOLS")}});
  };
  const ResultRow stages =
      mix("aws.p5.48xlarge: stages 1-2 (layers 28+27) + aws.p4d.24xlarge: stages 3-4 (layers "
          "13+12)");
  const ResultRow replicas =
      mix("aws.p5.48xlarge: 1 replica takes 40 of 64 micro-batches + aws.p4d.24xlarge: 1 replica "
          "takes 24 of 64 micro-batches");
  const std::string layout = "aws.p5.48xlarge x 4 + aws.p4d.24xlarge x 4, TP 8 PP 4 DP 2 mbs 1";
  ConfigurationLabels l = configuration_labels({stages, replicas});
  CHECK(l.labels == std::vector<std::string>{
                        layout + ", pools as pipeline stages (first on aws.p5.48xlarge x 4)",
                        layout + ", pools as data-parallel replicas"});
  CHECK(l.shared == kShared);
  // Pools of one kind in every bar: said once.
  l = configuration_labels({stages, stages});
  CHECK(l.labels == std::vector<std::string>{layout, layout});
  CHECK(l.shared ==
        std::string("pools as pipeline stages (first on aws.p5.48xlarge x 4), ") + kShared);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("rows differing only in recompute or schedule read apart, defaults named where they vary") {
  const ResultRow none = row({}), full = row({{"recompute", std::string("RECOMPUTE_FULL")}});
  const ResultRow gpipe = row({{"schedule", std::string("GPIPE")}});
  // Alone: every choice at its default left out.
  CHECK(describe_configuration(none) == std::string(kLayout) + ", ZeRO 1");
  CHECK(describe_configuration(full) == std::string(kLayout) + ", ZeRO 1, RECOMPUTE_FULL");
  CHECK(describe_configuration(gpipe) == std::string(kLayout) + ", ZeRO 1, GPIPE");
  // Among rows where recompute varies: named at its default too.
  const ChoiceSpread spread = choice_spread({&none, &full, &gpipe});
  CHECK(describe_configuration(none, spread) ==
        std::string(kLayout) + ", ZeRO 1, RECOMPUTE_NONE, ONE_F_ONE_B");
  CHECK(describe_configuration(full, spread) ==
        std::string(kLayout) + ", ZeRO 1, RECOMPUTE_FULL, ONE_F_ONE_B");
  CHECK(describe_configuration(gpipe, spread) ==
        std::string(kLayout) + ", ZeRO 1, RECOMPUTE_NONE, GPIPE");
}

}  // namespace
}  // namespace clustersim
