// How an attention-data-parallel replica's MoE layers move every GPU's tokens to the experts and
// the experts' outputs back: the choice between the two ways TensorRT-LLM's CutlassFusedMoE has
// under enable_attention_dp, and their times on the replica's topology.
//
// MOE_ALL_GATHER (fused_moe_cutlass.py's run_post_quant_allgather, then reducescatter): each GPU's
// tokens, quantized, with their k expert ids and weights, are all-gathered to every GPU (sized by
// each rank's tokens, all_rank_num_tokens); the 16-bit outputs of all gathered tokens are
// reduce-scattered back. NCCL collectives, simulated at 1, 2, 4, ... gathered tokens and
// interpolated on the sum of the GPUs' tokens.
//
// MOE_ALL_TO_ALL (the MNNVL two-sided kernels of NVIDIA/TensorRT-LLM tensorrt_llm/_mnnvl_utils.py,
// MnnvlMoe): a prepare kernel exchanges each GPU's per-destination counts
// (mnnvl_moe_alltoallv_prepare_without_allgather), one kernel writes each token's quantized
// activations, block scales, expert ids and weights once into every GPU that holds at least one
// of its k experts (mnnvl_moe_alltoallv: a token with two experts on one GPU goes there once),
// and after the experts one kernel writes each such copy's 16-bit partial output back to the
// token's GPU (mnnvl_moe_alltoallv_combine), which sums them. The kernels copy through the
// NVSwitch into the peers' memory, so the exchange is simulated as an all-to-all by dispatcher
// kernels (net/collective.h) whose per-GPU send buffer S is the largest of any GPU's copies sent
// to or received from the others, scaled to a buffer that holds the GPU's own share too
// (S (n - 1) / n leaves each GPU): a lockstep exchange ends when its busiest GPU has sent and
// received. Tokens route uniformly at random: a token reaches
//   D = n (1 - C(E - E / n, k) / C(E, k))
// of the n GPUs on average (E experts, E / n a GPU, k distinct ones a token), and each GPU's
// copies spread evenly over the n GPUs, its own included. With TensorRT-LLM's fake weights every
// token goes to expert 0, on GPU 0 (iteration_model.h: IterationInputs::fake_weights).
//
// Each kernel (all-gather, reduce-scatter; prepare, dispatch, combine) carries the runtime's
// allreduce_overhead_us, its fitted launch cost of a collective.
//
// TensorRT-LLM 1.0 and 1.1 pick MOE_ALL_TO_ALL when attention DP runs with moe_ep_size above the
// model's experts_per_token and MnnvlMemory.supports_mnnvl() (every NVLink of the GPU up: an
// NVSwitch baseboard), else MOE_ALL_GATHER (fused_moe_cutlass.py's select_alltoall_method_type /
// enable_alltoall; NVIDIA/TensorRT-LLM#8950 dropped the EP > top-k condition in November 2025,
// after the 1.1 branch).
//
// Immutable after construction; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/net/topology.h"
#include "sim/util/units.h"

namespace clustersim {

// The exchange TensorRT-LLM 1.0 / 1.1 runs for `requested` (UNSPECIFIED: its own choice, above).
schema::MoeTokenExchange resolve_moe_token_exchange(schema::MoeTokenExchange requested,
                                                    int expert_parallel, int experts_per_token,
                                                    schema::GpuInterconnect interconnect);

// Average GPUs a token's k distinct experts lie on, E experts split evenly over n GPUs.
// Requires: n >= 1 divides experts, 1 <= k <= experts.
double moe_destinations_per_token(int experts, int experts_per_token, int ranks);

struct MoeTokenExchangeInputs {
  schema::MoeTokenExchange kind = schema::MOE_ALL_GATHER;  // resolved (not UNSPECIFIED)
  const Topology* topology = nullptr;                      // holds GPUs 0 .. ranks - 1
  int ranks = 2;
  double dispatch_bytes_per_token = 0;  // activations, block scales, k expert ids and weights
  double combine_bytes_per_token = 0;   // one 16-bit output row
  int experts = 1;
  int experts_per_token = 1;
  bool fake_weights = false;             // every token to expert 0 (GPU 0)
  Picoseconds overhead;                  // each kernel's
  int64_t most_tokens_per_gpu = 1;       // the largest a GPU's tokens reach (sampling range)
};

class MoeTokenExchange {
 public:
  explicit MoeTokenExchange(const MoeTokenExchangeInputs& in);

  schema::MoeTokenExchange kind() const { return kind_; }
  // One MoE layer's token exchange for the GPUs' token counts (tokens[g] on GPU g).
  // Requires: tokens.size() == ranks.
  Picoseconds dispatch(const std::vector<int64_t>& tokens) const;
  Picoseconds combine(const std::vector<int64_t>& tokens) const;

  // The all-to-all's token copies (dispatch; the combine returns as many) each GPU sends to and
  // receives from the other GPUs: expected values under uniform routing.
  struct Copies {
    std::vector<double> sent, received;
  };
  Copies copies(const std::vector<int64_t>& tokens) const;
  double destinations_per_token() const { return destinations_; }
  // What a token sends to its experts, and each copy's output back, in bytes (the inputs').
  double dispatch_bytes_per_token() const { return dispatch_bytes_per_token_; }
  double combine_bytes_per_token() const { return combine_bytes_per_token_; }

 private:
  // The all-to-all's per-GPU send buffer, in token copies, for the busiest GPU's traffic.
  int64_t all_to_all_buffer_copies(const std::vector<int64_t>& tokens) const;

  schema::MoeTokenExchange kind_;
  int ranks_;
  bool fake_weights_;
  double dispatch_bytes_per_token_, combine_bytes_per_token_;
  double destinations_ = 1;
  Picoseconds prepare_;                     // MOE_ALL_TO_ALL: the count exchange
  std::vector<Picoseconds> out_, back_;     // at 2^i gathered tokens / buffer copies
};

}  // namespace clustersim
