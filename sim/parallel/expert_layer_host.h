// The host's share of an expert layer's passes when Megatron-Core runs it eagerly (no full-
// iteration CUDA graph). The token dispatcher copies the tokens per expert from the device to the
// host before its all-to-all (the split sizes and the grouped GEMMs' rows are host arguments), in
// the forward only: the backward's all-to-alls and grouped GEMMs reuse the forward's split sizes,
// kept on the host, and HybridEP's and DeepEP's backward kernels the forward's handle
// (NVIDIA/Megatron-LM core_v0.16.0, 3bec9aa: token_dispatcher.py MoEAlltoAllTokenDispatcher calls
// _maybe_dtoh_and_synchronize from its forward methods only, tensor_parallel/mappings.py
// _AllToAll.backward swaps the saved host split lists; fused_a2a.py HybridEPDispatch /
// HybridEPCombine.backward and FusedDispatch / FusedCombine.backward pass ctx.handle). So a
// forward synchronises: the GPU drains its queue and then waits while the host issues the kernels
// after the copy. A forward the GPU runs in G therefore takes
//   G + max(sync, issue - G):
// at least the exposed `sync` on top of the GPU's work (the host launching each local expert's
// quantization and GEMMs, too short to hide its launches, after the copy), and never less than the
// host's `issue` time for the whole pass (small micro-batches are host-bound). A backward has no
// sync, only the issue floor: G + max(0, issue - G). A recomputed forward (full recomputation, or
// recompute_modules' "moe", whose checkpoint reruns MoELayer.forward from the router on:
// moe_layer.py) synchronises again. Dense layers have no such copy: their host runs ahead of the
// GPU and its launches hide behind the kernels. Expert layers replayed from CUDA graphs
// (full-iteration graphs, or per-layer ones under a token-dropping router's static shapes: no
// copy, no launches) remove both terms. A router that pads every expert to its capacity
// (job.expert_routing pad_to_capacity) has static split sizes too: Megatron-Core's all-to-all
// dispatcher then builds them on the host and copies nothing (core_v0.14.0 token_dispatcher.py,
// MoEAlltoAllTokenDispatcher: preprocess returns torch.full counts under drop_and_pad, and
// _maybe_dtoh_and_synchronize neither copies nor synchronises), so an eager padded layer has no
// sync: its host runs ahead as a dense layer's does, and only the issue floor is left,
// max(G, issue).
#pragma once

#include "sim/io/schema/gpu.pb.h"
#include "sim/parallel/layer_times.h"
#include "sim/util/units.h"

namespace clustersim {

// Per pass of one expert layer.
struct ExpertLayerHost {
  Picoseconds sync;   // exposed after a forward's synchronisation (a backward has none)
  Picoseconds issue;  // the host's time for the whole pass, forward or backward
};
// From the GPU's fields (absent: 0): sync = `expert_layer_sync_us_per_expert` x `local_experts`
// (the routed experts one GPU holds; 1 where each grouped GEMM is one launch for all of them,
// parallelism.single_launch_grouped_experts), none where the dispatcher's split sizes are
// `static_splits` (padded to capacity); issue = `expert_layer_issue_us`.
ExpertLayerHost expert_layer_host(const schema::Gpu& gpu, int64_t local_experts,
                                  bool static_splits);

// The time the host adds to a forward the GPU runs in `gpu_time`: max(sync, issue - gpu_time).
Picoseconds forward_host_exposed(Picoseconds gpu_time, const ExpertLayerHost& host);
// The time the host adds to a backward the GPU runs in `gpu_time`: max(0, issue - gpu_time).
Picoseconds backward_host_exposed(Picoseconds gpu_time, const ExpertLayerHost& host);

// `layer` (an expert layer's times) with the host's exposed time added to the compute of its
// forward, its backward and, when `forward_rerun` (full recomputation or recompute_modules'
// RECOMPUTE_MOE), its recomputed forward (which synchronises again); the all-to-all phases are left
// alone (the host's wait hides no communication), the all-to-alls' places in the passes move after
// the wait; each pass's PassShares::host_wait holds it.
void add_expert_layer_host(const ExpertLayerHost& host, bool forward_rerun, LayerTimes* layer);

}  // namespace clustersim
