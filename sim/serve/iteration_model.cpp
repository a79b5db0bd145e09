// Iteration times of a serving replica from its kernels and collectives.
#include "sim/serve/iteration_model.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/net/collective.h"
#include "sim/serve/beam_search.h"
#include "sim/serve/compressed_attention_time.h"
#include "sim/util/check.h"
#include "sim/workload/expert_rank_load.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

int64_t serving_row_tile(int64_t tokens) {
  constexpr int64_t kNarrowest = 16;
  if (tokens >= ComputeModel::kTile) return ComputeModel::kTile;
  return std::max(kNarrowest, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(tokens))));
}
namespace {

namespace s = schema;

constexpr int64_t kMemoTokens = 16384;  // matmul times memoized for m up to this

bool grouped_kernel_applies(const s::ServingRuntime& runtime, const InferenceShape& shape) {
  if (!runtime.has_grouped_attention_head_dim()) return false;
  if (shape.head_dim != runtime.grouped_attention_head_dim() || shape.kv_heads <= 0 ||
      shape.query_heads % shape.kv_heads != 0) {
    return false;
  }
  const int64_t group = shape.query_heads / shape.kv_heads;
  if (runtime.has_grouped_attention_max_query_heads_per_kv()) {
    return group <= runtime.grouped_attention_max_query_heads_per_kv();
  }
  return group == runtime.grouped_attention_query_heads_per_kv();
}

// The share of the GPU's tensor-core rate the runtime's expert GEMMs get: its sync_mma_fraction
// where they issue mma.sync, times the fit's expert_matmul_fraction (absent: 1).
double expert_rate_share(const IterationInputs& in) {
  const bool sync = in.serving->expert_matmuls_sync_mma() && in.gpu->has_sync_mma_fraction();
  const double fitted = in.fit.has_expert_matmul_fraction() ? in.fit.expert_matmul_fraction() : 1.0;
  return (sync ? in.gpu->sync_mma_fraction() : 1.0) * fitted;
}

// The fit's cost of a KV head's re-read by the masked kernel for a cache of `kv_cache` elements:
// an FP8 cache's own fraction where the fit has one, else kv_reread_fraction (absent: 1, every
// re-read from memory).
double kv_reread_fraction(const s::ServingGpuFit& fit, s::Precision kv_cache) {
  if (kv_cache == s::FP8 && fit.has_fp8_kv_reread_fraction()) return fit.fp8_kv_reread_fraction();
  return fit.has_kv_reread_fraction() ? fit.kv_reread_fraction() : 1.0;
}

}  // namespace

void add_prompt_chunk(IterationWork* work, int64_t past, int64_t chunk, int window,
                      bool chunked_window) {
  const auto end = static_cast<double>(past + chunk), start = static_cast<double>(past);
  const double pairs = causal_pairs(end, 0) - causal_pairs(start, 0);
  const double windowed = windowed_causal_pairs(end, window, chunked_window) -
                          windowed_causal_pairs(start, window, chunked_window);
  work->attention_pairs += pairs;
  work->attention_pairs_per_key += pairs / end;
  work->window_attention_pairs += windowed;
  work->window_attention_pairs_per_key +=
      windowed / (window > 0 ? std::min<double>(end, window) : end);
}

IterationModel::IterationModel(const IterationInputs& in)
    : compute_(ComputeModel::serving(*in.gpu, in.formats.activations, *in.runtime,
                                     in.fit.compute_fraction(), in.fit.memory_fraction(),
                                     in.fit.fp8_matmul_fraction())),
      sixteen_(ComputeModel::serving(*in.gpu, sixteen_bit_format(*in.gpu), *in.runtime,
                                     in.fit.compute_fraction(), in.fit.memory_fraction())),
      experts_(ComputeModel::serving(*in.gpu, in.formats.activations, *in.runtime,
                                     in.fit.compute_fraction() * expert_rate_share(in),
                                     in.fit.memory_fraction(),
                                     in.fit.fp8_matmul_fraction() * expert_rate_share(in))),
      weight_bytes_(bytes_per_element(in.formats.weights)),
      vocab_(in.model->vocab_size()),
      kv_reread_fraction_(kv_reread_fraction(in.fit, in.formats.kv_cache)),
      expert_row_tile_(in.serving->has_expert_matmul_row_tile()
                           ? in.serving->expert_matmul_row_tile()
                           : ComputeModel::kTile),
      fake_weights_(in.fake_weights),
      routed_experts_apart_(in.routed_experts_apart),
      layer_overhead_(Picoseconds::from_microseconds(in.fit.layer_overhead_us())),
      expert_layer_overhead_(Picoseconds::from_microseconds(in.fit.expert_layer_overhead_us())),
      iteration_overhead_(Picoseconds::from_microseconds(in.serving->iteration_overhead_us())),
      static_prefill_overhead_(
          Picoseconds::from_microseconds(in.serving->static_prefill_overhead_us())) {
  for (int stage = 0; stage < in.pipeline_parallel; ++stage) {
    shapes_.push_back(inference_shape(*in.model, in.formats, in.tensor_parallel,
                                      in.pipeline_parallel, stage, in.expert_parallel));
    if (shapes_.back().weight_bytes > shapes_[largest_].weight_bytes) largest_ = stage;
  }
  grouped_ = grouped_kernel_applies(*in.serving, shapes_[0]);
  matmul_memo_.assign(shapes_.size(), std::vector<int64_t>(kMemoTokens + 1, -1));
  if (in.tensor_parallel > 1) allreduce_ = sample_collectives(in, false);
  if (in.pipeline_parallel > 1) send_ = sample_collectives(in, true);
}

std::vector<Picoseconds> IterationModel::sample_collectives(const IterationInputs& in,
                                                            bool send) const {
  Collective c;
  c.op = send ? CollectiveOp::kSendRecv : CollectiveOp::kAllReduce;
  if (send) {
    c.gpus = {0, in.tensor_parallel};  // stage 0's first GPU to stage 1's
  } else {
    for (int g = 0; g < in.tensor_parallel; ++g) c.gpus.push_back(g);
  }
  const Picoseconds overhead = Picoseconds::from_microseconds(in.serving->allreduce_overhead_us());
  std::vector<Picoseconds> samples;
  for (int64_t tokens = 1;; tokens *= 2) {
    c.bytes = static_cast<double>(tokens) * shapes_[0].allreduce_bytes_per_token;
    samples.push_back(collective_time(*in.topology, c) + (send ? Picoseconds() : overhead));
    if (tokens >= in.max_tokens) break;
  }
  return samples;
}

Picoseconds IterationModel::interpolate(const std::vector<Picoseconds>& samples, int64_t tokens) {
  if (samples.empty() || tokens <= 0) return Picoseconds();
  if (tokens == 1) return samples[0];
  const int below = std::min<int>(static_cast<int>(std::log2(static_cast<double>(tokens))),
                                  static_cast<int>(samples.size()) - 2);
  if (below < 0) return samples[0];
  const double low = std::ldexp(1.0, below), high = 2 * low;
  const double a = static_cast<double>(samples[below].count());
  const double b = static_cast<double>(samples[below + 1].count());
  // Beyond the last sample: extrapolated along the last segment.
  return Picoseconds(std::llround(a + (b - a) * (static_cast<double>(tokens) - low) / (high - low)));
}

Picoseconds IterationModel::routed_expert_gemms(const LayerGroup& group, double touched,
                                                double copies) const {
  const auto per_expert = static_cast<int64_t>(std::ceil(copies / std::max(touched, 1.0)));
  Picoseconds t = expert_layer_overhead_;
  for (const LayerMatmul& mm : group.matmuls) {
    if (mm.expert) {
      t += experts_.matmul(per_expert, mm.n, mm.k, touched, weight_bytes_, expert_row_tile_);
    }
  }
  return t;
}

namespace {

bool has_routed_experts(const InferenceShape& shape, const LayerGroup& group) {
  return shape.num_experts > 1 && std::any_of(group.matmuls.begin(), group.matmuls.end(),
                                              [](const LayerMatmul& mm) { return mm.expert; });
}

}  // namespace

Picoseconds IterationModel::routed_experts(int64_t tokens) const {
  Picoseconds total;
  for (const InferenceShape& shape : shapes_) {
    const ExpertRankLoad busiest = busiest_expert_rank(
        shape.num_experts, shape.experts_per_token, shape.expert_parallel, tokens);
    for (const LayerGroup& group : shape.groups) {
      if (!has_routed_experts(shape, group)) continue;
      total += Picoseconds(routed_expert_gemms(group, busiest.experts, busiest.copies).count() *
                           group.layers);
    }
  }
  return total;
}

Picoseconds IterationModel::layer_matmuls(const InferenceShape& shape, int64_t m) const {
  // One layer of `group` whose rank runs `copies` token copies through `touched` experts (0: a
  // dense layer, or one whose routed experts run apart), its other matrices on all m tokens.
  const auto layer = [&](const LayerGroup& group, double touched, double copies) {
    Picoseconds t = compute_.memory_bound(static_cast<double>(m) * group.memory_bytes_per_token);
    if (touched > 0) t += routed_expert_gemms(group, touched, copies);
    for (const LayerMatmul& mm : group.matmuls) {
      if (mm.expert && (touched > 0 || routed_experts_apart_)) continue;
      t += compute_.matmul(m, mm.n, mm.k, 1.0, weight_bytes_, serving_row_tile(m));
    }
    return t;
  };
  const double copies = static_cast<double>(m) * shape.experts_per_token;
  Picoseconds total;
  bool first_expert_layer = shape.first_expert_layer;  // in the stage's first expert group
  for (const LayerGroup& group : shape.groups) {
    const bool experts = !routed_experts_apart_ && has_routed_experts(shape, group);
    if (!experts) {
      total += Picoseconds(layer(group, 0, copies).count() * group.layers);
    } else if (!fake_weights_) {
      const ExpertRankLoad busiest = busiest_expert_rank(
          shape.num_experts, shape.experts_per_token, shape.expert_parallel, m);
      total += Picoseconds(layer(group, busiest.experts, busiest.copies).count() * group.layers);
    } else {
      // The model's first expert layer: every token to the same k experts (experts 0 .. k - 1,
      // the first rank holding min(k, E / EP) of them, m copies each); the later ones: every slot
      // to expert 0.
      const int first = first_expert_layer ? 1 : 0;
      first_expert_layer = false;
      const int held = std::min(shape.experts_per_token, shape.num_experts / shape.expert_parallel);
      total += Picoseconds(layer(group, held, static_cast<double>(m) * held).count() * first +
                           layer(group, 1, copies).count() * (group.layers - first));
    }
  }
  return total;
}

Picoseconds IterationModel::stage_time(const InferenceShape& shape, const IterationWork& work,
                                       const ExtraDecodeQueries& extra) const {
  const int64_t m = work.tokens;
  Picoseconds matmuls;
  const auto stage = static_cast<size_t>(&shape - shapes_.data());
  if (m <= kMemoTokens) {
    int64_t& memo = matmul_memo_[stage][m];
    if (memo < 0) memo = layer_matmuls(shape, m).count();
    matmuls = Picoseconds(memo);
  } else {
    matmuls = layer_matmuls(shape, m);
  }
  Picoseconds total =
      matmuls +
      Picoseconds((layer_overhead_.count() + shape.allreduces_per_layer * allreduce(m).count()) *
                  shape.layers);
  if (shape.compressed_entry_bytes > 0) {
    return total + compressed_attention(shape, work) + output_projection(shape, work);
  }
  // Decode attention reads the KV cache: the grouped kernel each KV head once, the masked kernel
  // once per query head (the reads after a KV head's first at the fitted re-read cost), latent
  // attention the latent once for all heads; its absorbed scoring can be compute bound instead.
  const double heads_read =
      grouped_ ? shape.kv_heads
               : shape.kv_heads + (shape.query_heads - shape.kv_heads) * kv_reread_fraction_;
  // One layer's attention over `pairs` prompt query-key pairs (`per_key`: their sum over chunks
  // of a chunk's pairs over its keys) and `context` decoding keys, `reread` of which another
  // thread block read already (beams reading their request's shared prompt blocks), at the
  // re-read cost, and `extra_pairs` more decoding query-key pairs over the same keys (a
  // speculative verification's draft tokens).
  const auto attention = [&](double pairs, double per_key, double context, double reread,
                             double extra_pairs) {
    Picoseconds t;
    if (pairs > 0) {
      t += compute_.prompt_attention(pairs * shape.attention_flops_per_pair,
                                     per_key * shape.attention_flops_per_pair, shape.head_dim);
    }
    if (context > 0) {
      const double read = reread > 0 ? context - reread * (1 - kv_reread_fraction_) : context;
      const double bytes = shape.latent_kv_width > 0
                               ? read * shape.latent_kv_width * shape.kv_element_bytes
                               : read * 2 * heads_read * shape.head_dim * shape.kv_element_bytes;
      t += std::max(compute_.memory_bound(bytes),
                    compute_.fused_attention((context + extra_pairs) *
                                             shape.decode_attention_flops_per_pair));
    }
    return t;
  };
  const int64_t windowed = shape.windowed_layers;
  total +=
      Picoseconds(attention(work.attention_pairs, work.attention_pairs_per_key, work.decode_context,
                            work.beam_shared_rereads, extra.pairs)
                      .count() *
                  (shape.layers - windowed));
  if (windowed > 0) {
    total += Picoseconds(attention(work.window_attention_pairs, work.window_attention_pairs_per_key,
                                   work.window_decode_context, 0, extra.window_pairs)
                             .count() *
                         windowed);
  }
  return total + output_projection(shape, work);
}

// Out of line: inlined into stage_time it cost every other model's iteration about 8% (the
// hour-long serving benchmark, results/serve_bench.md).
[[gnu::noinline]] Picoseconds IterationModel::compressed_attention(const InferenceShape& shape,
                                                                  const IterationWork& work) const {
  Picoseconds total;
  for (const LayerGroup& group : shape.groups) {
    total += Picoseconds(
        compressed_attention_time(compute_, shape, work, group.compress_ratio).count() *
        group.layers);
  }
  return total;
}

Picoseconds IterationModel::output_projection(const InferenceShape& shape,
                                              const IterationWork& work) const {
  if (shape.vocab_shard == 0 || work.logits == 0) return Picoseconds();
  return sixteen_.matmul(work.logits, shape.vocab_shard, shape.hidden);
}

Picoseconds IterationModel::iteration(const IterationWork& work,
                                      const ExtraDecodeQueries& extra) const {
  Picoseconds total = iteration_overhead_;
  if (work.static_prefill) total += static_prefill_overhead_;
  return total + forward(work, extra);
}

Picoseconds IterationModel::forward(const IterationWork& work,
                                    const ExtraDecodeQueries& extra) const {
  CLUSTERSIM_CHECK(work.tokens > 0, "an empty iteration");
  CLUSTERSIM_CHECK(
      (work.attention_pairs > 0) == (work.attention_pairs_per_key > 0) &&
          (work.window_attention_pairs > 0) == (work.window_attention_pairs_per_key > 0),
      "prompt pairs without their keys");
  Picoseconds total;
  for (const InferenceShape& shape : shapes_) total += stage_time(shape, work, extra);
  total += Picoseconds(send(work.tokens).count() * static_cast<int64_t>(shapes_.size() - 1));
  if (work.beam_width > 1) total += compute_.memory_bound(beam_search_bytes(work.logits, vocab_));
  return total;
}

}  // namespace clustersim
