// One attention-data-parallel replica on the engine (TensorRT-LLM's PyTorch executor with
// enable_attention_dp): n GPUs, each with its own scheduler, queues and KV cache (a Replica in
// lockstep mode, replica.h), iterating together, the iteration timed by
// AttentionDataParallelModel from every GPU's batch.
//
// Requests wait in the group's queue until the next iteration boundary, when they are assigned to
// GPUs as TensorRT-LLM's DefaultADPRequestAssigner does (NVIDIA/TensorRT-LLM@786ebfd
// tensorrt_llm/_torch/pyexecutor/scheduler/adp_request_assigner.py): at most n x max_batch
// requests active in all (the executor fetches no more), each GPU filled up to
// expected = max(ceil((active + new) / n), the most active on one GPU); new requests, longest
// prompt first, each to the GPU with the fewest active prompt tokens (a GPU's active requests'
// prompt lengths summed), then the fewest active requests, then the lowest index; a GPU reaching
// `expected` takes no more this round. A request stays on its GPU until it finishes.
// Each GPU's max_batch and token budget are its own (TensorRT-LLM's per-rank max_batch_size and
// max_num_tokens). The group iterates while any GPU has work; a GPU without any runs the dummy
// request. Deterministic. Borrows as Replica does; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/serve/attention_data_parallel.h"
#include "sim/serve/replica.h"

namespace clustersim {

class AttentionDataParallelGroup final : public EventHandler, public Settler {
 public:
  // `settings`: one GPU's (kv_blocks, max_batch and max_tokens per GPU), continuous batching;
  // its on_outstanding is told the group's outstanding().
  AttentionDataParallelGroup(Simulation* sim, const AttentionDataParallelModel* model,
                             const ReplicaSettings& settings, const std::vector<Request>* requests,
                             std::vector<RequestRecord>* records);
  AttentionDataParallelGroup(const AttentionDataParallelGroup&) = delete;
  AttentionDataParallelGroup& operator=(const AttentionDataParallelGroup&) = delete;

  // Request `index` arrives now; it is assigned to a GPU at the next iteration boundary (an idle
  // group forms one once every event of this instant has run).
  void arrive(int32_t index);

  // Requests not yet assigned, and those waiting or running on the GPUs.
  int64_t outstanding() const;
  Picoseconds busy() const { return busy_; }  // time spent iterating
  // The GPUs' KV caches in use x time, integrated, averaged over the GPUs.
  double kv_block_seconds() const;
  int64_t iterations() const { return iterations_; }
  int64_t preemptions() const;
  int64_t accepted_tokens() const { return 0; }
  int64_t verifications() const { return 0; }
  // The largest share of one GPU's KV cache held or promised at once.
  double peak_committed_fraction() const;
  int64_t peak_batched() const;  // the sum of its GPUs' (Replica::peak_batched)
  // The GPU request `index` was assigned to (-1: not yet).
  int gpu_of(int32_t index) const;

 private:
  void on_event(uint64_t tag) override;
  void settle() override { try_start(); }
  void try_start();
  void assign_new_requests();

  Simulation* sim_;
  const AttentionDataParallelModel* model_;
  const std::vector<Request>* requests_;
  int max_batch_ = 0;
  std::function<void(int64_t outstanding)> on_outstanding_;  // ReplicaSettings::on_outstanding
  std::vector<std::unique_ptr<Replica>> gpus_;
  std::vector<int64_t> active_requests_, active_prompt_tokens_;  // per GPU
  std::vector<int32_t> new_;           // arrived, not yet assigned, in arrival order
  std::vector<int16_t> assigned_gpu_;  // per request, -1 none (grown as requests arrive)
  std::vector<IterationWork> works_;   // the current iteration's, per GPU
  bool iterating_ = false;
  Picoseconds took_;  // the current iteration's
  Picoseconds busy_;
  int64_t iterations_ = 0;
};

}  // namespace clustersim
