// Tests that a scenario loads against the catalog, and that each kind of mistake in it is reported
// with file, line, field path and (for names) the closest valid name.
#include "sim/io/scenario_loader.h"

#include <catch2/catch.hpp>

#include "tests/testing/catalog_snippets.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::scenario_errors;
using testing::source_path;
using testing::TempDir;

// A valid scenario; tests substitute one piece of it.
std::string scenario(const std::string& model = "llama2-7b",
                     const std::string& job_extra = "token_budget: 1e9 sequence_length: 4096",
                     const std::string& cluster = "instance: \"aws.p4d.24xlarge\" nodes: 2",
                     const std::string& rest = "") {
  return "name: \"t\"\nmodel: \"" + model + "\"\njob {\n  global_batch_size: 64\n" +
         "  precision: BF16\n  optimizer: ADAM\n  " + job_extra + "\n}\ncluster {\n  " + cluster +
         "\n}\n" + rest;
}

TEST_CASE("a valid scenario loads with its references resolved") {
  TempDir dir;
  Diagnostics diagnostics;
  auto loaded =
      load_scenario(dir.write("s.textproto", scenario()), testing::shipped_catalog(), &diagnostics);
  REQUIRE(loaded != nullptr);
  CHECK(loaded->model->name() == "llama2-7b");
  REQUIRE(loaded->instances.size() == 1);
  CHECK(loaded->instances[0]->name() == "aws.p4d.24xlarge");
}

TEST_CASE("the shipped quickstart scenario loads") {
  Diagnostics diagnostics;
  CHECK(load_scenario(source_path("scenarios/quickstart.textproto"), testing::shipped_catalog(),
                      &diagnostics));
  CHECK(diagnostics.all().empty());
}

TEST_CASE("gpus_per_node must be at least 1 and at most the instance's GPUs") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 1 gpus_per_node: 16")) ==
        "s.textproto:10:41: cluster.gpus_per_node: 16 is more than the 8 GPUs of "
        "\"aws.p4d.24xlarge\"\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 1 gpus_per_node: 0")) ==
        "s.textproto:10:41: cluster.gpus_per_node: must be >= 1, got 0\n");
}

TEST_CASE("nvlink_domain_nodes needs an instance whose NVLink domain spans that many nodes") {
  CHECK(
      scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                               "instance: \"aws.p5.48xlarge\" nodes: 2 nvlink_domain_nodes: 2")) ==
      "s.textproto:10:40: cluster.nvlink_domain_nodes: 2 is more than the 1 node(s) of an NVLink "
      "domain of \"aws.p5.48xlarge\" (it has no nvlink_domain_gpus)\n");
  CHECK(scenario_errors(
            scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                     "instance: \"onprem.gb200-nvl72\" nodes: 2 nvlink_domain_nodes: 19")) ==
        "s.textproto:10:43: cluster.nvlink_domain_nodes: 19 is more than the 18 node(s) of an "
        "NVLink domain of \"onprem.gb200-nvl72\"\n");
  CHECK(scenario_errors(
            scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                     "instance: \"onprem.gb200-nvl72\" nodes: 16 nvlink_domain_nodes: 16"))
            .empty());
}

TEST_CASE("nvlink_domain_nodes in a sweep beside servers applies to the multi-node domains") {
  const std::string racks_and_servers =
      "sweep {\n  instance: [\"onprem.gb200-nvl72\", \"onprem.dgx-b200\"]\n}\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "nodes: 16 nvlink_domain_nodes: 16", racks_and_servers))
            .empty());
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "nodes: 16 nvlink_domain_nodes: 19", racks_and_servers)) ==
        "s.textproto:10:13: cluster.nvlink_domain_nodes: 19 is more than the 18 node(s) of an "
        "NVLink domain of \"onprem.gb200-nvl72\"\n");
  CHECK(scenario_errors(scenario(
            "llama2-7b", "token_budget: 1e9 sequence_length: 4096",
            "nodes: 2 nvlink_domain_nodes: 2",
            "sweep {\n  instance: [\"aws.p5.48xlarge\", \"onprem.dgx-b200\"]\n}\n")) ==
        "s.textproto:10:12: cluster.nvlink_domain_nodes: 2 is more than the 1 node(s) of an NVLink "
        "domain of \"aws.p5.48xlarge\" (it has no nvlink_domain_gpus)\n"
        "s.textproto:10:12: cluster.nvlink_domain_nodes: 2 is more than the 1 node(s) of an NVLink "
        "domain of \"onprem.dgx-b200\" (it has no nvlink_domain_gpus)\n");
}

TEST_CASE("a token dispatcher for a model without experts is an error at its field") {
  const std::string layout =
      "parallelism { tensor_parallel: 8 pipeline_parallel: 1 data_parallel: 2 micro_batch_size: 1 "
      "expert_dispatcher: EXPERT_NODE_DEDUPLICATED }\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2", layout)) ==
        "s.textproto:12:92: parallelism.expert_dispatcher: applies to mixture-of-experts models "
        "only\n");
}

TEST_CASE("a typo in an instance name names file, line, field and the closest instance") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlrge\" nodes: 1")) ==
        "s.textproto:10:3: cluster.instance: unknown instance type \"aws.p5.48xlrge\" (did you "
        "mean \"aws.p5.48xlarge\"?)\n");
}

TEST_CASE("an instance given without its provider prefix suggests the full name") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"p4d.24xlarge\" nodes: 1")) ==
        "s.textproto:10:3: cluster.instance: unknown instance type \"p4d.24xlarge\" (did you "
        "mean \"aws.p4d.24xlarge\"?)\n");
}

TEST_CASE("a typo in a sweep's instance list points at that element") {
  CHECK(scenario_errors(scenario() +
                        "sweep {\n  instance: [\"aws.p4d.24xlarge\", \"aws.g5.48xlarg\"]\n}\n") ==
        "s.textproto:13:34: sweep.instance[1]: unknown instance type \"aws.g5.48xlarg\" (did you "
        "mean \"aws.g5.48xlarge\"?)\n");
}

// A value beside its axis was never read: "nope" loaded. It is checked as without the axis, and
// a value the axis leaves out is never simulated, which a warning says; one of the axis's values
// is the written default (the DualPipe scenario's micro_batch_size 1 beside [1, 2]): no word.
TEST_CASE("a value a sweep axis replaces is checked, and warned of when the axis omits it") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"nope\" nodes: 2") +
                        "sweep {\n  instance: [\"aws.p4d.24xlarge\"]\n}\n") ==
        "s.textproto:10:3: cluster.instance: unknown instance type \"nope\"\n");
  const std::string layout =
      "parallelism { tensor_parallel: 8 micro_batch_size: 4 zero_stage: 1 }\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", layout) +
                        "sweep {\n  instance: [\"aws.p4d.24xlarge\"]\n  nodes: [1, 2]\n"
                        "  micro_batch_size: [1, 2]\n  zero_stage: [1]\n}\n") ==
        "s.textproto:10:3: warning: cluster.instance: \"aws.p5.48xlarge\" is never simulated: "
        "sweep.instance (\"aws.p4d.24xlarge\") replaces it in every configuration\n"
        "s.textproto:12:34: warning: parallelism.micro_batch_size: 4 is never simulated: "
        "sweep.micro_batch_size (1, 2) replaces it in every configuration\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "parallelism { micro_batch_size: 0 }\n") +
                        "sweep {\n  micro_batch_size: [1, 2]\n}\n")
            .find("parallelism.micro_batch_size: must be >= 1, got 0") != std::string::npos);
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 3") +
                        "sweep {\n  range { axis: \"nodes\" from: 1 to: 512 factor: 2 }\n}\n") ==
        "s.textproto:10:32: warning: cluster.nodes: 3 is never simulated: sweep.nodes (1, 2, 4, 8, "
        "16, 32, 64, 128, ... (10 values)) replaces it in every configuration\n");
}

// auto_parallelism replaces the layout written beside it: a value its search reaches is one of
// its configurations (no word), one beyond its candidates or caps is never simulated.
TEST_CASE("a layout value auto_parallelism never reaches is warned of") {
  const std::string inside =
      "parallelism { pipeline_parallel: 2 micro_batch_size: 4 schedule: ONE_F_ONE_B }\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2", inside) +
                        "sweep {\n  auto_parallelism { max_pipeline_parallel: 4 }\n}\n") == "");
  const std::string outside =
      "parallelism {\n  pipeline_parallel: 8 micro_batch_size: 16 context_parallel: 2\n"
      "  virtual_stages: 2 schedule: INTERLEAVED_ONE_F_ONE_B\n}\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2", outside) +
                        "sweep {\n  auto_parallelism { micro_batch_size: [1, 2] "
                        "max_pipeline_parallel: 4 }\n}\n") ==
        "s.textproto:13:24: warning: parallelism.micro_batch_size: 16 is never simulated: "
        "sweep.auto_parallelism tries micro-batches of 1, 2 (its micro_batch_size)\n"
        "s.textproto:13:3: warning: parallelism.pipeline_parallel: 8 is never simulated: "
        "sweep.auto_parallelism tries stages up to its max_pipeline_parallel, 4\n"
        "s.textproto:14:3: warning: parallelism.virtual_stages: 2 is never simulated: "
        "sweep.auto_parallelism tries model chunks up to its max_virtual_stages, 1 when absent\n"
        "s.textproto:13:45: warning: parallelism.context_parallel: 2 is never simulated: "
        "sweep.auto_parallelism tries context-parallel degrees up to its max_context_parallel, 1 "
        "when absent\n"
        "s.textproto:14:21: warning: parallelism.schedule: INTERLEAVED_ONE_F_ONE_B is never "
        "simulated: sweep.auto_parallelism interleaves only with its max_virtual_stages above 1\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "parallelism { pipeline_parallel: 4 schedule: DUALPIPE }\n") +
                        "sweep {\n  auto_parallelism { }\n}\n") ==
        "s.textproto:12:36: warning: parallelism.schedule: DUALPIPE is never simulated: "
        "sweep.auto_parallelism tries DualPipe only with its dualpipe\n");
}

TEST_CASE("an unknown model suggests the closest model") {
  CHECK(scenario_errors(scenario("llama-2-7b")) ==
        "s.textproto:2:1: model: unknown model \"llama-2-7b\" (did you mean \"llama2-7b\"?)\n");
}

TEST_CASE("the MoE models load for training, a sliding window without context parallelism") {
  CHECK(scenario_errors(scenario("deepseek-v3")) == "");
  CHECK(scenario_errors(scenario("gpt-oss-120b")) == "");
  // Its sliding window is simulated without context parallelism only.
  CHECK(scenario_errors(scenario("gpt-oss-120b") + "parallelism { context_parallel: 2 }\n") ==
        "s.textproto:12:15: parallelism.context_parallel: context parallelism with sliding-window "
        "attention is not simulated yet\n");
  CHECK(scenario_errors(scenario("qwen3-30b-a3b")) == "");
}

// The warning every DeepSeek V4 scenario gets (scenario_loader.cpp): its own kernels are left out.
const std::string dsv4_warning =
    "s.textproto:2:1: warning: model: \"deepseek-v4-flash\" has compressed sparse attention and "
    "hyper-connections, whose indexer, sparse-loss and hyper-connection kernels' rates are not "
    "measured (timed as the fitted GEMMs and memory passes): its two published rows come out "
    "14-21% fast, so treat its times as lower bounds\n";

TEST_CASE("a model with DeepSeek V4's attention trains, with degrees that split its groups") {
  // Its step is simulated (compressed_sparse_attention_test), and its serving
  // (compressed_attention_time_test).
  CHECK(scenario_errors(scenario("deepseek-v4-flash")) == dsv4_warning);
  CHECK(scenario_errors(scenario("deepseek-v4-flash") + "parallelism { context_parallel: 2 }\n") ==
        dsv4_warning +
        "s.textproto:12:15: parallelism.context_parallel: context parallelism with compressed "
        "sparse attention is not simulated yet\n");
  CHECK(scenario_errors(scenario("deepseek-v4-flash") +
                        "parallelism { tensor_parallel: 16 sequence_parallel: true }\n") ==
        dsv4_warning +
        "s.textproto:12:15: parallelism.tensor_parallel: 16 does not divide the model's "
        "compressed_sparse_attention.o_groups (8)\n");
}

TEST_CASE("an expert-parallel degree must divide the experts, an expert TP degree their width") {
  CHECK(scenario_errors(scenario("mixtral-8x7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "parallelism { expert_parallel: 3 expert_tensor_parallel: 5 }")) ==
        "s.textproto:12:15: parallelism.expert_parallel: 3 does not divide the model's "
        "num_experts (8)\n"
        "s.textproto:12:34: parallelism.expert_tensor_parallel: 5 does not divide the experts' "
        "FFN width (14336)\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "parallelism { expert_parallel: 2 }")) ==
        "s.textproto:12:15: parallelism.expert_parallel: expert parallelism needs a model with "
        "experts (moe)\n");
}

// The errors of Mixtral 8x7B at expert parallel 2 on two p4d nodes with `parallelism` beside it.
std::string ep2_errors(const std::string& parallelism) {
  return scenario_errors(scenario("mixtral-8x7b", "token_budget: 1e9 sequence_length: 4096",
                                  "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                  "parallelism { expert_parallel: 2 " + parallelism + " }"));
}

TEST_CASE("the expert kernels take fewer SMs than the GPU has") {
  CHECK(ep2_errors("overlap_expert_communication: true expert_communication_sms: 107") == "");
  // 2^31 - 1 SMs of 108 made the overlap's slowed time overflow: an event scheduled in the past.
  CHECK(ep2_errors("overlap_expert_communication: true expert_communication_sms: 2147483647") ==
        "s.textproto:12:69: parallelism.expert_communication_sms: 2147483647 is not fewer than "
        "the 108 SMs of \"A100-SXM4-40GB\" of \"aws.p4d.24xlarge\"\n");
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED expert_combine_sms: 108") ==
        "s.textproto:12:78: parallelism.expert_combine_sms: 108 is not fewer than the 108 SMs of "
        "\"A100-SXM4-40GB\" of \"aws.p4d.24xlarge\"\n");
}

TEST_CASE("the userbuffers reduce-scatter SMs need the overlap and fewer SMs than the GPU has") {
  const auto errors = [](const std::string& parallelism) {
    return scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                    "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                    "parallelism { tensor_parallel: 8 " + parallelism + " }"));
  };
  const std::string overlap = "sequence_parallel: true overlap_tensor_communication: true ";
  CHECK(errors(overlap + "tensor_overlap_attention_out_sms: 24 tensor_overlap_mlp_down_sms: 20") ==
        "");
  CHECK(errors("tensor_overlap_mlp_down_sms: 20") ==
        "s.textproto:12:34: parallelism.tensor_overlap_mlp_down_sms: applies with "
        "overlap_tensor_communication and sequence_parallel only\n");
  CHECK(errors(overlap + "tensor_overlap_attention_out_sms: 0") ==
        "s.textproto:12:93: parallelism.tensor_overlap_attention_out_sms: must be >= 1, "
        "got 0\n");
  CHECK(errors(overlap + "tensor_overlap_attention_out_sms: 108") ==
        "s.textproto:12:93: parallelism.tensor_overlap_attention_out_sms: 108 is not fewer than "
        "the 108 SMs of \"A100-SXM4-40GB\" of \"aws.p4d.24xlarge\"\n");
}

TEST_CASE("HybridEP's combine SMs need its dispatcher, one expert tensor rank and one SM") {
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED expert_combine_sms: 32") == "");
  CHECK(ep2_errors("expert_combine_sms: 32") ==
        "s.textproto:12:34: parallelism.expert_combine_sms: applies with expert_dispatcher "
        "EXPERT_NODE_DEDUPLICATED only (HybridEP's kernels)\n");
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED expert_tensor_parallel: 2 "
                   "expert_combine_sms: 32") ==
        "s.textproto:12:104: parallelism.expert_combine_sms: HybridEP's combine floor needs "
        "expert_tensor_parallel 1: ETP 2\n");
  // Absent, expert tensor parallelism is the tensor parallel degree.
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED tensor_parallel: 2 "
                   "sequence_parallel: true expert_combine_sms: 32") ==
        "s.textproto:12:121: parallelism.expert_combine_sms: HybridEP's combine floor needs "
        "expert_tensor_parallel 1: ETP 2 (absent: the tensor parallel degree)\n");
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED tensor_parallel: 2 "
                   "sequence_parallel: true expert_tensor_parallel: 1 expert_combine_sms: 32") ==
        "");
  CHECK(ep2_errors("expert_dispatcher: EXPERT_NODE_DEDUPLICATED expert_combine_sms: 0") ==
        "s.textproto:12:78: parallelism.expert_combine_sms: must be >= 1, got 0\n");
}

TEST_CASE("an expert routing a router cannot have is an error at its field") {
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "max_violation: 0.2 capacity_factor: 1.25 }")) == "");
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "max_violation: 5 }")) ==
        "s.textproto:7:60: job.expert_routing.max_violation: the busiest expert would take more "
        "than every token (1 + max_violation at most num_experts / experts_per_token = 4)\n");
  // 1e300 padded every expert to 1e300 tokens: "inf GiB short" (tools/input_audit.py).
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "capacity_factor: 1e300 pad_to_capacity: true }")) ==
        "s.textproto:7:60: job.expert_routing.capacity_factor: an expert's capacity would exceed "
        "every token (capacity_factor at most num_experts / experts_per_token = 4)\n");
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "capacity_factor: 4 }")) == "");
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "pad_to_capacity: true }")) ==
        "s.textproto:7:60: job.expert_routing.pad_to_capacity: needs capacity_factor\n");
  CHECK(scenario_errors(scenario("llama2-7b",
                                 "token_budget: 1e9 sequence_length: 4096 expert_routing { "
                                 "max_violation: 0.2 }")) ==
        "s.textproto:7:43: job.expert_routing: the model has no mixture-of-experts layers\n");
}

TEST_CASE("a tensor-parallel degree that does not divide the heads is rejected") {
  CHECK(scenario_errors(scenario() + "parallelism { tensor_parallel: 3 }\n") ==
        "s.textproto:12:15: parallelism.tensor_parallel: 3 does not divide the model's "
        "num_attention_heads (32)\n");
}

TEST_CASE("with grouped-query attention the degree must also divide the KV heads") {
  CHECK(scenario_errors(scenario("llama2-70b") + "sweep { tensor_parallel: [8, 16] }\n") ==
        "s.textproto:12:30: sweep.tensor_parallel[1]: 16 does not divide the model's "
        "num_kv_heads (8)\n");
}

TEST_CASE("tensor parallelism must also split the hidden and FFN sizes") {
  // Llama-2-13B: 40 heads, hidden 5120, FFN 13824: TP 40 divides heads and hidden, not the FFN.
  CHECK(
      scenario_errors(scenario("llama2-13b") + "sweep { tensor_parallel: [40] }\n") ==
      "s.textproto:12:9: sweep.tensor_parallel[0]: 40 does not divide the model's ffn_hidden_size "
      "(13824)\n");
}

TEST_CASE("a precision the GPU lacks is rejected for that instance") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p3.16xlarge\" nodes: 1")) ==
        "s.textproto:10:3: cluster.instance: GPU \"V100-SXM2-16GB\" of \"aws.p3.16xlarge\" has no "
        "BF16 support (job.precision)\n");
}

TEST_CASE("a job without a budget, or longer than the model's context, is rejected") {
  CHECK(scenario_errors(scenario("llama2-7b", "sequence_length: 8192")) ==
        "s.textproto:3:1: job: needs a budget: token_budget, epochs or steps\n"
        "s.textproto:7:3: job.sequence_length: exceeds the model's max_sequence_length (4096)\n");
}

TEST_CASE("a global batch beyond 2^20 is refused at its field") {
  // 2^31 - 1 sequences in micro-batches of 1 on one replica: the step's schedule of 2^31
  // micro-batches did not finish (2^24 took 5 s and 0.7 GB on one stage).
  std::string text = scenario("llama2-7b", "steps: 1 sequence_length: 4096");
  text.replace(text.find("global_batch_size: 64"), 21, "global_batch_size: 2147483647");
  CHECK(scenario_errors(text) ==
        "s.textproto:4:3: job.global_batch_size: must be in [1, 1048576], got 2147483647\n");
}

TEST_CASE("a dataset's sample size is checked where no loader reads it") {
  CHECK(scenario_errors(scenario("llama2-7b",
                                 "epochs: 1 sequence_length: 4096 dataset { num_samples: 640 "
                                 "mean_sample_bytes: nan }")) ==
        "s.textproto:7:62: job.dataset.mean_sample_bytes: must be a finite number > 0, got nan\n");
  // 1e300 printed the dataset's size as a 300-digit number of GiB (tools/input_audit.py).
  CHECK(scenario_errors(scenario("llama2-7b",
                                 "epochs: 1 sequence_length: 4096 dataset { num_samples: 640 "
                                 "mean_sample_bytes: 1e300 }")) ==
        "s.textproto:7:62: job.dataset.mean_sample_bytes: must be in [0, "
        "1125899906842624], got 1e+300\n");
}

TEST_CASE("a job trains its model's multi-token-prediction modules, fewer or none") {
  TempDir dir;
  Diagnostics diagnostics;
  const std::string job = "token_budget: 1e9 sequence_length: 4096 multi_token_prediction_layers: ";
  auto loaded =
      load_scenario(dir.write("s.textproto", scenario("nemotron3-super-120b-a12b", job + "0")),
                    testing::shipped_catalog(), &diagnostics);
  REQUIRE(loaded != nullptr);
  const schema::Transformer& trained = loaded->model->transformer();
  CHECK(trained.multi_token_prediction_layers() == 0);
  CHECK_FALSE(trained.has_multi_token_prediction_pattern());
  CHECK_FALSE(trained.multi_token_prediction_shared());
  // The catalog's model keeps its modules; everything else of the trained copy is the catalog's.
  const auto* entry = testing::shipped_catalog().models().find("nemotron3-super-120b-a12b");
  REQUIRE(entry != nullptr);
  const schema::Transformer& catalog_model = entry->value->transformer();
  CHECK(catalog_model.multi_token_prediction_layers() == 2);
  CHECK(trained.hybrid_layer_pattern() == catalog_model.hybrid_layer_pattern());
  CHECK(trained.moe().num_experts() == catalog_model.moe().num_experts());

  CHECK(scenario_errors(scenario("deepseek-v3", job + "2")) ==
        "s.textproto:7:43: job.multi_token_prediction_layers: exceeds the model's 1: a job trains "
        "the model's multi-token-prediction modules, fewer or none\n");
  CHECK(scenario_errors(scenario("deepseek-v3", job + "-1")) ==
        "s.textproto:7:43: job.multi_token_prediction_layers: must be >= 0, got -1\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 multi_token_prediction_layers: 0")) ==
        "s.textproto:7:13: job.multi_token_prediction_layers: applies to transformers only\n");
}

TEST_CASE("AutoModel's fused Mamba mixer applies to a model with Mamba layers") {
  const std::string job = "token_budget: 1e9 sequence_length: 4096 mamba_fused_norm_projection: ";
  CHECK(scenario_errors(scenario("nemotron3-nano-30b-a3b", job + "true")) == "");
  CHECK(scenario_errors(scenario("llama2-7b", job + "true")) ==
        "s.textproto:7:43: job.mamba_fused_norm_projection: applies to a model with Mamba layers; "
        "\"llama2-7b\" has none\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 mamba_fused_norm_projection: false")) ==
        "s.textproto:7:13: job.mamba_fused_norm_projection: applies to a model with Mamba layers; "
        "\"resnet50\" has none\n");
}

TEST_CASE("separate q, k, v projections need a model whose attention has them") {
  const std::string job = "token_budget: 1e9 sequence_length: 4096 separate_projections: true";
  CHECK(scenario_errors(scenario("llama3-70b", job)) == "");
  CHECK(scenario_errors(scenario("deepseek-v3", job)) ==
        "s.textproto:7:43: job.separate_projections: applies to query, key and value projections; "
        "\"deepseek-v3\" has latent attention\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 separate_projections: true")) ==
        "s.textproto:7:13: job.separate_projections: applies to transformers only\n");
}

TEST_CASE("an epoch budget needs the dataset size") {
  CHECK(scenario_errors(scenario("resnet50", "epochs: 90")) ==
        "s.textproto:7:3: job.epochs: needs dataset.num_samples\n");
}

TEST_CASE("transformer-only settings are rejected for a CNN") {
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 sequence_length: 128") +
                        "parallelism { tensor_parallel: 2 }\n") ==
        "s.textproto:7:13: job.sequence_length: applies to transformers only\n"
        "s.textproto:12:15: parallelism.tensor_parallel: tensor parallelism applies to "
        "transformers only\n");
  // The attention kernel's and the loss kernel's settings too, each at its field.
  CHECK(scenario_errors(scenario("resnet50",
                                 "steps: 10 flash_attention: true unfused_cross_entropy: true "
                                 "attention_library: FLASH_ATTENTION_2")) ==
        "s.textproto:7:13: job.flash_attention: applies to transformers only\n"
        "s.textproto:7:63: job.attention_library: applies to transformers only\n"
        "s.textproto:7:35: job.unfused_cross_entropy: applies to transformers only\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 transformer_engine_cross_entropy: true")) ==
        "s.textproto:7:13: job.transformer_engine_cross_entropy: applies to transformers only\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10 torch_cross_entropy: FP32_UPCAST")) ==
        "s.textproto:7:13: job.torch_cross_entropy: applies to transformers only\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10") +
                        "parallelism { overlap_tensor_communication: true "
                        "embedding_in_pipeline_split: true }\n") ==
        "s.textproto:12:15: parallelism.overlap_tensor_communication: applies to transformers "
        "only\n"
        "s.textproto:12:50: parallelism.embedding_in_pipeline_split: applies to transformers only\n");
  CHECK(scenario_errors(scenario("resnet50", "steps: 10") +
                        "parallelism { recompute_modules: [RECOMPUTE_LAYERNORM] "
                        "compiled_recompute: true activation_offload_layers: 1 }\n") ==
        "s.textproto:12:15: parallelism.recompute_modules: applies to transformers only\n"
        "s.textproto:12:56: parallelism.compiled_recompute: applies to transformers only\n"
        "s.textproto:12:81: parallelism.activation_offload_layers: applies to transformers "
        "only\n");
}

TEST_CASE("conflicting optimizer sharding and stray virtual stages are rejected") {
  CHECK(scenario_errors(scenario() + "parallelism { distributed_optimizer: true zero_stage: 1 "
                                     "virtual_stages: 2 }\n") ==
        "s.textproto:12:15: parallelism.distributed_optimizer: and zero_stage both shard "
        "optimizer states: choose one\n"
        "s.textproto:12:57: parallelism.virtual_stages: needs schedule INTERLEAVED_ONE_F_ONE_B\n");
}

TEST_CASE("a synchronous ZeRO-3 fetch without ZeRO-3 is rejected") {
  CHECK(scenario_errors(scenario() +
                        "parallelism { zero_stage: 2 zero3_synchronous_fetch: true }\n") ==
        "s.textproto:12:29: parallelism.zero3_synchronous_fetch: a ZeRO-3 runtime's option needs "
        "zero_stage 3: zero_stage 2\n");
}

TEST_CASE("a kept FP8 transpose cache without ZeRO-3 is rejected") {
  CHECK(scenario_errors(scenario() +
                        "parallelism { zero_stage: 1 keep_fp8_transpose_cache: true }\n") ==
        "s.textproto:12:29: parallelism.keep_fp8_transpose_cache: a ZeRO-3 runtime's option needs "
        "zero_stage 3: zero_stage 1\n");
}

TEST_CASE("activation offload is refused where Megatron-Core or the step model cannot run it") {
  auto errors = [](const std::string& parallelism) {
    return scenario_errors(scenario() + "parallelism { " + parallelism + " }\n");
  };
  CHECK(errors("zero_stage: 3 activation_offload_layers: 32") ==
        "s.textproto:12:29: parallelism.activation_offload_layers: activation offload needs fewer "
        "layers than the stage has (Megatron-Core): 32 offloaded, the stage has 32 layers: at "
        "most 31\n");
  CHECK(errors("pipeline_parallel: 2 zero_stage: 3 activation_offload_layers: 4") ==
        "s.textproto:12:50: parallelism.activation_offload_layers: activation offload needs one "
        "pipeline stage (Megatron-Core has no offload with pipeline parallelism): "
        "pipeline_parallel 2\n");
  CHECK(errors("zero_stage: 1 activation_offload_layers: 4") ==
        "s.textproto:12:29: parallelism.activation_offload_layers: activation offload is "
        "simulated under zero_stage 3 over 2 or more data-parallel ranks only: zero_stage 1, "
        "data_parallel 16\n");
  CHECK_THAT(errors("zero_stage: 3 recompute: RECOMPUTE_FULL activation_offload_layers: 4"),
             Catch::StartsWith("s.textproto:12:55: parallelism.activation_offload_layers: "
                               "activation offload cannot be combined with recomputation"));
  CHECK(errors("activation_offload_layers: -1") ==
        "s.textproto:12:15: parallelism.activation_offload_layers: must be >= 0, got -1\n");
  CHECK(errors("zero_stage: 3 activation_offload_layers: 4").empty());
}

TEST_CASE("activation offload on a GPU without a link to host memory is an error") {
  // TestGPU-80GB has neither host_link nor pcie.
  TempDir user, dir;
  user.write("c.textproto",
             testing::gpu_entry() + testing::instance_entry(testing::test_instance_fields()));
  Diagnostics catalog_diagnostics;
  auto catalog = Catalog::load(
      {source_path("models"), source_path("topologies"), user.path()}, &catalog_diagnostics);
  REQUIRE(catalog != nullptr);
  Diagnostics diagnostics;
  load_scenario(dir.write("s.textproto",
                          scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                   "instance: \"onprem.test8\" nodes: 2",
                                   "parallelism { zero_stage: 3 activation_offload_layers: 4 }\n")),
                *catalog, &diagnostics);
  CHECK_THAT(dir.relative(diagnostics.to_string()),
             Catch::Contains("s.textproto:12:29: parallelism.activation_offload_layers: needs a "
                             "link to host memory: \"TestGPU-80GB\" of \"onprem.test8\" has "
                             "neither host_link nor pcie in the catalog\n"));
}

TEST_CASE("a missing cluster and model are both reported") {
  CHECK(
      scenario_errors("job { global_batch_size: 8 precision: BF16 optimizer: ADAM steps: 1 }\n") ==
      "s.textproto:1:1: model: is required\n"
      "s.textproto:1:1: cluster: is required\n");
}

TEST_CASE("auto_parallelism tries at most as many model chunks per stage as layers") {
  // 2^31 - 1 chunks: the enumeration tried 2^31 interleaved layouts of every layout and did not
  // return.
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\"",
                                 "sweep {\n  nodes: [1, 2]\n  auto_parallelism { "
                                 "max_virtual_stages: 2147483647 }\n}\n")) ==
        "s.textproto:14:22: sweep.auto_parallelism.max_virtual_stages: 2147483647 exceeds the "
        "model's num_layers (32)\n");
}

TEST_CASE("contradictory sweep settings are errors before any work") {
  const std::string auto_and_listed = scenario_errors(scenario(
      "llama2-7b", "token_budget: 1e9 sequence_length: 4096", "instance: \"aws.p4d.24xlarge\"",
      "sweep {\n  nodes: [1, 2]\n  tensor_parallel: [1, 2]\n  auto_parallelism {}\n}\n"));
  CHECK_THAT(auto_and_listed, Catch::Contains("s.textproto:14:3: sweep.tensor_parallel: cannot "
                                              "be listed beside auto_parallelism"));
  const std::string min_over_max =
      scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                               "instance: \"aws.p4d.24xlarge\" nodes: 2",
                               "sweep {\n  constraints { min_gpus: 64 max_gpus: 16 }\n}\n"));
  CHECK_THAT(min_over_max, Catch::Contains("sweep.constraints.max_gpus: is below min_gpus (64): "
                                           "no configuration can satisfy both"));
  const std::string cost_without_currency = scenario_errors(scenario(
      "llama2-7b", "token_budget: 1e9 sequence_length: 4096",
      "instance: \"aws.p4d.24xlarge\" nodes: 2", "sweep {\n  constraints { max_cost: 1e5 }\n}\n"));
  CHECK_THAT(cost_without_currency, Catch::Contains("sweep.constraints.currency"));
}

TEST_CASE("an empty list is an error at its field, not a silently unswept axis") {
  CHECK_THAT(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                      "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                      "sweep {\n  nodes: [1]\n  pipeline_parallel: [ ]\n}\n")),
             Catch::Contains("s.textproto:14:3: pipeline_parallel: is an empty list: give at "
                             "least one value or leave the field out"));
}

TEST_CASE("a value listed twice in a sweep axis is an error at its position") {
  CHECK_THAT(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                      "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                      "sweep {\n  tensor_parallel: [1, 2, 1]\n}\n")),
             Catch::Contains("sweep.tensor_parallel[2]: 1 is listed twice"));
}

TEST_CASE("ranges expand into their integer axes, a bad range is an error at the range") {
  TempDir dir;
  Diagnostics diagnostics;
  auto loaded = load_scenario(
      dir.write(
          "s.textproto",
          scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                   "instance: \"aws.p4d.24xlarge\"",
                   "sweep {\n  nodes: [3]\n  range { axis: \"nodes\" from: 1 to: 16 factor: 2 }\n"
                   "  range { axis: \"micro_batch_size\" from: 2 to: 7 step: 2 }\n}\n")),
      testing::shipped_catalog(), &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  const schema::Sweep& sweep = loaded->scenario().sweep();
  CHECK(std::vector<int>(sweep.nodes().begin(), sweep.nodes().end()) ==
        std::vector<int>{3, 1, 2, 4, 8, 16});
  CHECK(std::vector<int>(sweep.micro_batch_size().begin(), sweep.micro_batch_size().end()) ==
        std::vector<int>{2, 4, 6});
  const std::string errors = scenario_errors(
      scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
               "instance: \"aws.p4d.24xlarge\" nodes: 1",
               "sweep {\n  range { axis: \"node\" from: 1 to: 4 }\n"
               "  range { axis: \"tensor_parallel\" from: 8 to: 2 }\n"
               "  range { axis: \"pipeline_parallel\" from: 1 to: 4 step: 1 factor: 2 }\n}\n"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:13:11: sweep.range[0].axis: \"node\" is not an "
                                     "integer axis of the sweep (did you mean \"nodes\"?)"));
  CHECK_THAT(errors, Catch::Contains("sweep.range[1].to: must be >= 8, got 2"));
  CHECK_THAT(errors, Catch::Contains("sweep.range[2].factor: and step both given: choose one"));
}

// Diagnostics of a Llama 2 7B scenario at sequence 4096 on one 8-H100 node, plus `rest`.
// A Llama 2 7B scenario on one node of `instance` whose job holds `lines` (its precision among
// them) before the optimizer: the job's fields from line 5 on.
std::string job_scenario(const std::string& lines, const std::string& instance) {
  return "name: \"t\"\nmodel: \"llama2-7b\"\njob {\n  global_batch_size: 64\n" + lines +
         "\n  optimizer: ADAM\n  token_budget: 1e9 sequence_length: 4096\n}\n"
         "cluster {\n  instance: \"" +
         instance + "\" nodes: 1\n}\n";
}

// The errors of job_scenario on one DGX B200 (FP8 and FP4 tensor cores).
std::string b200_job_errors(const std::string& lines) {
  return scenario_errors(job_scenario(lines, "aws.p6-b200.48xlarge"));
}

std::string h100_errors(const std::string& rest, const std::string& job_extra = "") {
  return scenario_errors(scenario("llama2-7b",
                                  "token_budget: 1e9 sequence_length: 4096" + job_extra,
                                  "instance: \"aws.p5.48xlarge\" nodes: 1", rest));
}

TEST_CASE("context parallelism must split the sequence and, all-to-all, the heads") {
  // Llama 2 7B: 32 heads and 32 KV heads; a decoder's ring splits each sequence into 2 CP chunks.
  CHECK(h100_errors("parallelism { context_parallel: 3 }\n") ==
        "s.textproto:12:15: parallelism.context_parallel: 3 needs the sequence length (4096) "
        "divisible by 6 (2 chunks per rank for the causal load balance)\n");
  // 2 x (2^31 - 1) chunks overflowed an int (UndefinedBehaviorSanitizer; -2 divides 4096).
  CHECK(h100_errors("parallelism { context_parallel: 2147483647 }\n") ==
        "s.textproto:12:15: parallelism.context_parallel: 2147483647 needs the sequence length "
        "(4096) divisible by 4294967294 (2 chunks per rank for the causal load balance)\n");
  CHECK_THAT(h100_errors("parallelism { tensor_parallel: 8 context_parallel: 8 "
                         "context_parallel_comm: ALL_TO_ALL }\n"),
             Catch::Contains("parallelism.context_parallel: ALL_TO_ALL needs the attention and KV "
                             "heads per tensor-parallel rank (4 and 4) divisible by 8"));
  CHECK_THAT(h100_errors("sweep { context_parallel: [2, 5] }\n"),
             Catch::Contains("sweep.context_parallel[1]: 5 needs the sequence length (4096) "
                             "divisible by 10"));
  CHECK_THAT(h100_errors("parallelism { context_parallel: 2 }\n", " flash_attention: false"),
             Catch::Contains("parallelism.context_parallel: context parallelism needs fused "
                             "attention (job.flash_attention)"));
  // PyTorch's load-balanced ring needs is_causal: an encoder is refused, a decoder loads.
  CHECK_THAT(scenario_errors(scenario("bert-large", "token_budget: 1e9 sequence_length: 512",
                                      "instance: \"aws.p5.48xlarge\" nodes: 1",
                                      "parallelism { context_parallel: 2 "
                                      "context_parallel_comm: TORCH_ALL_GATHER }\n")),
             Catch::Contains("parallelism.context_parallel: TORCH_ALL_GATHER needs a decoder's "
                             "causal attention (PyTorch's load balancing requires is_causal)"));
  CHECK(h100_errors("parallelism { context_parallel: 2 context_parallel_comm: TORCH_ALL_GATHER }\n",
                    " attention_repeats_kv: true") == "");
}

TEST_CASE("MXFP8 needs Blackwell's block-scaled tensor cores, FP8 settings need FP8") {
  CHECK(h100_errors("", " fp8_recipe: MXFP8") ==
        "s.textproto:7:43: job.fp8_recipe: applies to precision FP8 or FP4\n");
  const std::string fp8 =
      "name: \"t\"\nmodel: \"llama2-7b\"\njob {\n  global_batch_size: 64\n  precision: FP8\n"
      "  fp8_recipe: MXFP8\n  optimizer: ADAM\n  token_budget: 1e9 sequence_length: 4096\n}\n"
      "cluster {\n  instance: \"aws.p5.48xlarge\" nodes: 1\n}\n";
  CHECK(scenario_errors(fp8) ==
        "s.textproto:6:3: job.fp8_recipe: MXFP8 needs block-scaled FP8 tensor cores (Blackwell "
        "or later); GPU \"H100-SXM5-80GB\" (Hopper) of \"aws.p5.48xlarge\" has none (use "
        "CURRENT_SCALING, DELAYED_SCALING or BLOCKWISE)\n");
}

TEST_CASE("NVFP4 is FP4's recipe and needs Blackwell's FP4 tensor cores") {
  // Hopper has no FP4 tensor cores: the precision is refused where it is set.
  CHECK(scenario_errors(job_scenario("  precision: FP4", "aws.p5.48xlarge")) ==
        "s.textproto:10:3: cluster.instance: GPU \"H100-SXM5-80GB\" of \"aws.p5.48xlarge\" has no "
        "FP4 support (job.precision)\n");
  CHECK(b200_job_errors("  precision: FP8\n  fp8_recipe: NVFP4") ==
        "s.textproto:6:3: job.fp8_recipe: NVFP4 needs precision FP4\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp8_recipe: MXFP8") ==
        "s.textproto:6:3: job.fp8_recipe: precision FP4 takes only NVFP4\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp8_recipe: NVFP4\n  fp8_parameters: true") == "");
  // The unfused NVFP4 cast of Transformer Engine before 2.14 is FP4's alone.
  CHECK(b200_job_errors("  precision: FP4\n  fp4_unfused_hadamard_cast: true") == "");
  CHECK(b200_job_errors("  precision: FP8\n  fp4_unfused_hadamard_cast: true") ==
        "s.textproto:6:3: job.fp4_unfused_hadamard_cast: applies to precision FP4 only\n");
}

TEST_CASE("fp4_overrides: FP4 only, each module once, in one list, of the model, its layers") {
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides { sixteen_bit_modules: ATTENTION_QKV "
                        "sixteen_bit_last_layers: 32 }") == "");
  CHECK(b200_job_errors("  precision: FP8\n  fp4_overrides { sixteen_bit_last_layers: 2 }") ==
        "s.textproto:6:3: job.fp4_overrides: applies to precision FP4 only\n");
  // Llama 2 7B: 32 layers of attention and a dense MLP, no latent experts or Mamba mixers.
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides {\n    sixteen_bit_modules: "
                        "ATTENTION_QKV\n    sixteen_bit_modules: ATTENTION_QKV\n  }") ==
        "s.textproto:8:5: job.fp4_overrides.sixteen_bit_modules[1]: names ATTENTION_QKV twice\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides {\n    sixteen_bit_modules: "
                        "ATTENTION_OUT\n    mxfp8_modules: ATTENTION_OUT\n  }") ==
        "s.textproto:8:5: job.fp4_overrides.mxfp8_modules[0]: ATTENTION_OUT is in "
        "sixteen_bit_modules too: a module runs one format\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides {\n    mxfp8_modules: "
                        "MAMBA_OUT_PROJECTION\n  }") ==
        "s.textproto:7:5: job.fp4_overrides.mxfp8_modules[0]: \"llama2-7b\" has no "
        "MAMBA_OUT_PROJECTION to override\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides {\n    sixteen_bit_modules: "
                        "QUANTIZED_MODULE_UNSPECIFIED\n  }") ==
        "s.textproto:7:5: job.fp4_overrides.sixteen_bit_modules[0]: must name a module: "
        "ATTENTION_QKV, ATTENTION_OUT, LATENT_PROJECTIONS or MAMBA_OUT_PROJECTION\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp4_overrides {\n    sixteen_bit_last_layers: 33\n  }") ==
        "s.textproto:7:5: job.fp4_overrides.sixteen_bit_last_layers: exceeds the 32 layers of "
        "\"llama2-7b\"\n");
  CHECK_THAT(b200_job_errors("  precision: FP4\n  fp4_overrides { sixteen_bit_last_layers: -1 }"),
             Catch::Contains("job.fp4_overrides.sixteen_bit_last_layers"));
}

TEST_CASE("16-bit optimizer states go beside 16-bit or FP8 GEMMs, not FP4 ones") {
  CHECK(b200_job_errors("  precision: FP8\n  sixteen_bit_states: true") == "");
  CHECK(b200_job_errors("  precision: FP4\n  sixteen_bit_states: true") ==
        "s.textproto:6:3: job.sixteen_bit_states: needs precision BF16, FP16 or FP8\n");
}

TEST_CASE("BF16 optimizer moments need a master copy and are not sixteen_bit_states'") {
  CHECK(b200_job_errors("  precision: FP8\n  bf16_optimizer_moments: true") == "");
  CHECK(b200_job_errors("  precision: FP32\n  bf16_optimizer_moments: true") ==
        "s.textproto:6:3: job.bf16_optimizer_moments: needs precision BF16, FP16, FP8 or FP4 (a "
        "master copy)\n");
  CHECK(b200_job_errors("  precision: BF16\n  sixteen_bit_states: true\n"
                        "  bf16_optimizer_moments: true") ==
        "s.textproto:7:3: job.bf16_optimizer_moments: sixteen_bit_states keeps 16-bit moments "
        "already\n");
}

TEST_CASE("the MLP activation's FP8 input store takes narrow GEMMs and a dense transformer") {
  CHECK(b200_job_errors("  precision: FP8\n  fp8_activation_input_store: true") == "");
  CHECK(b200_job_errors("  precision: BF16\n  fp8_activation_input_store: true") ==
        "s.textproto:6:3: job.fp8_activation_input_store: applies to precision FP8 or FP4\n");
  std::string moe =
      job_scenario("  precision: FP8\n  fp8_activation_input_store: true", "aws.p6-b200.48xlarge");
  moe.replace(moe.find("llama2-7b"), 9, "mixtral-8x7b");
  CHECK(scenario_errors(moe) ==
        "s.textproto:6:3: job.fp8_activation_input_store: applies to dense transformers only (no "
        "experts or hybrid layer pattern)\n");
}

TEST_CASE("FP8 weights' transposes per use need per-tensor FP8 weights") {
  CHECK(b200_job_errors("  precision: FP8\n  fp8_parameters: true\n"
                        "  fp8_weight_transpose_per_use: true") == "");
  CHECK(b200_job_errors("  precision: FP8\n  fp8_weight_transpose_per_use: true") ==
        "s.textproto:6:3: job.fp8_weight_transpose_per_use: needs fp8_parameters under precision "
        "FP8 with a per-tensor recipe (DELAYED_SCALING or CURRENT_SCALING)\n");
  CHECK(b200_job_errors("  precision: FP8\n  fp8_recipe: MXFP8\n  fp8_parameters: true\n"
                        "  fp8_weight_transpose_per_use: true") ==
        "s.textproto:8:3: job.fp8_weight_transpose_per_use: needs fp8_parameters under precision "
        "FP8 with a per-tensor recipe (DELAYED_SCALING or CURRENT_SCALING)\n");
}

TEST_CASE("FP8 attention takes FP8 GEMMs, or FP4 ones with a per-tensor attention recipe") {
  CHECK(b200_job_errors("  precision: FP8\n  fp8_attention: true") == "");
  CHECK(b200_job_errors("  precision: BF16\n  fp8_attention: true") ==
        "s.textproto:6:3: job.fp8_attention: applies to precision FP8 or FP4\n");
  // NVFP4 has no attention kernel: Transformer Engine's NVTE_DPA_FP8_RECIPE picks delayed or
  // current scaling for it.
  CHECK(b200_job_errors("  precision: FP4\n  fp8_attention: true") ==
        "s.textproto:6:3: job.fp8_attention: under precision FP4 needs fp8_attention_recipe "
        "(NVFP4 has no attention kernel: DELAYED_SCALING or CURRENT_SCALING)\n");
  CHECK(b200_job_errors("  precision: FP4\n  fp8_attention: true\n"
                        "  fp8_attention_recipe: CURRENT_SCALING") == "");
  CHECK(b200_job_errors("  precision: FP4\n  fp8_attention: true\n"
                        "  fp8_attention_recipe: NVFP4") ==
        "s.textproto:7:3: job.fp8_attention_recipe: cuDNN's FP8 attention takes DELAYED_SCALING "
        "or CURRENT_SCALING (per-tensor scales)\n");
  CHECK(b200_job_errors("  precision: FP8\n  fp8_attention_recipe: DELAYED_SCALING") ==
        "s.textproto:6:3: job.fp8_attention_recipe: needs fp8_attention\n");
}

TEST_CASE("torchao's Float8 keeps attention 16-bit and all-gathers FP8 weights only under FSDP2") {
  const std::string torchao = "  precision: FP8\n  fp8_recipe: TORCHAO_TENSORWISE";
  CHECK(b200_job_errors(torchao) == "");
  CHECK(b200_job_errors(torchao + "\n  fp8_attention: true") ==
        "s.textproto:7:3: job.fp8_attention: torchao's Float8 (fp8_recipe TORCHAO_TENSORWISE) "
        "converts only linear layers: its attention stays 16-bit\n");
  CHECK(b200_job_errors(torchao + "\n  fp8_parameters: true") ==
        "s.textproto:7:3: job.fp8_parameters: under fp8_recipe TORCHAO_TENSORWISE is torchao's "
        "Float8 all-gather of FSDP2: needs parallelism.fsdp2\n");
  // FP4 takes NVFP4 alone.
  CHECK(b200_job_errors("  precision: FP4\n  fp8_recipe: TORCHAO_TENSORWISE") ==
        "s.textproto:6:3: job.fp8_recipe: precision FP4 takes only NVFP4\n");
}

TEST_CASE("one loss kernel: Megatron-Core's fused or unfused, Transformer Engine's or PyTorch's") {
  // Megatron's unfused cross entropy or Transformer Engine's, not both.
  CHECK(b200_job_errors("  precision: BF16\n  unfused_cross_entropy: true") == "");
  CHECK(b200_job_errors("  precision: BF16\n  transformer_engine_cross_entropy: true\n"
                        "  unfused_cross_entropy: true") ==
        "s.textproto:7:3: job.unfused_cross_entropy: excludes transformer_engine_cross_entropy "
        "(one loss kernel)\n");
  // PyTorch's cross entropy, one of its two, excludes both Megatron-Core's choices.
  CHECK(b200_job_errors("  precision: BF16\n  torch_cross_entropy: SIXTEEN_BIT_LOGITS") == "");
  CHECK(
      b200_job_errors(
          "  precision: BF16\n  torch_cross_entropy: FP32_UPCAST\n  unfused_cross_entropy: true") ==
      "s.textproto:6:3: job.torch_cross_entropy: excludes transformer_engine_cross_entropy and "
      "unfused_cross_entropy (one loss kernel)\n");
  CHECK(b200_job_errors("  precision: BF16\n  transformer_engine_cross_entropy: true\n"
                        "  torch_cross_entropy: SIXTEEN_BIT_LOGITS") ==
        "s.textproto:7:3: job.torch_cross_entropy: excludes transformer_engine_cross_entropy and "
        "unfused_cross_entropy (one loss kernel)\n");
  CHECK(b200_job_errors(
            "  precision: BF16\n  torch_cross_entropy: TORCH_CROSS_ENTROPY_UNSPECIFIED") ==
        "s.textproto:6:3: job.torch_cross_entropy: must be set to a value other than "
        "TORCH_CROSS_ENTROPY_UNSPECIFIED\n");
}

TEST_CASE("an MXFP8 output layer and FlashAttention-2 need their precisions") {
  // An MXFP8 output layer (Megatron-Core's fp8_output_proj) is MXFP8's alone.
  CHECK(b200_job_errors("  precision: FP8\n  fp8_recipe: MXFP8\n  fp8_output_layer: true") == "");
  CHECK(b200_job_errors(
            "  precision: FP8\n  fp8_recipe: CURRENT_SCALING\n  fp8_output_layer: true") ==
        "s.textproto:7:3: job.fp8_output_layer: applies to precision FP8 with fp8_recipe MXFP8 "
        "only\n");
  CHECK(b200_job_errors("  precision: BF16\n  fp8_output_layer: true") ==
        "s.textproto:6:3: job.fp8_output_layer: applies to precision FP8 with fp8_recipe MXFP8 "
        "only\n");
  // FlashAttention-2 is a 16-bit fused kernel: not with FP8 attention, nor unfused attention.
  CHECK(b200_job_errors("  precision: FP8\n  attention_library: FLASH_ATTENTION_2") == "");
  CHECK(b200_job_errors(
            "  precision: FP8\n  fp8_attention: true\n  attention_library: FLASH_ATTENTION_2") ==
        "s.textproto:7:3: job.attention_library: FlashAttention-2 has no FP8 kernel "
        "(job.fp8_attention)\n");
  CHECK(
      b200_job_errors(
          "  precision: BF16\n  flash_attention: false\n  attention_library: FLASH_ATTENTION_2") ==
      "s.textproto:7:3: job.attention_library: needs fused attention (job.flash_attention)\n");
}

TEST_CASE("uneven pipeline layouts must fit the model's layers") {
  CHECK(h100_errors("parallelism { pipeline_parallel: 4 first_stage_layers: 40 }\n") ==
        "s.textproto:12:36: parallelism.first_stage_layers: 40 exceeds the model's num_layers "
        "(32)\n");
  CHECK_THAT(h100_errors("parallelism { pipeline_parallel: 4 first_stage_layers: 20 "
                         "last_stage_layers: 20 }\n"),
             Catch::Contains("parallelism.last_stage_layers: with first_stage_layers (20) exceeds "
                             "the model's num_layers (32)"));
  CHECK_THAT(h100_errors("parallelism { recompute: RECOMPUTE_SELECTIVE recompute_num_layers: 2 }\n"),
             Catch::Contains("parallelism.recompute_num_layers: applies to recompute "
                             "RECOMPUTE_FULL only"));
  // 2^31 - 1 recomputed every layer, as the field's absence does (tools/input_audit.py).
  CHECK(h100_errors("parallelism { recompute: RECOMPUTE_FULL recompute_num_layers: 2147483647 }\n") ==
        "s.textproto:12:41: parallelism.recompute_num_layers: 2147483647 exceeds the model's "
        "num_layers (32)\n");
  CHECK(h100_errors("parallelism { recompute: RECOMPUTE_FULL recompute_num_layers: 32 }\n") == "");
}

TEST_CASE("recomputing latent up projections needs latent or compressed sparse attention") {
  CHECK(h100_errors("parallelism { recompute_latent_up_projection: true }\n") ==
        "s.textproto:12:15: parallelism.recompute_latent_up_projection: needs a model with "
        "latent_attention or compressed_sparse_attention; \"llama2-7b\" has neither\n");
}

TEST_CASE("recomputed expert modules need experts, and no recomputation of whole layers") {
  CHECK(h100_errors("parallelism { recompute_modules: [RECOMPUTE_LAYERNORM, RECOMPUTE_MOE] }\n") ==
        "s.textproto:12:56: parallelism.recompute_modules[1]: RECOMPUTE_MOE needs a "
        "mixture-of-experts model; \"llama2-7b\" has no moe\n");
  CHECK(h100_errors("parallelism { recompute_modules: [RECOMPUTE_LAYERNORM] }\n") == "");
  CHECK_THAT(h100_errors("parallelism { recompute: RECOMPUTE_FULL "
                         "recompute_modules: [RECOMPUTE_LAYERNORM] }\n"),
             Catch::Contains("parallelism.recompute_modules: cannot be combined with recompute "
                             "RECOMPUTE_FULL"));
}

TEST_CASE("a fused expert MLP or single-launch grouped experts need a mixture-of-experts model") {
  CHECK(h100_errors("parallelism { fused_expert_mlp: true }\n") ==
        "s.textproto:12:15: parallelism.fused_expert_mlp: applies to mixture-of-experts models "
        "only\n");
  CHECK(h100_errors("parallelism { single_launch_grouped_experts: true }\n") ==
        "s.textproto:12:15: parallelism.single_launch_grouped_experts: applies to "
        "mixture-of-experts models only\n");
}

TEST_CASE("side-stream shared experts need a model with shared experts, no combined overlap") {
  CHECK(h100_errors("parallelism { shared_experts_side_stream: true }\n") ==
        "s.textproto:12:15: parallelism.shared_experts_side_stream: applies to a model with shared "
        "experts; \"llama2-7b\" has none\n");
  const std::string job = "token_budget: 1e9 sequence_length: 4096";
  const std::string p5 = "instance: \"aws.p5.48xlarge\" nodes: 1";
  CHECK(scenario_errors(scenario("qwen3-30b-a3b", job, p5,
                                 "parallelism { shared_experts_side_stream: true }\n")) ==
        "s.textproto:12:15: parallelism.shared_experts_side_stream: applies to a model with shared "
        "experts; \"qwen3-30b-a3b\" has none\n");
  CHECK(scenario_errors(scenario("llama4-scout", job, p5,
                                 "parallelism { expert_parallel: 8 "
                                 "shared_experts_side_stream: true }\n")) == "");
  CHECK(scenario_errors(scenario("llama4-scout", job, p5,
                                 "parallelism { expert_parallel: 8 shared_experts_side_stream: true "
                                 "overlap_expert_communication: true }\n")) ==
        "s.textproto:12:34: parallelism.shared_experts_side_stream: cannot be combined with "
        "overlap_expert_communication (not simulated)\n");
}

TEST_CASE("a paged expert stash needs the fused expert MLP") {
  CHECK(h100_errors("parallelism { expert_paged_stash: true }\n") ==
        "s.textproto:12:15: parallelism.expert_paged_stash: applies with fused_expert_mlp only\n");
}

TEST_CASE("fine-grained offload names each module once, one the layers keep") {
  const std::string job = "token_budget: 1e9 sequence_length: 4096";
  const std::string gb200 = "instance: \"onprem.gb200-nvl72\" nodes: 2";
  const auto errors = [&](const std::string& parallelism) {
    return scenario_errors(scenario(
        "nemotron3-nano-30b-a3b", job, gb200,
        "parallelism { zero_stage: 3 fsdp2: true expert_parallel: 8 " + parallelism + " }\n"));
  };
  const std::string offload = "activation_offload_modules: [OFFLOAD_FUSED_EXPERT_MLP] ";
  CHECK(errors("fused_expert_mlp: true " + offload) == "");
  CHECK(errors(offload) ==
        "s.textproto:12:60: parallelism.activation_offload_modules[0]: OFFLOAD_FUSED_EXPERT_MLP "
        "needs fused_expert_mlp (the fused grouped MLP's FC1 output)\n");
  CHECK(errors("fused_expert_mlp: true activation_offload_modules: [OFFLOAD_FUSED_EXPERT_MLP, "
               "OFFLOAD_FUSED_EXPERT_MLP]") ==
        "s.textproto:12:138: parallelism.activation_offload_modules[1]: OFFLOAD_FUSED_EXPERT_MLP "
        "is listed twice\n");
  CHECK(errors("fused_expert_mlp: true recompute_modules: [RECOMPUTE_MOE] " + offload) ==
        "s.textproto:12:118: parallelism.activation_offload_modules: cannot be combined with "
        "recompute_modules RECOMPUTE_MOE (the rerun expert layer keeps its input only)\n");
  CHECK(errors("fused_expert_mlp: true activation_offload_layers: 2 " + offload) ==
        "s.textproto:12:112: parallelism.activation_offload_modules: cannot be combined with "
        "activation_offload_layers (not simulated)\n");
  // A name Megatron-Core's offload_modules has but the schema not: the parser's error.
  CHECK(
      errors("activation_offload_modules: [OFFLOAD_CORE_ATTN]")
          .find(
              "parallelism.activation_offload_modules: unknown value \"OFFLOAD_CORE_ATTN\" (valid "
              "values: OFFLOAD_FUSED_EXPERT_MLP)") != std::string::npos);
}

TEST_CASE("layers listed per model chunk may leave a chunk empty, per stage not") {
  // Llama 2 7B's 32 layers on 2 stages x 2 chunks: the last chunk (virtual stage 3) holds none.
  const std::string chunks =
      "parallelism { pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 2 ";
  CHECK(h100_errors(chunks + "stage_layers: [8, 8, 16, 0] }\n") == "");
  CHECK(h100_errors(chunks + "stage_layers: [8, -1, 16, 9] }\n") ==
        "s.textproto:12:106: parallelism.stage_layers[1]: must be at least 0, got -1\n");
  CHECK(h100_errors("parallelism { pipeline_parallel: 2 stage_layers: [32, 0] }\n") ==
        "s.textproto:12:55: parallelism.stage_layers[1]: must be at least 1, got 0\n");
  // 2 (2^31 - 1) + 34 wraps a 32-bit sum to the model's 32 layers: it loaded, and ran out of memory
  // by 2 billion GiB.
  CHECK(h100_errors("parallelism { pipeline_parallel: 3 "
                    "stage_layers: [2147483647, 2147483647, 34] }\n") ==
        "s.textproto:12:36: parallelism.stage_layers: add up to 4294967328 layers, the model has "
        "32 (num_layers)\n");
}

TEST_CASE("model chunks of an interleaved schedule at most the model's layers") {
  const std::string interleaved = "parallelism { pipeline_parallel: 2 "
                                  "schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: ";
  CHECK(h100_errors(interleaved + "16 }\n") == "");
  // 2 x (2^31 - 1) chunks wrapped to -2, which divides 32 layers: validate filled 8 GiB of layer
  // counts and did not return.
  CHECK(h100_errors(interleaved + "2147483647 }\n") ==
        "s.textproto:12:70: parallelism.virtual_stages: 2147483647 exceeds the model's num_layers "
        "(32)\n");
}

TEST_CASE("a published figure must be finite, positive and in range, with its group and convention") {
  const std::string published =
      "published { group: \"g\" tflops_per_gpu: inf flops_convention: MODEL_FLOPS "
      "step_time_s: 0 }\n";
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2", published)) ==
        "s.textproto:12:74: published.step_time_s: must be > 0, got 0\n"
        "s.textproto:12:24: published.tflops_per_gpu: must be a finite number > 0, got inf\n");
  // 1e-300 TFLOP/s printed an error of 2.7e302 % in 300 digits.
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "published { group: \"g\" tflops_per_gpu: 1e-300 "
                                 "flops_convention: MODEL_FLOPS }\n")) ==
        "s.textproto:12:24: published.tflops_per_gpu: must be in [0.001, 1e+09], got 1e-300\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "published { tflops_per_gpu: 100 }\n")) ==
        "s.textproto:12:1: published.group: is required\n"
        "s.textproto:12:1: published.flops_convention: is required\n");
}

TEST_CASE("a scenario's name and a published group, when written, are not empty") {
  // Both label the rows validate prints: "" printed ": mean absolute error ..." (input_audit.py).
  CHECK(scenario_errors("name: \"\"\n" + scenario().substr(scenario().find('\n') + 1) +
                        "published { group: \"\" tflops_per_gpu: 100 "
                        "flops_convention: MODEL_FLOPS }\n") ==
        "s.textproto:1:1: name: is empty\n"
        "s.textproto:12:13: published.group: is empty\n");
}

TEST_CASE("a micro-batch swept or tried by auto_parallelism is at most the global batch") {
  // 2^31 - 1 in the axis pruned every configuration of it without naming its line.
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "sweep { micro_batch_size: [1, 128] }\n")) ==
        "s.textproto:12:31: sweep.micro_batch_size[1]: 128 is above job.global_batch_size (64): a "
        "micro-batch is part of one step's batch\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "sweep { auto_parallelism { micro_batch_size: [65] } }\n")) ==
        "s.textproto:12:28: sweep.auto_parallelism.micro_batch_size[0]: 65 is above "
        "job.global_batch_size (64): a micro-batch is part of one step's batch\n");
  // A candidate listed twice gave each of its layouts twice (tools/input_audit.py).
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                 "sweep { auto_parallelism { micro_batch_size: [2, 1, 2] } }\n")) ==
        "s.textproto:12:53: sweep.auto_parallelism.micro_batch_size[2]: 2 is listed twice\n");
}

TEST_CASE("a range whose pace passes its end at once is an error, not its start alone") {
  // A factor of 2^31 - 1 from 1 to 4 swept 1 only (tools/input_audit.py).
  const auto errors = [](const std::string& range) {
    return scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                    "instance: \"aws.p4d.24xlarge\" nodes: 1",
                                    "sweep { range { " + range + " } }\n"));
  };
  CHECK(errors("axis: \"micro_batch_size\" from: 1 to: 4 factor: 2147483647") ==
        "s.textproto:12:56: sweep.range[0].factor: goes from 1 past to (4) in one step: the range "
        "holds from alone\n");
  CHECK(errors("axis: \"micro_batch_size\" from: 2 to: 7 step: 8") ==
        "s.textproto:12:56: sweep.range[0].step: goes from 2 past to (7) in one step: the range "
        "holds from alone\n");
  CHECK(errors("axis: \"micro_batch_size\" from: 4 to: 4") == "");
  CHECK(errors("axis: \"micro_batch_size\" from: 1 to: 4 factor: 4") == "");
}

TEST_CASE("Megatron-Bridge v0.3's FLOPs formula is refused for a hybrid model, its hybrid one for "
          "any other") {
  const std::string published =
      "published { group: \"g\" tflops_per_gpu: 100 flops_convention: "
      "MODEL_FLOPS_CAUSAL_BRIDGE_V03 }\n";
  CHECK(scenario_errors(scenario("gpt-oss-120b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", published)) == "");
  CHECK(scenario_errors(scenario("nemotron3-nano-30b-a3b",
                                 "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", published)) ==
        "s.textproto:12:44: published.flops_convention: MODEL_FLOPS_CAUSAL_BRIDGE_V03 is not for "
        "hybrid models (MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID is)\n");
  const std::string hybrid =
      "published { group: \"g\" tflops_per_gpu: 100 flops_convention: "
      "MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID }\n";
  CHECK(scenario_errors(scenario("nemotron3-nano-30b-a3b",
                                 "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", hybrid)) == "");
  CHECK(scenario_errors(scenario("gpt-oss-120b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", hybrid)) ==
        "s.textproto:12:44: published.flops_convention: MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID is only "
        "for a hybrid model (hybrid_layer_pattern) without a sliding window\n");
}

TEST_CASE("Megatron-Bridge's DeepSeek V4 FLOPs convention is for its attention, and only it") {
  const std::string dsv4 =
      "published { group: \"g\" tflops_per_gpu: 100 flops_convention: "
      "MODEL_FLOPS_CAUSAL_BRIDGE_DSV4 }\n";
  CHECK(scenario_errors(scenario("gpt-oss-120b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", dsv4)) ==
        "s.textproto:12:44: published.flops_convention: MODEL_FLOPS_CAUSAL_BRIDGE_DSV4 is only "
        "for a model with compressed_sparse_attention\n");
  CHECK(scenario_errors(scenario("deepseek-v4-flash", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2", dsv4)) == dsv4_warning);
  CHECK(scenario_errors(scenario("deepseek-v4-flash", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 2",
                                 "published { group: \"g\" tflops_per_gpu: 100 flops_convention: "
                                 "MODEL_FLOPS_CAUSAL }\n")) ==
        dsv4_warning +
        "s.textproto:12:44: published.flops_convention: a model with compressed_sparse_attention "
        "takes MODEL_FLOPS_CAUSAL_BRIDGE_DSV4 (the other conventions do not count its "
        "attention)\n");
}

TEST_CASE("clusters over 2^17 GPUs and budgets over 2^53 steps are refused with what works") {
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                 "instance: \"aws.p5.48xlarge\" nodes: 16385")) ==
        "s.textproto:10:31: cluster.nodes: 16385 nodes of \"aws.p5.48xlarge\" are 131080 GPUs, "
        "more than the 131072 a configuration may have (at most 16384 nodes)\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e30 sequence_length: 4096")) ==
        "s.textproto:7:3: job.token_budget: asks for 3.81e+24 optimizer steps, more than the "
        "9007199254740992 (2^53) a run may have; at most 2.36e+21 tokens\n");
}

TEST_CASE("a budget of less than one optimizer step is refused at its field") {
  // A step is 64 x 4096 = 262144 tokens; 1e-300 tokens (or 0.5 epochs of 64 samples' 0.5 steps)
  // were run and priced as one whole step, silently.
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 1e-300 sequence_length: 4096")) ==
        "s.textproto:7:3: job.token_budget: asks for 3.81e-306 optimizer steps, less than one: a "
        "run trains whole steps (one is 2.62e+05 tokens)\n");
  CHECK(scenario_errors(scenario("llama2-7b",
                                 "epochs: 0.5 sequence_length: 4096 dataset { num_samples: 64 }")) ==
        "s.textproto:7:3: job.epochs: asks for 0.5 optimizer steps, less than one: a run trains "
        "whole steps (one is 1 epochs)\n");
  CHECK(scenario_errors(scenario("llama2-7b", "token_budget: 262144 sequence_length: 4096"))
            .empty());
}

TEST_CASE("a scenario path that is a directory or names no file says so") {
  TempDir dir;
  Diagnostics diagnostics;
  CHECK(load_scenario(dir.path(), testing::shipped_catalog(), &diagnostics) == nullptr);
  CHECK(diagnostics.to_string() == dir.path() + ": is a directory, not a file\n");
  Diagnostics missing;
  CHECK(load_scenario(dir.path() + "/none.textproto", testing::shipped_catalog(), &missing) ==
        nullptr);
  CHECK(missing.to_string() == dir.path() + "/none.textproto: no such file\n");
}

TEST_CASE("compiled_recompute is simulated for dense transformers only") {
  const std::string compiled =
      "parallelism { recompute: RECOMPUTE_FULL compiled_recompute: true }\n";
  CHECK(scenario_errors(scenario() + compiled) == "");
  CHECK(scenario_errors(scenario("mixtral-8x7b") + compiled) ==
        "s.textproto:12:41: parallelism.compiled_recompute: is simulated for dense transformers "
        "only (no experts, latent attention, hybrid layer pattern or multi-token prediction); "
        "\"mixtral-8x7b\" is not one\n");
}

TEST_CASE("LoRA: a rank from 1 to the hidden size, known and distinct target modules, dropout in [0, 1]") {
  const auto job = [](const std::string& lora) {
    return scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096 " + lora);
  };
  CHECK(scenario_errors(job("lora { rank: 8 target_modules: LINEAR_QKV }")) == "");
  CHECK(scenario_errors(job("lora { rank: 0 }")) ==
        "s.textproto:7:50: job.lora.rank: must be >= 1, got 0\n");
  CHECK(scenario_errors(job("lora { target_modules: LINEAR_FC1 }")) ==
        "s.textproto:7:43: job.lora.rank: is required\n");
  CHECK(scenario_errors(job("lora { rank: 4096 }")) == "");
  CHECK(scenario_errors(job("lora { rank: 4097 }")) ==
        "s.textproto:7:50: job.lora.rank: 4097 is above the hidden_size of \"llama2-7b\" (4096), "
        "the largest rank an adapter's product can have\n");
  CHECK(scenario_errors(job("lora { rank: 8 target_modules: LINEAR_FC3 }")) ==
        "s.textproto:7:74: job.lora.target_modules: unknown value \"LINEAR_FC3\" (did you mean "
        "\"LINEAR_FC1\"?)\n");
  CHECK(scenario_errors(job("lora { rank: 8 target_modules: [LINEAR_FC1, LINEAR_FC1] }")) ==
        "s.textproto:7:87: job.lora.target_modules[1]: names LINEAR_FC1 twice\n");
  CHECK(scenario_errors(job("lora { rank: 8 dropout: 0.1 }")) == "");
  CHECK(scenario_errors(job("lora { rank: 8 dropout: 1.5 }")) ==
        "s.textproto:7:58: job.lora.dropout: must be in [0, 1], got 1.5\n");
  CHECK(scenario_errors(job("lora { rank: 8 dropout: 0.1 dropout_position: LORA_DROPOUT_PRE }")) ==
        "");
  CHECK(scenario_errors(job("lora { rank: 8 dropout_position: LORA_DROPOUT_PRE }")) ==
        "s.textproto:7:58: job.lora.dropout_position: needs a dropout above 0 (no dropout kernel "
        "runs without one)\n");
  CHECK(scenario_errors(scenario("mixtral-8x7b",
                                 "token_budget: 1e9 sequence_length: 4096 "
                                 "lora { rank: 8 }")) ==
        "s.textproto:7:43: job.lora: applies to dense transformers only (no experts, latent "
        "attention, hybrid layer pattern or multi-token prediction)\n");
}

TEST_CASE("LoRA and Muon on a hybrid Mamba model are errors at the job") {
  CHECK(scenario_errors(scenario("nemotron3-nano-30b-a3b",
                                 "token_budget: 1e9 sequence_length: 4096 lora { rank: 8 }")) ==
        "s.textproto:7:43: job.lora: applies to dense transformers only (no experts, latent "
        "attention, hybrid layer pattern or multi-token prediction)\n");
  std::string muon = scenario("nemotron3-nano-30b-a3b", "token_budget: 1e9 sequence_length: 4096");
  muon.replace(muon.find("optimizer: ADAM"), 15, "optimizer: MUON");
  CHECK(scenario_errors(muon) ==
        "s.textproto:6:3: job.optimizer: MUON is not simulated for a model with a "
        "hybrid_layer_pattern yet\n");
}

TEST_CASE("LoRA under ZeRO-3 (FSDP2) loads") {
  CHECK(scenario_errors(
            scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096 lora { rank: 8 }",
                     "instance: \"aws.p4d.24xlarge\" nodes: 2",
                     "parallelism { tensor_parallel: 1 pipeline_parallel: 1 data_parallel: 16 "
                     "micro_batch_size: 1 zero_stage: 3 fsdp2: true }\n")) == "");
}

TEST_CASE("FSDP2 without ZeRO-3 or beside the synchronous fetch is rejected") {
  CHECK(scenario_errors(scenario() + "parallelism { zero_stage: 1 fsdp2: true }\n") ==
        "s.textproto:12:29: parallelism.fsdp2: a ZeRO-3 runtime's option needs "
        "zero_stage 3: zero_stage 1\n");
  CHECK(scenario_errors(
            scenario() +
            "parallelism { zero_stage: 3 fsdp2: true zero3_synchronous_fetch: true }\n") ==
        "s.textproto:12:29: parallelism.fsdp2: and zero3_synchronous_fetch are two ZeRO-3 "
        "runtimes: choose one\n");
  // zero_stage absent (0): the configuration, not the loader, says so.
  CHECK(scenario_errors(scenario() + "parallelism { fsdp2: true }\n") ==
        "s.textproto:12:15: parallelism.fsdp2: a ZeRO-3 runtime's option needs zero_stage 3: "
        "zero_stage 0\n");
}

// Only expert layers read them: on a dense model they were accepted and changed nothing.
TEST_CASE("an expert layers' option on a dense model is an error at its field") {
  CHECK(scenario_errors(scenario() + "parallelism { cuda_graphed_expert_layers: true }\n") ==
        "s.textproto:12:15: parallelism.cuda_graphed_expert_layers: applies to "
        "mixture-of-experts models only\n");
  CHECK(scenario_errors(scenario() + "parallelism { zero_stage: 3 fsdp2: true "
                                     "fsdp2_expert_reduce_in_weight_type: true }\n") ==
        "s.textproto:12:41: parallelism.fsdp2_expert_reduce_in_weight_type: applies to "
        "mixture-of-experts models only\n");
}

TEST_CASE("FSDP2's options need fsdp2, deferred sync the forward's gather kept") {
  CHECK(scenario_errors(scenario() +
                        "parallelism { zero_stage: 3 fsdp2_keep_forward_gather: true }\n") ==
        "s.textproto:12:29: parallelism.fsdp2_keep_forward_gather: is an FSDP2 option: needs "
        "fsdp2\n");
  CHECK(
      scenario_errors(scenario() +
                      "parallelism { zero_stage: 3 fsdp2_expert_reduce_in_weight_type: true }\n") ==
      "s.textproto:12:29: parallelism.fsdp2_expert_reduce_in_weight_type: applies to "
      "mixture-of-experts models only\n"
      "s.textproto:12:29: parallelism.fsdp2_expert_reduce_in_weight_type: is an FSDP2 option: "
      "needs fsdp2\n");
  CHECK(scenario_errors(scenario() +
                        "parallelism { zero_stage: 3 fsdp2: true fsdp2_defer_gradient_sync: true "
                        "}\n") ==
        "s.textproto:12:41: parallelism.fsdp2_defer_gradient_sync: needs "
        "fsdp2_keep_forward_gather (and fsdp2)\n");
}

TEST_CASE("gradient buffer passes: Megatron's wrapper's, not under ZeRO or DeepSpeed's engine") {
  CHECK(scenario_errors(scenario() +
                        "parallelism { zero_stage: 3 check_for_nan_in_grad: true }\n") ==
        "s.textproto:12:29: parallelism.check_for_nan_in_grad: is Megatron's data-parallel "
        "wrapper's: not with a zero_stage\n");
  CHECK(scenario_errors(scenario() +
                        "parallelism { pipeline_parallel: 2 deepspeed_pipeline_engine: true "
                        "zero_gradient_buffer: false }\n") ==
        "s.textproto:12:68: parallelism.zero_gradient_buffer: is Megatron's data-parallel "
        "wrapper's: not with deepspeed_pipeline_engine\n");
  CHECK(scenario_errors(scenario() + "parallelism { gradient_scaling: PER_TOKEN_LOSS }\n").empty());
}

TEST_CASE("pipeline runs: at least 1, and not under DeepSpeed's pipeline engine") {
  CHECK(scenario_errors(scenario() + "parallelism { pipeline_runs: 0 }\n") ==
        "s.textproto:12:15: parallelism.pipeline_runs: must be >= 1, got 0\n");
  CHECK(scenario_errors(scenario() +
                        "parallelism { pipeline_parallel: 2 deepspeed_pipeline_engine: true "
                        "pipeline_runs: 2 }\n") ==
        "s.textproto:12:68: parallelism.pipeline_runs: is torch.distributed.pipelining's: not "
        "with deepspeed_pipeline_engine\n");
}

TEST_CASE("deferred output weight gradients: Megatron-Core's pipeline, a trained output layer") {
  const auto errors = [](const std::string& fields, const std::string& job_extra = "") {
    return scenario_errors(
        scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096" + job_extra,
                 "instance: \"aws.p4d.24xlarge\" nodes: 2", "parallelism { " + fields + " }\n"));
  };
  CHECK(errors("output_weight_gradient_deferral_limit: 4") ==
        "s.textproto:12:15: parallelism.output_weight_gradient_deferral_limit: applies with "
        "defer_output_weight_gradient only\n");
  CHECK(errors("pipeline_parallel: 2 defer_output_weight_gradient: true "
               "output_weight_gradient_deferral_limit: -1") ==
        "s.textproto:12:71: parallelism.output_weight_gradient_deferral_limit: must be >= 0, got "
        "-1\n");
  CHECK(errors("pipeline_parallel: 2 deepspeed_pipeline_engine: true "
               "defer_output_weight_gradient: true") ==
        "s.textproto:12:68: parallelism.defer_output_weight_gradient: is Megatron-Core's: not "
        "with deepspeed_pipeline_engine\n");
  CHECK(errors("pipeline_parallel: 2 pipeline_runs: 2 defer_output_weight_gradient: true") ==
        "s.textproto:12:53: parallelism.defer_output_weight_gradient: is Megatron-Core's, one "
        "pipeline schedule a step: not with pipeline_runs\n");
  // The configuration's problems, at the field.
  CHECK_THAT(errors("defer_output_weight_gradient: true"),
             Catch::StartsWith("s.textproto:12:15: parallelism.defer_output_weight_gradient: "
                               "deferring output weight gradients needs pipeline parallel > 1"));
  CHECK(errors("pipeline_parallel: 2 zero_stage: 3 defer_output_weight_gradient: true") ==
        "s.textproto:12:50: parallelism.defer_output_weight_gradient: deferring output weight "
        "gradients is not run under ZeRO-3 or Megatron FSDP: zero_stage 3\n");
  CHECK_THAT(errors("pipeline_parallel: 2 defer_output_weight_gradient: true",
                    " lora { rank: 16 target_modules: LINEAR_QKV }"),
             Catch::StartsWith("s.textproto:12:36: parallelism.defer_output_weight_gradient: "
                               "deferring output weight gradients needs a trained output layer "
                               "(LoRA freezes it)"));
}

TEST_CASE("hybrid sharding: groups of at least 1 rank that divide the data-parallel ranks") {
  const auto hsdp = [](const std::string& zero, int shard) {
    return scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                    "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                    "parallelism { tensor_parallel: 1 pipeline_parallel: 1 "
                                    "data_parallel: 16 micro_batch_size: 1 " +
                                        zero + " data_parallel_shard: " + std::to_string(shard) +
                                        " }\n"));
  };
  CHECK(hsdp("zero_stage: 3 fsdp2: true", 8) == "");
  CHECK(hsdp("zero_stage: 3 fsdp2: true", 6) ==
        "s.textproto:12:119: parallelism.data_parallel_shard: hybrid sharding's groups must "
        "divide the data-parallel ranks: data_parallel_shard 6 against DP 16\n");
  CHECK(hsdp("zero_stage: 3", 0) ==
        "s.textproto:12:107: parallelism.data_parallel_shard: must be >= 1, got 0\n");
  CHECK(hsdp("zero_stage: 1", 8) ==
        "s.textproto:12:107: parallelism.data_parallel_shard: a ZeRO-3 runtime's option needs "
        "zero_stage 3: zero_stage 1\n");
}

TEST_CASE("Muon without the distributed optimizer, ZeRO or FP8 weights") {
  const auto muon = [](const std::string& precision, const std::string& layout) {
    const bool fp8 = precision != "precision: BF16";
    std::string text = scenario(
        "llama2-7b", "token_budget: 1e9 sequence_length: 4096",
        fp8 ? "instance: \"aws.p5.48xlarge\" nodes: 2" : "instance: \"aws.p4d.24xlarge\" nodes: 2",
        "parallelism { tensor_parallel: 1 pipeline_parallel: 1 "
        "data_parallel: 16 micro_batch_size: 1 " +
            layout + " }\n");
    text.replace(text.find("optimizer: ADAM"), 15, "optimizer: MUON");
    text.replace(text.find("precision: BF16"), 15, precision);
    return scenario_errors(text);
  };
  CHECK(muon("precision: BF16", "") == "");
  CHECK(muon("precision: BF16", "zero_stage: 3") ==
        "s.textproto:12:93: parallelism.zero_stage: Muon's layer-wise optimizer runs without ZeRO: "
        "the scenario's one configuration is aws.p4d.24xlarge x 2, TP 1 PP 1 DP 16 mbs 1, "
        "ZeRO 3\n");
  CHECK(muon("precision: BF16", "distributed_optimizer: true") ==
        "s.textproto:12:93: parallelism.distributed_optimizer: Muon's layer-wise optimizer runs "
        "without the distributed optimizer: the scenario's one configuration is aws.p4d.24xlarge "
        "x 2, TP 1 PP 1 DP 16 mbs 1, dist opt\n");
  CHECK(muon("precision: BF16 lora { rank: 8 }", "") ==
        "s.textproto:5:19: job.lora: is not simulated with optimizer MUON\n");
  CHECK(muon("precision: FP8 fp8_parameters: true", "") ==
        "s.textproto:5:18: job.fp8_parameters: needs the distributed optimizer, which Muon does "
        "not run\n");
}

TEST_CASE("Apex's optimizer buckets need the sharded optimizer and at least 1 MiB") {
  CHECK(scenario_errors(scenario() + "parallelism { optimizer_bucket_mib: 100 }\n") ==
        "s.textproto:12:15: parallelism.optimizer_bucket_mib: is a sharded optimizer's (Apex's): "
        "needs distributed_optimizer\n");
  CHECK(scenario_errors(scenario() +
                        "parallelism { distributed_optimizer: true optimizer_bucket_mib: 0 }\n") ==
        "s.textproto:12:43: parallelism.optimizer_bucket_mib: must be >= 1, got 0\n");
  CHECK(scenario_errors(scenario() +
                        "parallelism { distributed_optimizer: true optimizer_bucket_mib: 0.001 }\n") ==
        "s.textproto:12:43: parallelism.optimizer_bucket_mib: must be >= 1, got 0.001\n");
  // 1e300 was taken as one bucket, without a sign (tools/input_audit.py): at most a PiB.
  CHECK(scenario_errors(scenario() +
                        "parallelism { distributed_optimizer: true optimizer_bucket_mib: 1e300 }\n") ==
        "s.textproto:12:43: parallelism.optimizer_bucket_mib: must be in [1, 1073741824], got "
        "1e+300\n");
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("DualPipe's stage and micro-batch counts and its unsimulated options are located") {
  const auto errors = [](const std::string& parallelism) {
    return testing::scenario_errors(scenario("llama2-7b", "token_budget: 1e9 sequence_length: 4096",
                                             "instance: \"aws.p4d.24xlarge\" nodes: 2",
                                             "parallelism { " + parallelism + " }\n"));
  };
  // 64 sequences over DP 4 in micro-batches of 4: 4 per replica, fewer than 2 x 4 stages.
  CHECK(errors("pipeline_parallel: 4 schedule: DUALPIPE micro_batch_size: 4") ==
        "s.textproto:12:55: parallelism.micro_batch_size: DUALPIPE needs an even number of "
        "micro-batches per replica, at least 2 x pipeline parallel: 4 micro-batches per replica "
        "on 4 stages\n");
  CHECK(errors("pipeline_parallel: 1 schedule: DUALPIPE") ==
        "s.textproto:12:15: parallelism.pipeline_parallel: DUALPIPE needs an even pipeline "
        "parallel of at least 2: pipeline parallel 1\n");
  CHECK(errors("pipeline_parallel: 4 schedule: DUALPIPE zero_stage: 3") ==
        "s.textproto:12:55: parallelism.zero_stage: DUALPIPE is not simulated under ZeRO-3 or "
        "Megatron FSDP: the scenario's one configuration is aws.p4d.24xlarge x 2, TP 1 PP 4 DP 4 "
        "mbs 1, ZeRO 3, DUALPIPE\n");
  CHECK(errors("pipeline_parallel: 4 schedule: DUALPIPE virtual_stages: 2") ==
        "s.textproto:12:55: parallelism.virtual_stages: needs schedule INTERLEAVED_ONE_F_ONE_B\n");
  CHECK(errors("pipeline_parallel: 4 schedule: DUALPIPE_V micro_batch_size: 4") ==
        "s.textproto:12:57: parallelism.micro_batch_size: DUALPIPE_V needs at least 2 x pipeline "
        "parallel micro-batches per replica: 4 micro-batches per replica on 4 stages\n");
}

}  // namespace
}  // namespace clustersim
