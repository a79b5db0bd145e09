// One serving replica on the engine: its queue of waiting requests, its scheduler and its KV
// cache. Each iteration is one event: the scheduler forms the batch, the iteration model times
// it, and at its end every sequence in it advances (prompt chunks prefilled, one token decoded).
//
// Continuous batching (in-flight, as vLLM and TensorRT-LLM's executor): every iteration decodes
// one token of each running sequence and fills the rest of the token budget with prompt tokens
// of running then waiting requests (FIFO), whole prompts or, with chunked prefill, chunks; at
// most max_batch sequences run. The KV cache is paged: a sequence holds ceil(tokens / block)
// blocks, or at most the window's in a cyclic cache (ReplicaSettings::kv_window_tokens).
// Admission against it follows the capacity policy (runtime.proto CapacityPolicy):
// MAX_UTILIZATION admits a request when its prompt's blocks are free; when a decoding sequence
// needs a block and none is free, the most recently admitted sequence is preempted (its blocks
// freed, it waits at the head of the queue and later recomputes its prompt and the tokens it had
// generated). GUARANTEED_NO_EVICT admits the waiting head only when the blocks of its whole
// sequence can be promised to it beside the running sequences' promises (free blocks - promised
// ones); a sequence then grows into its promise and never waits for a block, none is preempted.
// Prefix caching (continuous): the whole KV blocks of a request's shared prefix that its replica
// holds (prefix_cache.h) are not prefilled again: the request is admitted with them in its cache
// (at most its prompt's tokens less one, whose logits it must compute, as vLLM's
// get_computed_blocks caps a hit) and prefills the rest, the rest's queries attending over the
// whole context. The prefix blocks it then computes become shared the iteration they fill (a
// block another sequence made resident meanwhile replaces its own copy, as SGLang's radix cache
// does). Shared blocks count once in the pool; unused ones count as free until evicted.
// With speculative decoding (ReplicaSettings::speculative), a decoding sequence's iteration
// verifies k draft tokens and keeps 1 to k + 1 tokens; it reserves blocks for k + 1 new tokens.
// Static batching (TensorRT-LLM's gptSession): when idle, the replica takes up to max_batch
// waiting requests that fit its memory (optionally waiting batch_wait for more), prefills all
// their prompts in one iteration, then decodes the whole batch until its longest output is done;
// finished sequences stay in the batch as padding.
//
// Disaggregated serving (disaggregated_simulation.h): a prefill replica hands each request off
// when its prompt is done and its first token produced, keeping its blocks until the KV cache has
// been sent (release()); a decode replica receives requests already prefilled (accept_prefilled()),
// which join its batch once it has the blocks for their KV cache.
//
// Attention data parallelism (attention_dp_group.h): a replica in lockstep mode is one GPU of a
// group, which forms every GPU's batch (form_step()), times the group's iteration and ends it on
// every GPU (end_step()); such a replica schedules no event of its own.
//
// Borrows the simulation, iteration model, requests and records, which must outlive it. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/serve/cuda_graph_padding.h"
#include "sim/serve/iteration_model.h"
#include "sim/serve/prefix_cache.h"
#include "sim/serve/speculative_decoding.h"
#include "sim/serve/traffic.h"

namespace clustersim {

// What happened to one request.
struct RequestRecord {
  Picoseconds first_token;  // its first output token
  Picoseconds finish;       // its last output token
  Picoseconds kv_transfer;  // disaggregated: its KV cache's trip from prefill to decode
  int32_t preemptions = 0;
  // Prompt tokens found in the prefix cache when it was admitted (its last admission before its
  // first token: a preempted request's re-admission after it counts no more).
  int32_t cached_tokens = 0;
  bool started = false;  // first_token is set
  bool done = false;     // finish is set
};

struct ReplicaSettings {
  schema::Batching batching = schema::CONTINUOUS;
  schema::CapacityPolicy capacity_policy = schema::MAX_UTILIZATION;  // continuous
  int max_batch = 256;
  int64_t max_tokens = 8192;  // per iteration (continuous)
  bool chunked_prefill = false;
  int block_tokens = 64;
  int64_t kv_blocks = 0;                // continuous: the KV-cache pool
  double static_free_bytes = 0;         // static: memory for a batch's KV cache and activations
  double kv_bytes_per_token = 0;
  double activation_bytes_per_token = 0;
  int attention_window = 0;             // the model's sliding window in tokens (0: none)
  // Continuous, one beam: the most tokens a sequence's KV cache holds, the window of a cyclic
  // cache (cyclic_kv_cache.h); 0: its whole context. A sequence longer than it reuses no prefix
  // blocks (its oldest ones are overwritten).
  int kv_window_tokens = 0;
  bool attention_window_chunked = false;  // the window is a block (chunked attention), not a band
  // Compressed sparse attention (continuous, one beam, no cyclic cache): its indexer's top-k
  // (IterationWork::selected_entries; 0: none), and the blocks every sequence holds besides its
  // tokens' whatever its length (its windows: InferenceShape::kv_bytes_per_sequence in blocks of
  // block_tokens x kv_bytes_per_token bytes, rounded up).
  int index_topk = 0;
  int64_t sequence_blocks = 0;
  Picoseconds batch_wait;               // static
  bool prefix_caching = false;          // continuous: reuse resident prefix blocks
  // Beams per request (sim/serve/beam_search.h): each decoding request runs one token per beam;
  // its KV cache shares the prompt's full blocks (continuous) or is copied per beam (static).
  int beam_width = 1;
  // Continuous, prefill pool: called with the request and the KV blocks it holds when its
  // prompt is done and its first token produced (unless that was its only token); the replica
  // forgets it, its blocks stay taken until release().
  std::function<void(int32_t request, int64_t blocks)> hand_off;
  // Called with a request when its last token is produced (its record written); absent: none.
  std::function<void(int32_t request)> on_finish;
  // Called with outstanding() when it changed: a request arrived or came prefilled, or an
  // iteration ended that some left (finished, or handed off); absent: none. (The balancer's view,
  // least_loaded.h; a lockstep GPU's group reports its own.)
  std::function<void(int64_t outstanding)> on_outstanding;
  // Continuous, colocated: each decoding sequence verifies k draft tokens per iteration and keeps
  // the tokens accepted (speculative_decoding.h), its k extra KV slots reserved; null: off.
  const SpeculativeDecoder* speculative = nullptr;
  // Continuous, one beam, no speculative decoding, not lockstep: the captured CUDA graphs an
  // iteration of decoding sequences alone is padded to (cuda_graph_padding.h); default: none.
  // (A lockstep GPU's are its group's: AttentionDataParallelModel.)
  CudaGraphPadding graphs;
  // Attention data parallelism (attention_dp_group.h): the replica is one GPU of a group that
  // forms and times its iterations with the others' in lockstep (form_step(), end_step()); it
  // never starts an iteration itself. Continuous batching, colocated. false: it iterates alone.
  bool lockstep = false;
};

class Replica final : public EventHandler, public Settler {
 public:
  Replica(Simulation* sim, const IterationModel* model, const ReplicaSettings& settings,
          const std::vector<Request>* requests, std::vector<RequestRecord>* records);
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Request `index` arrives now. An idle replica starts its next iteration once every event of
  // this instant has run (so requests arriving together are batched together). Cost: O(1).
  void arrive(int32_t index);
  // Request `index`, prefilled elsewhere with its first token produced, arrives with its KV cache
  // (continuous batching). It waits for the blocks of its prompt and next token, then decodes.
  void accept_prefilled(int32_t index);
  // Frees `blocks` handed off earlier (their KV cache has been sent).
  void release(int64_t blocks);

  // Forms the next batch into step_work(); false when there is nothing to run (a lockstep GPU's
  // group may still iterate: it then runs the dummy request). Then end_step() with the
  // iteration's time, when it is over. A replica iterating alone calls both itself; a lockstep
  // one (ReplicaSettings::lockstep) is called by its group.
  bool form_step();
  const IterationWork& step_work() const { return work_; }
  void end_step(Picoseconds took);

  int64_t outstanding() const { return static_cast<int64_t>(waiting_.size() + running_.size()); }
  Picoseconds busy() const { return busy_; }           // time spent iterating
  double kv_block_seconds() const { return kv_block_s_; }  // blocks held x time, integrated
  int64_t iterations() const { return iterations_; }
  int64_t preemptions() const { return preemptions_; }
  int64_t prompt_iterations() const { return prompt_iterations_; }  // with prompt tokens
  // Continuous: KV blocks held by sequences, shared prefix blocks counted once (unused cached
  // ones not), and the prefix blocks resident (used or not).
  int64_t blocks_in_use() const { return settings_.kv_blocks - free_blocks_; }
  const PrefixCache& prefix_cache() const { return cache_; }
  // Speculative decoding: tokens kept by verifications, and verifications (sequence iterations).
  int64_t accepted_tokens() const { return accepted_tokens_; }
  int64_t verifications() const { return verifications_; }
  // The most requests its batches held at once: at most max_batch_size, fewer where the KV cache
  // admits fewer.
  int64_t peak_batched() const { return peak_batched_; }
  // Continuous: the largest share of the KV cache held or promised at once (static: 0).
  double peak_committed_fraction() const {
    return settings_.kv_blocks > 0 ? static_cast<double>(peak_committed_) /
                                         static_cast<double>(settings_.kv_blocks)
                                   : 0;
  }

 private:
  struct Sequence {
    int32_t request = 0;
    int32_t prompt = 0;     // tokens to prefill: the input, plus the output after a preemption
    int32_t prefilled = 0;  // of prompt
    int32_t cached = 0;     // tokens in the KV cache
    int32_t generated = 0;  // output tokens so far
    int32_t chunk = 0;      // prompt tokens in the current iteration
    int32_t shared = 0;     // of blocks, its prefix's first ones, in the prefix cache
    bool in_batch = false;  // decodes in the current iteration
    // Speculative: tokens the current iteration's verification keeps (at most
    // kMaxDraftTokens + 1); in in_batch's padding.
    int16_t accepting = 0;
    int64_t blocks = 0;     // continuous: KV blocks held
    int64_t promised = 0;   // GUARANTEED_NO_EVICT: blocks promised to it, not yet held
    uint64_t admitted = 0;  // admission order
    // Speculative: verifications so far.
    int32_t rounds = 0;
    bool decoding() const { return prefilled == prompt; }
  };

  bool no_evict() const { return settings_.capacity_policy == schema::GUARANTEED_NO_EVICT; }
  void on_event(uint64_t tag) override;
  void settle() override { try_start(); }
  void try_start();
  // Forms the next iteration into work_; false when there is nothing to run.
  bool form_continuous();
  bool form_static();
  bool admit_continuous(int64_t* budget);
  // Admits the waiting head, prefilled elsewhere, to decode in this iteration.
  bool admit_prefilled(int64_t* budget);
  // The tokens `w` will hold here: its prompt and output (a prefill replica's: its prompt).
  int64_t whole_sequence_tokens(const Sequence& w) const;
  // GUARANTEED_NO_EVICT: promises `w` the blocks of every token it will hold here; false when
  // the free blocks not promised to others are short.
  bool promise_whole(Sequence* w);
  // Grows `s`'s blocks to hold `tokens`, from its promise first; false when the pool is short.
  // Run for every decoding sequence at every iteration: always inlined (the compiler's own choice
  // changes with unrelated edits of its callers; a call costs the serving sweep 6-10%).
  [[gnu::always_inline]] inline bool reserve(Sequence* s, int64_t tokens);
  // KV blocks of `s` holding `tokens` tokens per beam.
  [[gnu::always_inline]] inline int64_t blocks_for(const Sequence& s, int64_t tokens) const;
  // Whether `s` outgrows a cyclic cache's window (its blocks are then overwritten, not shared).
  bool cyclic(const Sequence& s) const {
    return settings_.kv_window_tokens > 0 && whole_sequence_tokens(s) > settings_.kv_window_tokens;
  }
  // Those of several beams, of one under a cyclic cache's window, or with blocks every sequence
  // holds beside its tokens', kept out of line (cold) so that reserve() stays small otherwise.
  [[gnu::cold]] int64_t uncommon_blocks(const Sequence& s, int64_t tokens) const;
  // Frees the latest admitted running sequence other than those already in work; false if none.
  bool preempt_latest();
  // Continuous: the keys in the shared prompt blocks (beam_search.h) of the requests decoding in
  // the iteration being formed.
  [[gnu::cold]] double shared_prompt_keys() const;
  // A prompt ends in the iteration being formed: its last position's logits, one row (the beams'
  // first search starts from it).
  void finish_prompt();
  void finish_iteration();
  // Tells ReplicaSettings::on_outstanding.
  void report_outstanding() const;
  // Adds an iteration of `took` that just ended to the busy time and the KV cache's integral.
  void account(Picoseconds took);
  void complete(Sequence* s);
  Sequence admit(int32_t request);
  // The whole blocks of `w`'s prefix resident here that its admission would reuse, and how many
  // of them no sequence uses (counted free).
  struct PrefixHit {
    int64_t blocks = 0, unused = 0;
  };
  PrefixHit prefix_hit(const Sequence& w);
  // Whether the free blocks can take `w` with `hit` and a first chunk of `chunk` tokens: its
  // GUARANTEED_NO_EVICT promise, else the chunk's blocks.
  bool room_for(const Sequence& w, const PrefixHit& hit, int64_t chunk) const;
  // Evicts the unused prefix blocks that blocks taken since the last call displaced (those beyond
  // the free blocks), least recently released first. Called before every other use of the cache,
  // so that it is as if each taking of blocks evicted at once.
  void evict_displaced();
  // Makes the prefix blocks `s` has computed shared, in order from the first not yet shared.
  void share_prefix_blocks(Sequence* s);
  // Frees `s`'s blocks: its own, and its uses of shared ones.
  void free_blocks_of(Sequence* s);

  Simulation* sim_;
  const IterationModel* model_;
  ReplicaSettings settings_;
  // One beam, no cyclic window, no blocks beyond the tokens': blocks_for's inlined case.
  bool plain_blocks_;
  const std::vector<Request>* requests_;
  std::vector<RequestRecord>* records_;
  PrefixCache cache_;

  std::deque<Sequence> waiting_;  // not running; preempted ones first
  std::vector<Sequence> running_;
  int64_t free_blocks_ = 0;
  int64_t promised_blocks_ = 0;  // of free_blocks_, promised to running sequences
  int64_t peak_committed_ = 0;   // the most blocks held or promised at once
  int64_t peak_batched_ = 0;     // the most requests in its batches at once
  uint64_t next_admission_ = 0;
  bool iterating_ = false;
  bool wake_pending_ = false;  // static: a batch_wait wake-up is queued
  IterationWork work_;
  DraftWork draft_;  // speculative decoding: the draft's share of the iteration
  Picoseconds iteration_start_;
  int32_t static_steps_left_ = 0;  // static: decode iterations until the batch ends
  bool static_prefill_ = false;    // static: the current iteration prefills the batch
  Picoseconds busy_;
  double kv_block_s_ = 0;
  int64_t iterations_ = 0;
  int64_t preemptions_ = 0;
  int64_t prompt_iterations_ = 0;
  int64_t accepted_tokens_ = 0;
  int64_t verifications_ = 0;
};

}  // namespace clustersim
