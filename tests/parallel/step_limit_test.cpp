// Tests of what the limiting column names (step_limit.h): the largest part of a step, the
// kernels' slowdown beside overlapped collectives weighed as data-parallel communication, and the
// task work beside collectives that outlast the last backward or beside ZeRO-3 gathers the
// compute waited for, and an
// expert- or tensor-parallel group's traffic over the scale-out network where it is the largest
// part beside the compute, also where another stage's crossing shows as the critical stage's
// bubble, with the link that binds each crossing's traffic; parts that share one link weighed
// together; and ZeRO-3 waits DeepSpeed 2021's fetch rate ended named as that rate.
#include <catch2/catch.hpp>

#include "sim/parallel/step_limit.h"

namespace clustersim {
namespace {

constexpr char kExpertCrossing[] =
    "expert-parallel all-to-all across NVLink domains (scale-out network)";
constexpr char kTensorCrossing[] =
    "tensor-parallel communication across NVLink domains (scale-out network)";

StepResult step(double compute, double expert, double bubble) {
  StepResult r;
  r.compute_s = compute;
  r.expert_comm_s = expert;
  r.bubble_s = bubble;
  r.data_comm_s = 0.5;
  return r;
}

TEST_CASE("without a group across NVLink domains the limiting part is the largest") {
  CHECK(limiting_part(step(10, 3, 1)) == "compute");
  CHECK(limiting_part(step(2, 3, 1)) == "expert-parallel all-to-all");
  CHECK(limiting_part(step(2, 1, 3)) == "pipeline bubble");
  StepResult tensor = step(2, 1, 1);
  tensor.tensor_comm_s = 3;  // inside a domain: not a crossing
  CHECK(limiting_part(tensor) == "tensor-parallel communication");
}

TEST_CASE("the kernels' slowdown beside overlapped collectives weighs as data-parallel "
          "communication") {
  // 10 s of compute, 6 s of it the SMs the ZeRO-3 gathers held: 4 s of kernels against 6.5 s of
  // the collectives' doing (a faster link shortens those, faster kernels hardly).
  StepResult r = step(10, 3, 1);
  r.collective_stretch_s = 6;
  CHECK(limiting_part(r) == "data-parallel communication");
  r.collective_stretch_s = 2;  // 8 s of kernels against 2.5 s
  CHECK(limiting_part(r) == "compute");
  // A tensor-parallel crossing of 5 s is weighed against the 6.5 s too.
  r.collective_stretch_s = 6;
  r.tensor_comm_s = 5;
  r.tensor_crossing_link = LinkKind::kNetwork;
  CHECK(limiting_part(r) == "data-parallel communication");
  r.tensor_comm_s = 7;
  CHECK(limiting_part(r) == kTensorCrossing);
}

TEST_CASE("the work beside collectives that outlast the last backward weighs as data-parallel "
          "communication") {
  // 10 s of kernels and 3 s of tensor-parallel collectives, 0.5 s of data-parallel tail: 60% of
  // the task work ran beside the collectives' last spell, so 4 s of kernels and 1.2 s of tensor
  // collectives against 0.5 + 0.6 x 13 = 8.3 s the step waited on the collectives.
  StepResult r = step(10, 0, 0);
  r.tensor_comm_s = 3;
  r.work_beside_collectives_share = 0.6;
  CHECK(limiting_part(r) == "data-parallel communication");
  // 30%: 7 s of kernels against 0.5 + 0.3 x 13 = 4.4 s.
  r.work_beside_collectives_share = 0.3;
  CHECK(limiting_part(r) == "compute");
  // The tensor-parallel part is weighed without its share too: 9 s across domains, 2 s of
  // kernels; at 30% 6.3 s of it against 2 x 0.7 = 1.4 s of kernels and 0.5 + 0.3 x 11 = 3.8 s.
  r = step(2, 0, 0);
  r.tensor_comm_s = 9;
  r.tensor_crossing_link = LinkKind::kNetwork;
  r.work_beside_collectives_share = 0.3;
  CHECK(limiting_part(r) == kTensorCrossing);
  // At 60%: 3.6 s of it against 0.5 + 0.6 x 11 = 7.1 s.
  r.work_beside_collectives_share = 0.6;
  CHECK(limiting_part(r) == "data-parallel communication");
}

TEST_CASE("the work beside ZeRO-3 gathers the compute waited for weighs with the slowdown "
          "beside them") {
  // 10 s of compute, 3 s of it the gathers' SMs, 1 s of parameter wait: 7 s of kernels against
  // 4 s. A quarter of the task work ran beside chains of gathers the compute then waited for:
  // 5.25 s of kernels against 4 + 0.25 x 7 = 5.75 s (the share weighs the kernels without the
  // slowdown, already counted with the collectives); a fifth: 5.6 s against 5.4 s.
  StepResult r = step(10, 0, 0);
  r.collective_stretch_s = 3;
  r.data_comm_s = 1;
  CHECK(limiting_part(r) == "compute");
  r.work_beside_collectives_share = 0.25;
  CHECK(limiting_part(r) == "data-parallel communication");
  r.work_beside_collectives_share = 0.2;
  CHECK(limiting_part(r) == "compute");
}

TEST_CASE("the expert all-to-alls' scale-out time is named where it is the largest part beside "
          "the compute") {
  SECTION("on the critical stage, inside the all-to-all time") {
    StepResult r = step(10, 3, 1);
    r.expert_scale_out_s = r.expert_scale_out_most_s = 2;  // 1 s on NVLink beside it
    CHECK(limiting_part(r) == std::string("compute, then ") + kExpertCrossing);
    r.compute_s = 2.5;
    CHECK(limiting_part(r) == kExpertCrossing);
    // A bubble of its own longer than the crossing's 2 s: the all-to-all (3 s) is the largest
    // part, but not for its scale-out traffic.
    r.bubble_s = 2.5;
    CHECK(limiting_part(r) == "expert-parallel all-to-all");
  }
  SECTION("on a stage the critical one waits for, inside its bubble") {
    StepResult r = step(2, 1, 4);  // "pipeline bubble" before
    r.expert_scale_out_most_s = 3;  // of the 4 s bubble, 3 s of the crossing stage's traffic
    CHECK(limiting_part(r) == kExpertCrossing);
    r.expert_scale_out_most_s = 1.5;  // the bubble less it, 2.5 s, is larger: a bubble of its own
    CHECK(limiting_part(r) == "pipeline bubble");
  }
  SECTION("not where another part is larger") {
    StepResult r = step(10, 3, 1);
    r.expert_scale_out_s = r.expert_scale_out_most_s = 0.4;  // below the 0.5 s data-parallel part
    CHECK(limiting_part(r) == "compute");
  }
}

TEST_CASE("the expert crossing names the link that binds its traffic") {
  StepResult r = step(2.5, 3, 1);
  r.expert_scale_out_s = r.expert_scale_out_most_s = 2;
  CHECK(limiting_part(r) == kExpertCrossing);  // the scale-out network by default
  r.expert_scale_out_link = LinkKind::kPcie;
  CHECK(limiting_part(r) ==
        "expert-parallel all-to-all across NVLink domains (PCIe between GPU and NIC)");
  r.expert_scale_out_link = LinkKind::kNvlink;
  r.compute_s = 10;
  CHECK(limiting_part(r) ==
        "compute, then expert-parallel all-to-all across NVLink domains (NVLink to the NIC's GPU)");
}

TEST_CASE("a tensor-parallel group across NVLink domains is named where its time is the largest "
          "part beside the compute") {
  StepResult r = step(10, 1, 1);
  r.tensor_comm_s = 3;
  r.tensor_crossing_link = LinkKind::kNetwork;
  CHECK(limiting_part(r) == std::string("compute, then ") + kTensorCrossing);
  r.compute_s = 2;
  CHECK(limiting_part(r) == kTensorCrossing);
  r.bubble_s = 4;
  CHECK(limiting_part(r) == "pipeline bubble");
}

TEST_CASE("the tensor-parallel crossing names each kind of link that binds its ring") {
  StepResult r = step(2, 1, 1);
  r.tensor_comm_s = 3;
  r.tensor_crossing_link = LinkKind::kPcie;
  CHECK(limiting_part(r) ==
        "tensor-parallel communication across NVLink domains (PCIe between GPU and NIC)");
  r.tensor_crossing_link = LinkKind::kNvlink;
  CHECK(limiting_part(r) ==
        "tensor-parallel communication across NVLink domains (NVLink inside each domain)");
}

TEST_CASE("parts that bind on one link are weighed together, and the link is named") {
  // huaweicloud_ascend_vs_a100's TP 2 x DP 4 ZeRO-3 row on 8 PCIe A100s: kernels 34.5 s, the
  // gathers' and reduce-scatters' SMs 28.9 s (data-parallel), tensor-parallel all-reduces 16.7 s;
  // PCIe carries both collectives.
  StepResult r;
  r.compute_s = 34.5 + 28.9;
  r.collective_stretch_s = 28.9;
  r.tensor_comm_s = 16.7;
  CHECK(limiting_part(r) == "compute");  // no link known: the parts alone
  r.part_links.tensor = r.part_links.data = LinkKind::kPcie;
  CHECK(limiting_part(r) == "PCIe shared by tensor- and data-parallel communication");
  // On different links (tensor-parallel over NVLink, data-parallel over the NICs) each is weighed
  // alone again.
  r.part_links.tensor = LinkKind::kNvlink;
  r.part_links.data = LinkKind::kNetwork;
  CHECK(limiting_part(r) == "compute");
  // Together shorter than the kernels: the kernels.
  r.part_links.tensor = r.part_links.data = LinkKind::kPcie;
  r.tensor_comm_s = 5;
  CHECK(limiting_part(r) == "compute");
  // A part that is the largest alone keeps its name.
  r.tensor_comm_s = 40;
  CHECK(limiting_part(r) == "tensor-parallel communication");
  // Three parts on NVLink, each shorter than the 10 s of kernels, together longer.
  StepResult three;
  three.compute_s = 10;
  three.tensor_comm_s = 4;
  three.context_comm_s = 3;
  three.data_comm_s = 4;
  three.part_links = {LinkKind::kNvlink, LinkKind::kNvlink, LinkKind::kNvlink};
  CHECK(limiting_part(three) ==
        "NVLink shared by tensor-, context- and data-parallel communication");
  three.part_links.context = LinkKind::kNetwork;  // 8 s on NVLink: the kernels
  CHECK(limiting_part(three) == "compute");
  // The scale-out network shared by a tensor-parallel crossing and the data-parallel traffic is
  // named as the link, not as the crossing.
  three.part_links = {LinkKind::kNetwork, std::nullopt, LinkKind::kNetwork};
  three.tensor_crossing_link = LinkKind::kNetwork;
  three.tensor_comm_s = 7;
  CHECK(limiting_part(three) ==
        "scale-out network shared by tensor- and data-parallel communication");
}

TEST_CASE("ZeRO-3 waits DeepSpeed 2021's fetch rate ended are named as that rate, not a link") {
  // 86 s of kernels and 127 s of data-parallel time, as SC'21's GPT 530B on 1,120 A100s.
  StepResult r;
  r.compute_s = 86;
  r.data_comm_s = 127;
  CHECK(limiting_part(r) == "data-parallel communication");
  r.fetch_paced_wait_s = 120;  // the coordinator's fetches paced them: 7 s left to the links
  CHECK(limiting_part(r) == "DeepSpeed 2021's ZeRO-3 fetch rate");
  r.fetch_paced_wait_s = 60;  // 67 s left to the links, 60 s the rate's: the kernels
  CHECK(limiting_part(r) == "compute");
}

}  // namespace
}  // namespace clustersim
