// Attention kernels per context-parallel variant; the ring's on the engine.
#include "sim/parallel/context_attention.h"

#include <algorithm>

#include "sim/net/collective.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/ring_attention.h"
#include "sim/parallel/torch_ring_sums.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;

struct KernelPair {
  Picoseconds forward, backward;
};

// `k` with the inputs (FP8 or 16-bit), kernel library, dropout and tile rows of `op`.
AttentionKernel of(const LayerOp& op, AttentionKernel k) {
  k.fp8 = op.fp8;
  k.library = op.library;
  k.dropout = op.dropout;
  k.tile_rows = op.tile_rows;
  return k;
}

KernelPair time_kernel(const ComputeModel& compute, const LayerOp& op, const AttentionKernel& k) {
  const AttentionKernel kernel = of(op, k);
  return {compute.attention_forward(kernel), compute.attention_backward(kernel)};
}

// Rank r's step kernels of a ring over `cp` ranks (ring_attention.h): c-token chunks.
std::vector<AttentionKernel> ring_steps(const LayerOp& op, int cp, int r) {
  const int d = static_cast<int>(op.k);
  if (!op.causal) {
    return std::vector<AttentionKernel>(cp, {op.count, op.n / cp, op.n / cp, d, false});
  }
  const int64_t c = op.n / (2 * cp);
  std::vector<AttentionKernel> steps{{op.count, 2 * c, 2 * c, d, true}};
  for (int i = 1; i < cp; ++i) {
    steps.push_back(i <= r ? AttentionKernel{op.count, 2 * c, c, d, false}
                           : AttentionKernel{op.count, c, 2 * c, d, false});
  }
  return steps;
}

AttentionTimes ring_times(const LayerOp& op, const ComputeModel& compute,
                          GroupCollectives* context) {
  const int cp = static_cast<int>(context->gpus().size());
  RingAttentionPass forward{{}, op.bytes}, backward{{}, 2 * op.bytes};  // backward: K/V + dK/dV
  for (int r = 0; r < cp; ++r) {
    forward.steps.emplace_back();
    backward.steps.emplace_back();
    for (const AttentionKernel& k : ring_steps(op, cp, r)) {
      const KernelPair t = time_kernel(compute, op, k);
      forward.steps.back().push_back(t.forward);
      backward.steps.back().push_back(t.backward);
    }
  }
  const RingAttentionTime f = simulate_ring_attention(context->topology(), context->gpus(), forward);
  const RingAttentionTime b =
      simulate_ring_attention(context->topology(), context->gpus(), backward);
  return {f.compute, b.compute, f.exposed(), b.exposed()};
}

// The slowest rank's kernels against the all-gathered keys.
AttentionTimes gathered_times(const LayerOp& op, const ComputeModel& compute, int cp) {
  const int d = static_cast<int>(op.k);
  AttentionTimes t;
  for (int r = 0; r < cp; ++r) {
    KernelPair rank;
    if (op.causal) {
      const int64_t c = op.n / (2 * cp);
      const KernelPair early = time_kernel(compute, op, {op.count, c, (r + 1) * c, d, true});
      const KernelPair late = time_kernel(compute, op, {op.count, c, (2 * cp - r) * c, d, true});
      rank = {early.forward + late.forward, early.backward + late.backward};
    } else {
      rank = time_kernel(compute, op, {op.count, op.m, op.n, d, false});
    }
    t.forward = std::max(t.forward, rank.forward);
    t.backward = std::max(t.backward, rank.backward);
  }
  return t;
}

// PyTorch's ring over all-gathered keys and values (parallelism.proto TORCH_ALL_GATHER), the
// slowest rank's: the load-balanced ring's step kernels (ring_steps); the all-gather, issued
// before the first step and waited for at the second, hidden behind the first step's kernel only,
// which runs slowed on the SMs the collective's CTAs hold meanwhile (collective_sm_contention.h);
// the FP32 sums of torch_ring_sums; in the backward the keys' and values' FP32 gradients (twice
// the 16-bit block) passed to the next rank after each step, hidden behind the next step's kernel,
// the last step's not.
AttentionTimes torch_gathered_times(const LayerOp& op, const ComputeModel& compute,
                                    GroupCollectives* context) {
  const std::vector<int>& ring = context->gpus();
  const int cp = static_cast<int>(ring.size());
  const int sms = compute.gpu().streaming_multiprocessors();
  const Picoseconds gather = context->time(CollectiveOp::kAllGather, op.bytes * cp);
  const Picoseconds pass = collective_time(
      context->topology(), {CollectiveOp::kSendRecv, {ring[0], ring[1]}, 2 * op.bytes});
  const auto hidden_behind = [](Picoseconds transfer, Picoseconds kernel) {
    return std::max(Picoseconds(0), transfer - kernel);
  };
  // Elements of each FP32 sum: the rank's (batch, head) rows over its 2 chunks' tokens.
  const double local = static_cast<double>(op.count) * static_cast<double>(op.k) *
                       static_cast<double>(op.n / cp);
  AttentionTimes slowest;
  for (int r = 0; r < cp; ++r) {
    AttentionTimes rank;
    const std::vector<AttentionKernel> steps = ring_steps(op, cp, r);
    for (size_t i = 0; i < steps.size(); ++i) {
      const AttentionKernel& k = steps[i];
      const KernelPair t = time_kernel(compute, op, k);
      const TorchRingSums sums =
          torch_ring_sums(k, local, static_cast<int>(i), static_cast<int>(steps.size()));
      rank.forward += t.forward + compute.memory_bound(sums.forward_bytes);
      rank.backward += t.backward + compute.memory_bound(sums.backward_bytes);
      if (i == 0) {
        rank.forward_exposed = exposed_beside_compute(gather, t.forward, sms);
        rank.backward_exposed = exposed_beside_compute(gather, t.backward, sms);
      } else {
        rank.backward_exposed += hidden_behind(pass, t.backward);
      }
    }
    rank.backward_exposed += pass;
    if (rank.forward + rank.forward_exposed > slowest.forward + slowest.forward_exposed) {
      slowest.forward = rank.forward;
      slowest.forward_exposed = rank.forward_exposed;
    }
    if (rank.backward + rank.backward_exposed > slowest.backward + slowest.backward_exposed) {
      slowest.backward = rank.backward;
      slowest.backward_exposed = rank.backward_exposed;
    }
  }
  return slowest;
}

}  // namespace

AttentionTimes attention_times(const LayerOp& op, const ComputeModel& compute,
                               GroupCollectives* context, s::ContextParallelComm comm) {
  const int cp = context ? static_cast<int>(context->gpus().size()) : 1;
  if (op.window > 0 && op.chunked) {
    // Chunks folded into the batch, the sequence padded to whole chunks (NVIDIA/NeMo v2.4.0
    // nemo/collections/llm/gpt/model/llama4_utils.py chunkify): one causal kernel over
    // ceil(m / window) chunks of window tokens per (sequence, head).
    CLUSTERSIM_CHECK(cp == 1, "chunked attention under context parallelism");
    const int64_t chunks = (op.m + op.window - 1) / op.window;
    const KernelPair t = time_kernel(
        compute, op, {op.count * chunks, op.window, op.window, static_cast<int>(op.k), true});
    return {t.forward, t.backward, {}, {}};
  }
  if (op.window > 0) {
    // A sliding window: the first window's causal square, then every later query against its
    // window's keys (the band's exact pairs; context parallelism is refused with it).
    CLUSTERSIM_CHECK(cp == 1, "sliding-window attention under context parallelism");
    const int d = static_cast<int>(op.k);
    const KernelPair first = time_kernel(compute, op, {op.count, op.window, op.window, d, true});
    const KernelPair band =
        time_kernel(compute, op, {op.count, op.m - op.window, op.window, d, false});
    // cuDNN's FP8 backward skips no tile outside the window (LayerOp::backward_unwindowed).
    const Picoseconds backward =
        op.backward_unwindowed
            ? compute.attention_backward(of(op, {op.count, op.m, op.n, d, true}))
            : first.backward + band.backward;
    return {first.forward + band.forward, backward, {}, {}};
  }
  if (cp == 1 || comm == s::ALL_TO_ALL) {
    const KernelPair k =
        time_kernel(compute, op, {op.count, op.m, op.n, static_cast<int>(op.k), op.causal});
    return {k.forward, k.backward, {}, {}};
  }
  if (comm == s::ALL_GATHER) return gathered_times(op, compute, cp);
  if (comm == s::TORCH_ALL_GATHER) return torch_gathered_times(op, compute, context);
  return ring_times(op, compute, context);
}

}  // namespace clustersim
