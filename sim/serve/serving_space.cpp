// Decoding a serving configuration from its index.
#include "sim/serve/serving_space.h"

#include "sim/serve/serving_checks.h"
#include "sim/sweep/axis_values.h"

namespace clustersim {
namespace {

namespace s = schema;

// The scheduler with every default written in.
s::Scheduler resolved_scheduler(const s::Scheduler& given) {
  s::Scheduler r = given;
  if (!r.has_batching()) r.set_batching(s::CONTINUOUS);
  if (!r.has_max_batch_size()) r.set_max_batch_size(256);
  if (!r.has_max_tokens_per_iteration()) r.set_max_tokens_per_iteration(8192);
  if (!r.has_chunked_prefill()) r.set_chunked_prefill(false);
  if (!r.has_kv_block_tokens()) r.set_kv_block_tokens(64);
  if (!r.has_kv_cache_memory_fraction()) r.set_kv_cache_memory_fraction(0.9);
  if (!r.has_batch_wait_ms()) r.set_batch_wait_ms(0);
  return r;
}

// Places `shape`'s replicas from GPU `*next` on nodes of `per_node` GPUs.
PoolPlacement place(const PoolShape& shape, int per_node, int* next) {
  PoolPlacement p;
  p.gpus = shape.replica_gpus();
  for (int r = 0; r < shape.replicas; ++r) {
    const int offset = *next % per_node;
    if (offset != 0 && (p.gpus >= per_node || offset + p.gpus > per_node)) {
      *next += per_node - offset;
    }
    p.first_gpu.push_back(*next);
    *next += p.gpus;
  }
  return p;
}

PoolShape pool_shape(const s::ServingPool& pool, const s::InstanceType* instance) {
  return {pool.has_tensor_parallel() ? pool.tensor_parallel() : 1,
          pool.has_pipeline_parallel() ? pool.pipeline_parallel() : 1,
          pool.has_replicas() ? pool.replicas() : 1, instance};
}

}  // namespace

DeploymentPlacement deployment_placement(const ServingConfiguration& c) {
  const int per_node = c.instance->gpu_count();
  DeploymentPlacement placement;
  int next = 0;
  if (c.split_nodes()) {
    const int prefill_per_node = c.prefill->instance->gpu_count();
    placement.prefill = place(*c.prefill, prefill_per_node, &next);
    placement.prefill_nodes = (next + prefill_per_node - 1) / prefill_per_node;
    next = 0;
  } else if (c.prefill) {
    placement.prefill = place(*c.prefill, per_node, &next);
  }
  placement.decode = place({c.tensor_parallel, c.pipeline_parallel, c.replicas}, per_node, &next);
  placement.nodes = placement.prefill_nodes + (next + per_node - 1) / per_node;
  return placement;
}

int ServingConfiguration::nodes() const { return deployment_placement(*this).nodes; }

ServingConfiguration ServingConfiguration::pool(bool prefill_pool) const {
  ServingConfiguration c = *this;
  c.prefill.reset();
  if (prefill_pool) {
    c.instance = prefill->instance;
    c.tensor_parallel = prefill->tensor_parallel;
    c.pipeline_parallel = prefill->pipeline_parallel;
    c.replicas = prefill->replicas;
  }
  return c;
}

ServingSpace::ServingSpace(const LoadedServingScenario& scenario) : scenario_(scenario) {
  const s::ServingScenario& m = scenario.scenario();
  const s::Deployment& d = m.deployment();
  const s::ServingSweep& sweep = m.sweep();
  if (!d.has_disaggregation() || sweep.replicas_size() > 0) {
    for (int tp : axis_values(sweep.tensor_parallel(),
                              d.has_tensor_parallel() ? d.tensor_parallel() : 1)) {
      for (int pp : axis_values(sweep.pipeline_parallel(),
                                d.has_pipeline_parallel() ? d.pipeline_parallel() : 1)) {
        for (int r : axis_values(sweep.replicas(), d.has_replicas() ? d.replicas() : 1)) {
          shapes_.push_back({{tp, pp, r}, std::nullopt});
        }
      }
    }
  }
  if (d.has_disaggregation()) {
    const PoolShape prefill = pool_shape(d.disaggregation().prefill(), scenario.prefill_instance);
    const PoolShape decode = pool_shape(d.disaggregation().decode(), scenario.decode_instance);
    for (int p : axis_values(sweep.prefill_replicas(), prefill.replicas)) {
      for (int r : axis_values(sweep.decode_replicas(), decode.replicas)) {
        Shape shape{decode, prefill};
        shape.replicas.replicas = r;
        shape.prefill->replicas = p;
        shapes_.push_back(shape);
      }
    }
  }
  expert_parallel_ =
      axis_values(sweep.expert_parallel(), d.has_expert_parallel() ? d.expert_parallel() : 1);
  attention_data_parallel_.assign(sweep.attention_data_parallel().begin(),
                                  sweep.attention_data_parallel().end());
  if (attention_data_parallel_.empty()) {
    attention_data_parallel_.push_back(d.attention_data_parallel());
  }
  quantizations_ = axis_values(sweep.quantization(), d.quantization());
  const s::Scheduler base = resolved_scheduler(d.scheduler());
  batching_.clear();
  for (int b : sweep.batching()) batching_.push_back(static_cast<s::Batching>(b));
  if (batching_.empty()) batching_.push_back(base.batching());
  max_batch_ = axis_values(sweep.max_batch_size(), base.max_batch_size());
  max_tokens_ = axis_values(sweep.max_tokens_per_iteration(), base.max_tokens_per_iteration());
  for (bool on : sweep.prefix_caching()) prefix_caching_.push_back(on);
  if (prefix_caching_.empty()) prefix_caching_.push_back(std::nullopt);
  draft_tokens_ = d.has_speculative_decoding()
                      ? axis_values(sweep.draft_tokens(), d.speculative_decoding().draft_tokens())
                      : std::vector<int>{0};
  concurrency_ = m.traffic().has_closed_loop()
                     ? axis_values(sweep.concurrency(), m.traffic().closed_loop().concurrency())
                     : std::vector<int>{0};
  size_ = static_cast<int64_t>(scenario.instances.size() * shapes_.size() *
                               expert_parallel_.size() * attention_data_parallel_.size() *
                               quantizations_.size() * batching_.size() *
                               max_batch_.size() * max_tokens_.size() * prefix_caching_.size() *
                               draft_tokens_.size() * concurrency_.size());
}

ServingConfiguration ServingSpace::at(int64_t index) const {
  ServingConfiguration c;
  c.index = index;
  int64_t rest = index;
  const auto take = [&rest](size_t n) {
    const auto i = static_cast<size_t>(rest % static_cast<int64_t>(n));
    rest /= static_cast<int64_t>(n);
    return i;
  };
  // Last axis fastest: decode from the end.
  c.concurrency = concurrency_[take(concurrency_.size())];
  c.draft_tokens = draft_tokens_[take(draft_tokens_.size())];
  const std::optional<bool> prefix_caching = prefix_caching_[take(prefix_caching_.size())];
  const int max_tokens = max_tokens_[take(max_tokens_.size())];
  const int max_batch = max_batch_[take(max_batch_.size())];
  const s::Batching batching = batching_[take(batching_.size())];
  c.quantization = quantizations_[take(quantizations_.size())];
  c.attention_data_parallel = attention_data_parallel_[take(attention_data_parallel_.size())];
  c.expert_parallel = expert_parallel_[take(expert_parallel_.size())];
  const Shape& shape = shapes_[take(shapes_.size())];
  c.tensor_parallel = shape.replicas.tensor_parallel;
  c.pipeline_parallel = shape.replicas.pipeline_parallel;
  c.replicas = shape.replicas.replicas;
  c.prefill = shape.prefill;
  c.instance = scenario_.instances[take(scenario_.instances.size())];
  if (c.prefill) {  // a pool's own instance replaces the swept one
    if (c.prefill->instance == nullptr) c.prefill->instance = c.instance;
    if (shape.replicas.instance != nullptr) c.instance = shape.replicas.instance;
  }
  c.scheduler = resolved_scheduler(scenario_.scenario().deployment().scheduler());
  c.scheduler.set_batching(batching);
  c.scheduler.set_max_batch_size(max_batch);
  c.scheduler.set_max_tokens_per_iteration(max_tokens);
  if (prefix_caching) c.scheduler.mutable_prefix_caching()->set_enabled(*prefix_caching);
  return c;
}

std::string serving_problem(const ServingConfiguration& c, const Catalog& catalog) {
  if (c.prefill) {
    for (const bool prefill_pool : {true, false}) {
      const std::string why = serving_problem(c.pool(prefill_pool), catalog);
      if (!why.empty()) return (prefill_pool ? "prefill pool: " : "decode pool: ") + why;
    }
    return "";
  }
  const int per_node = c.instance->gpu_count();
  if (c.replica_gpus() > per_node && c.replica_gpus() % per_node != 0) {
    return "a replica of " + std::to_string(c.replica_gpus()) + " GPUs does not fill whole " +
           std::to_string(per_node) + "-GPU nodes";
  }
  if (c.tensor_parallel > per_node) return "tensor parallelism spans nodes";
  if (c.tensor_parallel % c.expert_parallel != 0) {
    return "expert parallelism " + std::to_string(c.expert_parallel) +
           " does not divide tensor parallelism " + std::to_string(c.tensor_parallel);
  }
  if (c.attention_data_parallel && c.tensor_parallel < 2) {
    return "attention data parallelism on a replica of one GPU";
  }
  if (c.attention_data_parallel && c.expert_parallel != c.tensor_parallel) {
    return "attention data parallelism with expert parallelism " +
           std::to_string(c.expert_parallel) + " (it splits the experts over all " +
           std::to_string(c.tensor_parallel) + " GPUs of the replica)";
  }
  return quantization_problem(c.quantization, catalog.gpu_of(*c.instance));
}

}  // namespace clustersim
