// Why a tensor, pipeline, virtual-stage or context-parallel degree cannot split the model or the
// job's sequences, and the checks of the degree fields of parallelism and the sweep.
#include "sim/io/degree_checks.h"

#include <utility>
#include <vector>

#include "sim/parallel/expert_parallel.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

namespace s = schema;

}  // namespace

// A tensor-parallel degree must split the attention heads (and KV heads) evenly.
std::string tensor_parallel_problem(int tp, const schema::Model* model) {
  if (!is_transformer(model)) {
    return tp == 1 ? "" : "tensor parallelism applies to transformers only";
  }
  const s::Transformer& t = model->transformer();
  const int64_t kv = kv_heads(t);
  if (t.num_attention_heads() % tp != 0) {
    return std::to_string(tp) + " does not divide the model's num_attention_heads (" +
           std::to_string(t.num_attention_heads()) + ")";
  }
  if (kv % tp != 0) {
    return std::to_string(tp) + " does not divide the model's num_kv_heads (" + std::to_string(kv) +
           ")";
  }
  // Megatron-Core's MambaMixer splits its heads and its B/C groups by tensor-parallel rank.
  if (t.has_mamba()) {
    for (auto [size, field] : {std::pair{t.mamba().num_heads(), "mamba.num_heads"},
                               std::pair{t.mamba().num_groups(), "mamba.num_groups"}}) {
      if (size % tp != 0) {
        return std::to_string(tp) + " does not divide the model's " + field + " (" +
               std::to_string(size) + ")";
      }
    }
  }
  // Compressed sparse attention's grouped output projection splits its groups by rank.
  if (t.has_compressed_sparse_attention() && t.compressed_sparse_attention().o_groups() % tp != 0) {
    return std::to_string(tp) +
           " does not divide the model's compressed_sparse_attention.o_groups (" +
           std::to_string(t.compressed_sparse_attention().o_groups()) + ")";
  }
  // Megatron splits the hidden state (sequence parallelism, row-parallel outputs) and the FFN by
  // tensor-parallel rank.
  for (auto [size, field] : {std::pair{t.hidden_size(), "hidden_size"},
                             std::pair{t.ffn_hidden_size(), "ffn_hidden_size"}}) {
    if (size % tp != 0) {
      return std::to_string(tp) + " does not divide the model's " + field + " (" +
             std::to_string(size) + ")";
    }
  }
  return "";
}

std::string pipeline_parallel_problem(int pp, const schema::Model* model) {
  if (!is_transformer(model)) {
    return pp == 1 ? "" : "pipeline parallelism applies to transformers only";
  }
  const int layers = model->transformer().num_layers();
  return pp <= layers ? ""
                      : std::to_string(pp) + " exceeds the model's num_layers (" +
                            std::to_string(layers) + ")";
}

// Model chunks of an interleaved schedule: a stage's layers split into at most its layers.
std::string virtual_stages_problem(int vs, const schema::Model* model) {
  if (!is_transformer(model)) return "";
  const int layers = model->transformer().num_layers();
  return vs <= layers ? ""
                      : std::to_string(vs) + " exceeds the model's num_layers (" +
                            std::to_string(layers) + ")";
}

std::string context_parallel_problem(int cp, int tp, const s::Parallelism& p,
                                     const s::Model* model, const s::TrainingJob& job) {
  if (cp == 1) return "";
  if (!is_transformer(model)) return "context parallelism applies to transformers only";
  if (job.has_flash_attention() && !job.flash_attention()) {
    return "context parallelism needs fused attention (job.flash_attention)";
  }
  const s::Transformer& t = model->transformer();
  if (t.has_sliding_window()) {
    return "context parallelism with sliding-window attention is not simulated yet";
  }
  if (t.has_compressed_sparse_attention()) {
    return "context parallelism with compressed sparse attention is not simulated yet";
  }
  if (t.has_hybrid_layer_pattern()) {
    return "context parallelism of a hybrid model's layers is not simulated yet";
  }
  const int seq = job.sequence_length();
  const s::ContextParallelComm comm = p.context_parallel_comm();
  if (comm == s::TORCH_ALL_GATHER && t.kind() != s::DECODER) {
    return "TORCH_ALL_GATHER needs a decoder's causal attention (PyTorch's load balancing "
           "requires is_causal)";
  }
  const bool all_to_all = comm == s::ALL_TO_ALL;
  // The load-balanced causal split cuts each sequence into 2 CP chunks.
  const int64_t chunks = t.kind() == s::DECODER && !all_to_all ? 2 * int64_t{cp} : cp;
  if (seq % chunks != 0) {
    return std::to_string(cp) + " needs the sequence length (" + std::to_string(seq) +
           ") divisible by " + std::to_string(chunks) +
           (chunks > cp ? " (2 chunks per rank for the causal load balance)" : "");
  }
  if (p.sequence_parallel() && (seq / cp) % tp != 0) {
    return std::to_string(cp) + " leaves " + std::to_string(seq / cp) +
           " tokens per rank, not divisible by tensor parallel " + std::to_string(tp) +
           " (sequence parallelism)";
  }
  const int64_t kv = kv_heads(t);
  if (all_to_all && ((t.num_attention_heads() / tp) % cp != 0 || (kv / tp) % cp != 0)) {
    return "ALL_TO_ALL needs the attention and KV heads per tensor-parallel rank (" +
           std::to_string(t.num_attention_heads() / tp) + " and " + std::to_string(kv / tp) +
           ") divisible by " + std::to_string(cp);
  }
  return "";
}

void check_parallelism_fields(const FieldChecker& p, const s::Model* model) {
  for (const char* f : {"tensor_parallel", "pipeline_parallel", "context_parallel",
                        "expert_parallel", "micro_batch_size", "virtual_stages",
                        "data_parallel_shard"}) {
    p.at_least(f, 1);
  }
  p.in_range("zero_stage", 0, 3);
  check_degree_values(p, "tensor_parallel",
                      [&](int tp) { return tensor_parallel_problem(tp, model); });
  check_degree_values(p, "pipeline_parallel",
                      [&](int pp) { return pipeline_parallel_problem(pp, model); });
  check_degree_values(p, "virtual_stages",
                      [&](int vs) { return virtual_stages_problem(vs, model); });
  check_degree_values(p, "expert_parallel",
                      [&](int ep) { return expert_parallel_problem(ep, model); });
}

void check_context_parallel(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  std::vector<int> tps = {m.parallelism().has_tensor_parallel() ? m.parallelism().tensor_parallel()
                                                                : 1};
  if (m.sweep().tensor_parallel_size() > 0) {
    tps.assign(m.sweep().tensor_parallel().begin(), m.sweep().tensor_parallel().end());
  }
  const bool swept = m.sweep().context_parallel_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("parallelism");
  const int count = swept ? m.sweep().context_parallel_size() : 1;
  for (int i = 0; i < count; ++i) {
    const int cp = swept ? m.sweep().context_parallel(i) : m.parallelism().context_parallel();
    for (int tp : tps) {
      if (cp < 1 || tp < 1) continue;  // reported by at_least
      const std::string why = context_parallel_problem(cp, tp, m.parallelism(), loaded.model, m.job());
      if (why.empty()) continue;
      owner.error("context_parallel", why, swept ? i : -1);
      break;
    }
  }
}

}  // namespace clustersim
