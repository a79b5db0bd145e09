// Activation offload to host memory: Transformer Engine's layer windows, the host link's share,
// the closed forms of copies hidden under and exceeding their window's compute (one ZeRO-3 stage
// with instant gathers), and the GPU memory the offload frees.
#include "sim/parallel/activation_offload.h"

#include <catch2/catch.hpp>

#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/zero3_traffic.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

namespace s = schema;

using testing::ms;

TEST_CASE("offload windows follow Transformer Engine's layer window map") {
  // 40 of 80 layers (the 25.09 GB200 Llama 3 70B recipe): every window two layers wide but the
  // first, closing after layers 1, 3, ..., 79.
  CHECK(offload_window(0, 40, 80) == OffloadWindow{0, 1});
  CHECK(offload_window(1, 40, 80) == OffloadWindow{1, 3});
  CHECK(offload_window(39, 40, 80) == OffloadWindow{77, 79});
  // 95 of 126 (Llama 3.1 405B): the 126 mod 95 = 31 first windows two layers wide, then one.
  CHECK(offload_window(0, 95, 126) == OffloadWindow{0, 1});
  CHECK(offload_window(30, 95, 126) == OffloadWindow{59, 61});
  CHECK(offload_window(31, 95, 126) == OffloadWindow{61, 62});
  CHECK(offload_window(94, 95, 126) == OffloadWindow{124, 125});
  // The last window always closes with the chunk's last layer.
  for (int n = 1; n < 12; ++n) CHECK(offload_window(n - 1, n, 12).last == 11);
}

TEST_CASE("a GPU's host link: its share of NVLink-C2C, else its PCIe link") {
  // GB200: 450 GB/s each way shared by the superchip's 2 GPUs; H100 SXM: PCIe 5 x16.
  const s::Gpu& gb200 = testing::shipped_catalog().gpu_of(
      testing::shipped_instance("onprem.gb200-nvl72"));
  CHECK(host_link_bytes_per_s(gb200) == Approx(225e9));
  const s::Gpu& h100 =
      testing::shipped_catalog().gpu_of(testing::shipped_instance("aws.p5.48xlarge"));
  CHECK(host_link_bytes_per_s(h100) == Approx(h100.pcie().per_direction_gb_per_s() * 1e9));
  CHECK(host_link_bytes_per_s(s::Gpu()) == 0);
}

struct OffloadRun {
  double end_ms = 0, waited_ms = 0, out_bytes = 0, in_bytes = 0;
};

// One micro-batch's forward and backward through 4 layers (10 ms forward and 20 ms backward per
// layer) under ZeRO-3 with instant gathers, 2 layers offloaded, each copy taking `copy`.
OffloadRun run_offloaded(Picoseconds copy) {
  Simulation sim;
  Zero3Work work;
  work.units = 4;
  work.unit_gather_bytes = 1;
  work.unit_gradient_bytes = 1;
  work.offload = {2, 1e9, 1e9 / copy.seconds()};
  const auto tasks = stage_schedule(s::ONE_F_ONE_B, 1, 1, 1, 0);
  Zero3Stage stage(work, tasks, ms(40), ms(80), &sim,
                   [&](CollectiveOp, double, std::function<void()> done) {
                     sim.call_after(Picoseconds(0), std::move(done));
                   });
  OffloadRun run;
  stage.run_task(0, [&] {
    stage.run_task(1, [&] { run.end_ms = sim.now().seconds() * 1e3; });
  });
  sim.run();
  run.waited_ms = stage.offload()->waited().seconds() * 1e3;
  run.out_bytes = stage.offload()->copied_out_bytes();
  run.in_bytes = stage.offload()->copied_in_bytes();
  return run;
}

TEST_CASE("an offload copy that hides under its window's compute adds nothing") {
  // Windows (forward): layer 0's copy under layer 1's forward, layer 1's under layers 2 and 3;
  // backward alike in reverse. A 5 ms copy fits every one of them.
  const OffloadRun r = run_offloaded(ms(5));
  CHECK(r.end_ms == Approx(120));
  CHECK(r.waited_ms == 0);
  CHECK(r.out_bytes == Approx(2e9));  // each offloaded layer out once and back once
  CHECK(r.in_bytes == Approx(2e9));
}

TEST_CASE("an offload copy longer than its window's compute adds exactly its excess") {
  // 15 ms: layer 0's copy out exceeds layer 1's 10 ms forward by 5 ms; every other window (20 ms
  // of forward, or a 20 ms backward layer) hides its copy.
  OffloadRun r = run_offloaded(ms(15));
  CHECK(r.end_ms == Approx(120 + 5));
  CHECK(r.waited_ms == Approx(5));
  // 25 ms: out 0 exceeds 10 ms by 15, out 1 its 20 ms by 5, and the copy back of layer 0, after
  // layer 2's backward, its one 20 ms layer by 5 (layer 1's back hides under layers 3 and 2).
  r = run_offloaded(ms(25));
  CHECK(r.end_ms == Approx(120 + 15 + 5 + 5));
  CHECK(r.waited_ms == Approx(25));
}

TEST_CASE("offloading frees all but one offloaded layer's activations from GPU memory") {
  // Llama 3 70B at 8K, micro-batch 2, TP 1 under ZeRO-3 on 64 GPUs, 40 of 80 layers offloaded.
  s::TrainingJob job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 128 sequence_length: 8192 precision: BF16 optimizer: ADAM steps: 1");
  s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 data_parallel: 64 micro_batch_size: 2 "
      "virtual_stages: 1 zero_stage: 3 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  const s::Model& model = testing::shipped_model("llama3-70b");
  const MemoryEstimate kept = estimate_memory(model, job, p, 1e15, {});
  p.set_activation_offload_layers(40);
  const MemoryEstimate offloaded = estimate_memory(model, job, p, 1e15, {});
  CHECK(kept.layer_activations_bytes == offloaded.layer_activations_bytes);
  CHECK(kept.activations_bytes == Approx(80 * kept.layer_activations_bytes));
  CHECK(kept.activations_bytes - offloaded.activations_bytes ==
        Approx(39 * kept.layer_activations_bytes));
  CHECK(offloaded.offloaded_activations_bytes == Approx(40 * kept.layer_activations_bytes));
  CHECK(kept.offloaded_activations_bytes == 0);
}

}  // namespace
}  // namespace clustersim
