// Activation offload to host memory: Transformer Engine's layer windows, the host link's share,
// the closed forms of copies hidden under and exceeding their window's compute (one ZeRO-3 stage
// with instant gathers), and the GPU memory the offload frees.
#include "sim/parallel/activation_offload.h"

#include <catch2/catch.hpp>

#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/step_model.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/parallel/zero3_traffic.h"
#include "tests/testing/cluster.h"
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
  CollectiveSmContention compute;  // no collective counted on it: compute at its own speed
  Zero3Stage stage(
      work, tasks, ms(40), ms(80), &sim,
      [&](CollectiveOp, DataParallelGroup, double, std::function<void()> done) {
        sim.call_after(Picoseconds(0), std::move(done));
      },
      &compute);
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

TEST_CASE("the step hides offload copies on NVLink-C2C and shows them over PCIe") {
  // Llama 3 70B at 8K, FP8, micro-batch 2 under ZeRO-3 on 2 GB200 trays (DP 8), 40 of 80 layers
  // offloaded as the 25.09 recipe: a layer's copy (3.6 GB at 225 GB/s, 16 ms) hides under a
  // window of 2 forward layers (16 ms each) but the first, of 1; over the tray's PCIe 5 link
  // alone (63 GB/s, 58 ms) every window's copy shows.
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.gb200-nvl72", 2);
  s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 2 virtual_stages: 1 zero_stage: 3 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE gradient_reduce_in_fp32: false");
  const s::TrainingJob job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 16 sequence_length: 8192 precision: FP8 optimizer: ADAM steps: 1 "
      "fp8_parameters: true fp8_recipe: CURRENT_SCALING");
  const s::Model& model = testing::shipped_model("llama3-70b");
  const s::Gpu& gb200 = catalog.gpu_of(testing::shipped_instance("onprem.gb200-nvl72"));
  s::Gpu pcie_only = gb200;
  pcie_only.clear_host_link();
  const s::Runtime& runtime = *catalog.runtimes().find("default")->value;
  auto step = [&](const s::Gpu& gpu) {
    const ComputeModel compute(gpu, s::FP8, runtime, KernelSetting::kTrainingStep,
                               job.fp8_recipe());
    return simulate_step(model, job, p, *topology, compute).step_s;
  };
  const double kept = step(gb200);
  p.set_activation_offload_layers(40);
  const ComputeModel compute(gb200, s::FP8, runtime, KernelSetting::kTrainingStep,
                             job.fp8_recipe());
  const ActivationOffload offload =
      transformer_plan(model, job, p, *topology, compute).plan.work[0].zero3.offload;
  CHECK(offload.layers == 40);
  CHECK(offload.link_bytes_per_s == Approx(225e9));
  CHECK(offload.layer_bytes ==
        estimate_stage_memory(model, job, p, 0, 0, {}).layer_activations_bytes);
  const double c2c = step(gb200);
  const double pcie = step(pcie_only);
  // One micro-batch per replica: C2C shows only the first window's excess, PCIe far more.
  CHECK(c2c - kept >= 0);
  CHECK(c2c - kept < 0.002);
  CHECK(pcie - kept > 0.5);
}

}  // namespace
}  // namespace clustersim
