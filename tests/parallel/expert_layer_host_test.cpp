// Tests of the host's exposed time in eager expert layers (sim/parallel/expert_layer_host): the
// closed forms max(sync, issue - G) for a forward and max(0, issue - G) for a backward, and their
// place in the step: every expert layer's forward (and recomputed forward) of every micro-batch
// pays the sync, its backward only the issue floor, full-iteration CUDA graphs remove both, a
// router padded to capacity removes the sync (static split sizes), dense layers never pay either.
#include "sim/parallel/expert_layer_host.h"

#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/h100_expert_plan.h"

namespace clustersim {
namespace {

namespace s = schema;

Picoseconds host_us(double x) { return Picoseconds::from_microseconds(x); }

TEST_CASE("an eager expert forward waits max(sync, issue - G) on the host") {
  const ExpertLayerHost host{host_us(800), host_us(4000)};
  // The GPU's pass shorter than the host's issue time less the sync: host-bound at `issue`.
  CHECK(forward_host_exposed(host_us(1000), host) == host_us(3000));
  // A longer pass: only the sync is exposed.
  CHECK(forward_host_exposed(host_us(5000), host) == host_us(800));
  // At G = issue - sync both terms agree: the pass takes `issue` either way.
  CHECK(forward_host_exposed(host_us(3200), host) == host_us(800));
  CHECK(forward_host_exposed(host_us(1000), ExpertLayerHost{}) == host_us(0));
}

TEST_CASE("an eager expert backward reuses the forward's split sizes: the issue floor only") {
  const ExpertLayerHost host{host_us(800), host_us(4000)};
  CHECK(backward_host_exposed(host_us(1000), host) == host_us(3000));  // host-bound as a forward
  CHECK(backward_host_exposed(host_us(3200), host) == host_us(800));
  CHECK(backward_host_exposed(host_us(5000), host) == host_us(0));  // no sync to expose
}

TEST_CASE("static split sizes (a router padded to capacity) copy nothing: no sync, issue kept") {
  s::Gpu gpu;
  gpu.set_expert_layer_sync_us_per_expert(50);
  gpu.set_expert_layer_issue_us(4400);
  const ExpertLayerHost dynamic = expert_layer_host(gpu, 16, false);
  CHECK(dynamic.sync == host_us(800));
  CHECK(dynamic.issue == host_us(4400));
  const ExpertLayerHost padded = expert_layer_host(gpu, 16, true);
  CHECK(padded.sync == host_us(0));
  CHECK(padded.issue == host_us(4400));
  // A padded pass takes max(G, issue): the GPU's time beyond the issue floor, the floor below it.
  CHECK(forward_host_exposed(host_us(5000), padded) == host_us(0));
  CHECK(forward_host_exposed(host_us(1000), padded) == host_us(3400));
}

TEST_CASE("the host's time joins each pass's compute and leaves the all-to-all phases alone") {
  LayerTimes layer;
  layer.forward = {host_us(600), {}, {}, host_us(400), {}};
  layer.backward = {host_us(2000), {}, {}, host_us(400), {}};
  layer.recompute = layer.forward;
  layer.forward_phases = {host_us(300), host_us(300), host_us(200), host_us(200)};
  const ExpertLayerHost host{host_us(100), host_us(1500)};
  LayerTimes eager = layer;
  add_expert_layer_host(host, false, &eager);
  CHECK(eager.forward.compute == host_us(600 + 500));  // issue 1500 - G 1000
  CHECK(eager.backward.compute == host_us(2000));      // G 2400 > issue, and no sync in a backward
  CHECK(eager.forward.expert_comm == host_us(400));
  CHECK(eager.forward_phases.pre_dispatch == host_us(300));
  CHECK(eager.recompute.compute == host_us(600));  // not recomputed in full: no second sync
  add_expert_layer_host(host, true, &layer);
  CHECK(layer.recompute.compute == host_us(600 + 500));
}

using testing::h100_expert_plan;

// Mixtral 8x7B: 32 MoE layers of 8 experts, one per GPU under EP 8.
constexpr const char* kMixtral = "mixtral-8x7b";
constexpr const char* kEp8 = "expert_parallel: 8";

TEST_CASE("without graphs every expert layer's forward of every micro-batch exposes the sync") {
  // 125 us per expert, Mixtral's 8 on EP 8: 1 per GPU, sync 125 us beyond any issue floor, in
  // the forward only: 4 micro-batches x 32 layers x 125 us.
  const int m = 4;
  const std::string sync = "expert_layer_sync_us_per_expert: 125";
  const TransformerPlan none = h100_expert_plan(kMixtral, kEp8, "", m);
  const TransformerPlan eager = h100_expert_plan(kMixtral, kEp8, sync, m);
  CHECK(eager.compute_s[0] - none.compute_s[0] == Approx(m * 32 * 125e-6).epsilon(1e-9));
  CHECK(eager.expert_comm_s[0] == none.expert_comm_s[0]);
  // Recomputing the expert layers reruns the dispatcher's forward: a second sync per layer.
  const std::string rerun = std::string(kEp8) + " recompute_modules: RECOMPUTE_MOE";
  CHECK(h100_expert_plan(kMixtral, rerun, sync, m).compute_s[0] -
            h100_expert_plan(kMixtral, rerun, "", m).compute_s[0] ==
        Approx(m * 32 * 2 * 125e-6).epsilon(1e-9));
  const TransformerPlan graphed =
      h100_expert_plan(kMixtral, std::string(kEp8) + " cuda_graphed_expert_layers: true",
                       "expert_layer_sync_us_per_expert: 125", m);
  CHECK(graphed.compute_s[0] == none.compute_s[0]);
}

TEST_CASE("single-launch grouped GEMMs expose one expert's sync whatever the local experts") {
  // Mixtral's 8 experts on EP 2: 4 a GPU. Megatron-Core's eager layer launches each expert's
  // GEMMs after the copy (4 x 125 us a forward); AutoModel's gmm launches both grouped GEMMs once
  // (125 us): 4 micro-batches x 32 layers x 125 us.
  const int m = 4;
  const std::string sync = "expert_layer_sync_us_per_expert: 125";
  const std::string ep2 = "expert_parallel: 2";
  const std::string single = ep2 + " single_launch_grouped_experts: true";
  CHECK(h100_expert_plan(kMixtral, ep2, sync, m).compute_s[0] -
            h100_expert_plan(kMixtral, ep2, "", m).compute_s[0] ==
        Approx(m * 32 * 4 * 125e-6).epsilon(1e-9));
  CHECK(h100_expert_plan(kMixtral, single, sync, m).compute_s[0] -
            h100_expert_plan(kMixtral, single, "", m).compute_s[0] ==
        Approx(m * 32 * 125e-6).epsilon(1e-9));
}

TEST_CASE("a padded router's eager layers expose no sync, a capped unpadded one's do") {
  // Capacity factor 1 with a balanced router drops nothing: the same GEMMs and bytes either way.
  // Padded, the dispatcher's split sizes are static (no device-to-host copy): the step equals the
  // one without host fields. Capped but not padded, the output size is dynamic and synchronised:
  // 4 micro-batches x 32 layers x 125 us (the forwards), as a dropless router's.
  const int m = 4;
  const std::string padded = "expert_routing { capacity_factor: 1 pad_to_capacity: true }";
  const std::string capped = "expert_routing { capacity_factor: 1 }";
  const std::string sync = "expert_layer_sync_us_per_expert: 125";
  CHECK(h100_expert_plan(kMixtral, kEp8, sync, m, padded).compute_s[0] ==
        h100_expert_plan(kMixtral, kEp8, "", m, padded).compute_s[0]);
  CHECK(h100_expert_plan(kMixtral, kEp8, sync, m, capped).compute_s[0] -
            h100_expert_plan(kMixtral, kEp8, "", m, capped).compute_s[0] ==
        Approx(m * 32 * 125e-6).epsilon(1e-9));
  // The issue floor stays: 1 s a pass, each layer's two passes at least 2 s of stage time.
  const TransformerPlan bound =
      h100_expert_plan(kMixtral, kEp8, "expert_layer_issue_us: 1e6", 1, padded);
  CHECK(bound.compute_s[0] + bound.tensor_comm_s[0] + bound.expert_comm_s[0] >= 32 * 2 * 1.0);
}

TEST_CASE("a host-bound expert pass takes the issue time whatever the GPU's share") {
  // Issue 1 s per pass dwarfs the GPU's: each layer's two passes take 2 s of stage time.
  const TransformerPlan bound = h100_expert_plan(kMixtral, kEp8, "expert_layer_issue_us: 1e6", 1);
  const double stage = bound.compute_s[0] + bound.tensor_comm_s[0] + bound.expert_comm_s[0];
  const TransformerPlan none = h100_expert_plan(kMixtral, kEp8, "", 1);
  CHECK(stage >= 32 * 2 * 1.0);
  CHECK(stage < 32 * 2 * 1.0 + none.compute_s[0]);
}

TEST_CASE("a combined step saves no time on a host-bound expert layer") {
  // With the all-to-all overlap a combined step hides all-to-alls from the GPU, but a pass the
  // host issues in 1 s, far beyond the GPU's, still takes 1 s: combined = alone, per chunk.
  const std::string overlap = std::string(kEp8) + " overlap_expert_communication: true";
  const TransformerPlan bound =
      h100_expert_plan(kMixtral, overlap, "expert_layer_issue_us: 1e6", 4);
  const StageWork& w = bound.plan.work[0];
  CHECK(w.combined_forward[0] == w.chunk_forward[0]);
  CHECK(w.combined_backward[0] == w.chunk_backward[0]);
  // Without the host the combined step is shorter by the all-to-alls it hides.
  const TransformerPlan gpu_only = h100_expert_plan(kMixtral, overlap, "", 4);
  CHECK(gpu_only.plan.work[0].combined_forward[0] < gpu_only.plan.work[0].chunk_forward[0]);
}

TEST_CASE("dense layers never wait on the host") {
  const TransformerPlan eager = h100_expert_plan(
      "llama3-8b", "", "expert_layer_sync_us_per_expert: 125 expert_layer_issue_us: 1e6", 2);
  const TransformerPlan none = h100_expert_plan("llama3-8b", "", "", 2);
  CHECK(eager.compute_s[0] == none.compute_s[0]);
}

}  // namespace
}  // namespace clustersim
