// A replica's scheduler and KV cache on the engine.
#include "sim/serve/replica.h"

#include <algorithm>

#include "sim/serve/beam_search.h"
#include "sim/serve/cyclic_kv_cache.h"
#include "sim/util/check.h"
#include "sim/workload/compressed_kv_cache.h"

namespace clustersim {
namespace {

constexpr uint64_t kIterationEnd = 0;
constexpr uint64_t kWake = 1;  // static: the batch wait is over

// The entries a compressed sparse attention model's indexer selects for `chunk` queries after
// `past` cached tokens; out of line, as it is rare (inlined, it slowed every model's iterations).
[[gnu::noinline]] void add_selections(IterationWork* work, int index_topk, int64_t past,
                                      int64_t chunk) {
  work->selected_entries += indexer_selections(index_topk, past, chunk);
}

// A decoding sequence's token, attending to its `context` tokens (in a sliding-window layer the
// last attention_window of them; in a chunked one those of its own chunk).
void add_decode(IterationWork* work, int64_t context, const ReplicaSettings& settings) {
  const int window = settings.attention_window;
  work->decode_context += static_cast<double>(context);
  const int64_t windowed = window <= 0                         ? context
                           : settings.attention_window_chunked ? (context - 1) % window + 1
                                                               : std::min<int64_t>(context, window);
  work->window_decode_context += static_cast<double>(windowed);
  if (settings.index_topk > 0) add_selections(work, settings.index_topk, context - 1, 1);
}

// A prompt chunk of `chunk` tokens after `past` cached ones (add_prompt_chunk), and the entries
// a compressed sparse attention model's indexer selects for its queries.
void add_prompt(IterationWork* work, int64_t past, int64_t chunk, const ReplicaSettings& settings) {
  add_prompt_chunk(work, past, chunk, settings.attention_window,
                   settings.attention_window_chunked);
  if (settings.index_topk > 0) add_selections(work, settings.index_topk, past, chunk);
}

// `work`, holding one decoding token per request so far, widened to `beams` per request: a
// token, a logit row (searched by the beam kernel) and the reads of its history per beam
// (beam_search.h); `shared_keys`: the keys of those requests' shared prompt blocks, which every
// beam after the first reads again. Returns the tokens added. Done once per iteration, not per
// sequence, and out of line (cold): the decode loop of one beam stays as it was.
[[gnu::cold]] int64_t widen_to_beams(IterationWork* work, int beams, double shared_keys) {
  const int64_t requests = work->logits;
  const int64_t added = requests * (beams - 1);
  work->tokens += added;
  work->logits += added;
  work->decode_context *= beams;
  work->window_decode_context *= beams;
  work->beam_shared_rereads += shared_keys * (beams - 1);
  work->beam_width = beams;
  return added;
}

}  // namespace

Replica::Replica(Simulation* sim, const IterationModel* model, const ReplicaSettings& settings,
                 const std::vector<Request>* requests, std::vector<RequestRecord>* records)
    : sim_(sim),
      model_(model),
      settings_(settings),
      plain_blocks_(settings.beam_width == 1 && settings.kv_window_tokens == 0 &&
                    settings.sequence_blocks == 0),
      requests_(requests),
      records_(records),
      free_blocks_(settings.kv_blocks) {
  CLUSTERSIM_CHECK(!settings.speculative ||
                       (settings.batching == schema::CONTINUOUS && !settings.hand_off),
                   "speculative decoding outside a colocated continuous replica");
  CLUSTERSIM_CHECK(!settings.lockstep || (settings.batching == schema::CONTINUOUS &&
                                          !settings.hand_off && !settings.speculative),
                   "a lockstep GPU outside a colocated continuous replica");
  CLUSTERSIM_CHECK(!settings.graphs.captured() ||
                       (settings.batching == schema::CONTINUOUS && settings.beam_width == 1 &&
                        !settings.speculative && !settings.lockstep),
                   "CUDA graphs padded outside a continuous replica of one beam, unspeculated");
  CLUSTERSIM_CHECK(settings.sequence_blocks == 0 ||
                       (settings.batching == schema::CONTINUOUS && settings.beam_width == 1 &&
                        settings.kv_window_tokens == 0),
                   "blocks per sequence outside a continuous replica of one beam");
  CLUSTERSIM_CHECK(settings.kv_window_tokens == 0 ||
                       (settings.batching == schema::CONTINUOUS && settings.beam_width == 1),
                   "a cyclic KV cache outside a continuous replica of one beam");
}

Replica::Sequence Replica::admit(int32_t request) {
  Sequence s;
  s.request = request;
  s.prompt = (*requests_)[request].input_tokens;
  return s;
}

void Replica::arrive(int32_t index) {
  waiting_.push_back(admit(index));
  report_outstanding();
  if (!iterating_ && !settings_.lockstep) sim_->request_settle(this);
}

void Replica::accept_prefilled(int32_t index) {
  Sequence s = admit(index);
  s.prefilled = s.cached = s.prompt;
  s.generated = 1;
  waiting_.push_back(s);
  report_outstanding();
  if (!iterating_) sim_->request_settle(this);
}

void Replica::release(int64_t blocks) {
  free_blocks_ += blocks;
  if (!iterating_) sim_->request_settle(this);
}

void Replica::try_start() {
  if (iterating_ || !form_step()) return;
  iterating_ = true;
  iteration_start_ = sim_->now();
  const SpeculativeDecoder* speculative = settings_.speculative;
  const Picoseconds took =
      speculative ? model_->iteration(work_, draft_.verification) + speculative->draft_time(draft_)
                  : model_->iteration(settings_.graphs.run(work_));
  sim_->schedule_after(took, this, kIterationEnd);
}

void Replica::on_event(uint64_t tag) {
  if (tag == kWake) {
    wake_pending_ = false;
    try_start();
    return;
  }
  end_step(sim_->now() - iteration_start_);
  iterating_ = false;
  try_start();
}

bool Replica::form_step() {
  work_ = IterationWork{};
  if (settings_.speculative) draft_ = DraftWork{};
  const bool formed =
      settings_.batching == schema::STATIC ? form_static() : form_continuous();
  if (work_.attention_pairs > 0) ++prompt_iterations_;
  peak_batched_ = std::max(peak_batched_, static_cast<int64_t>(running_.size()));
  return formed;
}

void Replica::end_step(Picoseconds took) {
  account(took);
  finish_iteration();
}

void Replica::account(Picoseconds took) {
  busy_ += took;
  ++iterations_;
  double in_use = 0;
  if (settings_.batching == schema::STATIC) {
    for (const Sequence& s : running_) {
      const Request& r = (*requests_)[s.request];
      in_use += static_cast<double>(r.input_tokens + r.output_tokens) *
                settings_.kv_bytes_per_token * settings_.beam_width;
    }
    in_use /= settings_.static_free_bytes;
  } else {
    in_use = static_cast<double>(settings_.kv_blocks - free_blocks_) /
             static_cast<double>(settings_.kv_blocks);
  }
  kv_block_s_ += in_use * took.seconds();
}

int64_t Replica::whole_sequence_tokens(const Sequence& w) const {
  const Request& r = (*requests_)[w.request];
  // TensorRT-LLM reserves the prompt plus the request's max new tokens
  // (KVCacheManager::getRemainingBlocksToCompletion); a request here states its output length,
  // which trtllm-bench passes as max_tokens. A prefill replica that hands the request off holds
  // its prompt only.
  return (settings_.hand_off ? r.input_tokens : r.input_tokens + r.output_tokens) +
         (settings_.speculative ? settings_.speculative->draft_tokens() : 0);
}

bool Replica::promise_whole(Sequence* w) {
  const int64_t whole = blocks_for(*w, whole_sequence_tokens(*w)) - w->blocks;
  if (whole > free_blocks_ - promised_blocks_) return false;
  w->promised = whole;
  promised_blocks_ += whole;
  return true;
}

inline int64_t Replica::blocks_for(const Sequence& s, int64_t tokens) const {
  if (plain_blocks_) return sequence_kv_blocks(tokens, settings_.block_tokens, 0);
  return uncommon_blocks(s, tokens);
}

int64_t Replica::uncommon_blocks(const Sequence& s, int64_t tokens) const {
  if (settings_.beam_width == 1) {  // the constructor allows no sequence_blocks with a window
    return sequence_kv_blocks(tokens, settings_.block_tokens, settings_.kv_window_tokens) +
           settings_.sequence_blocks;
  }
  return beam_kv_blocks((*requests_)[s.request].input_tokens, tokens, settings_.block_tokens,
                        settings_.beam_width);
}

inline bool Replica::reserve(Sequence* s, int64_t tokens) {
  const int64_t needed = blocks_for(*s, tokens) - s->blocks;
  if (needed <= 0) return true;
  if (needed > free_blocks_ - promised_blocks_ + s->promised) return false;
  const int64_t own = std::min(needed, s->promised);
  s->promised -= own;
  promised_blocks_ -= own;
  free_blocks_ -= needed;
  s->blocks += needed;
  return true;
}

void Replica::evict_displaced() {
  if (cache_.unused_blocks() > free_blocks_) cache_.evict_to(free_blocks_);
}

void Replica::free_blocks_of(Sequence* s) {
  evict_displaced();
  free_blocks_ += s->blocks - s->shared;
  if (s->shared > 0) free_blocks_ += cache_.release((*requests_)[s->request].prefix, s->shared);
  s->blocks = s->shared = 0;
}

Replica::PrefixHit Replica::prefix_hit(const Sequence& w) {
  const Request& r = (*requests_)[w.request];
  if (!settings_.prefix_caching || r.prefix < 0 || cyclic(w)) return {};
  evict_displaced();
  // Whole blocks of the prefix, leaving at least the prompt's last token to compute.
  const int64_t most =
      std::min<int64_t>(r.prefix_tokens, w.prompt - 1) / settings_.block_tokens;
  PrefixHit hit;
  hit.blocks = cache_.resident(r.prefix, most);
  hit.unused = cache_.unused(r.prefix, hit.blocks);
  return hit;
}

bool Replica::room_for(const Sequence& w, const PrefixHit& hit, int64_t chunk) const {
  const int64_t available = free_blocks_ - hit.unused - promised_blocks_;
  const int64_t tokens =
      no_evict() ? whole_sequence_tokens(w) : hit.blocks * settings_.block_tokens + chunk;
  return blocks_for(w, tokens) - hit.blocks <= available;
}

void Replica::share_prefix_blocks(Sequence* s) {
  const Request& r = (*requests_)[s->request];
  if (!settings_.prefix_caching || r.prefix < 0 || cyclic(*s)) return;
  evict_displaced();
  const int64_t whole = std::min<int64_t>(r.prefix_tokens, s->cached) / settings_.block_tokens;
  for (; s->shared < whole; ++s->shared) free_blocks_ += cache_.extend(r.prefix, s->shared);
}

bool Replica::preempt_latest() {
  CLUSTERSIM_CHECK(settings_.capacity_policy == schema::MAX_UTILIZATION,
                   "a preemption under GUARANTEED_NO_EVICT");
  if (running_.empty()) return false;
  Sequence s = running_.back();
  running_.pop_back();
  free_blocks_of(&s);
  s.prompt = (*requests_)[s.request].input_tokens + s.generated;  // recomputed on return
  s.prefilled = s.cached = s.chunk = 0;
  ++(*records_)[s.request].preemptions;
  ++preemptions_;
  waiting_.push_front(s);
  return true;
}

bool Replica::form_continuous() {
  const SpeculativeDecoder* speculative = settings_.speculative;
  const int draft_tokens = speculative ? speculative->draft_tokens() : 0;
  int64_t budget = settings_.max_tokens;
  for (size_t i = 0; i < running_.size();) {
    Sequence& s = running_[i];
    s.chunk = 0;
    s.in_batch = false;
    if (!s.decoding()) {
      ++i;
      continue;
    }
    if (!reserve(&s, s.cached + 1 + draft_tokens)) {
      CLUSTERSIM_CHECK(preempt_latest(), "a decoding sequence with no block to grow into");
      continue;  // running_[i] is the next sequence, or s was itself preempted
    }
    s.in_batch = true;
    if (speculative) {
      const int32_t left = (*requests_)[s.request].output_tokens - s.generated;
      s.accepting =
          static_cast<int16_t>(std::min(speculative->accepted(s.request, s.rounds++), left));
      speculative->add_verification(&work_, &draft_, s.cached, s.accepting,
                                    settings_.attention_window, settings_.attention_window_chunked);
      budget -= 1 + draft_tokens;
      ++i;
      continue;
    }
    ++work_.tokens;
    ++work_.logits;
    add_decode(&work_, s.cached + 1, settings_);
    --budget;
    ++i;
  }
  if (settings_.beam_width > 1) {
    budget -= widen_to_beams(&work_, settings_.beam_width, shared_prompt_keys());
  }
  for (Sequence& s : running_) {  // prompts being prefilled in chunks
    if (s.decoding() || budget <= 0) continue;
    const int64_t chunk = std::min<int64_t>(s.prompt - s.prefilled, budget);
    if (!reserve(&s, s.cached + chunk)) continue;
    s.chunk = static_cast<int32_t>(chunk);
    budget -= chunk;
    work_.tokens += chunk;
    add_prompt(&work_, s.cached, chunk, settings_);
    if (s.prefilled + chunk == s.prompt) finish_prompt();
    if (speculative) {
      speculative->add_prompt_chunk(&draft_, s.cached, chunk, s.prefilled + chunk == s.prompt);
    }
  }
  while (admit_continuous(&budget)) {
  }
  evict_displaced();
  peak_committed_ =
      std::max(peak_committed_, settings_.kv_blocks - free_blocks_ + promised_blocks_);
  return work_.tokens > 0;
}

bool Replica::admit_continuous(int64_t* budget) {
  if (waiting_.empty() || static_cast<int>(running_.size()) >= settings_.max_batch) return false;
  Sequence& w = waiting_.front();
  if (w.decoding()) return admit_prefilled(budget);
  const PrefixHit hit = prefix_hit(w);
  const int64_t past = hit.blocks * settings_.block_tokens;  // prompt tokens found cached
  // A prompt longer than the budget runs alone (a preempted sequence's prompt grows).
  const bool alone = running_.empty() && work_.tokens == 0;
  const int64_t rest = w.prompt - past;
  const int64_t chunk = settings_.chunked_prefill ? std::min<int64_t>(rest, *budget) : rest;
  if (chunk <= 0 || (chunk > *budget && !alone)) return false;
  if (hit.blocks > 0) {
    if (!room_for(w, hit, chunk)) return false;
    cache_.acquire((*requests_)[w.request].prefix, hit.blocks);
    free_blocks_ -= hit.unused;
    w.blocks = w.shared = static_cast<int32_t>(hit.blocks);
    w.prefilled = w.cached = static_cast<int32_t>(past);
  }
  const bool room = (!no_evict() || promise_whole(&w)) && reserve(&w, w.cached + chunk);
  CLUSTERSIM_CHECK(room || hit.blocks == 0, "a prefix hit admitted without the blocks it needs");
  if (!room) return false;
  RequestRecord& record = (*records_)[w.request];
  if (!record.started) record.cached_tokens = static_cast<int32_t>(past);
  w.chunk = static_cast<int32_t>(chunk);
  w.admitted = next_admission_++;
  *budget -= chunk;
  work_.tokens += chunk;
  add_prompt(&work_, w.cached, chunk, settings_);
  if (w.prefilled + chunk == w.prompt) finish_prompt();
  if (settings_.speculative) {
    settings_.speculative->add_prompt_chunk(&draft_, w.cached, chunk,
                                            w.prefilled + chunk == w.prompt);
  }
  running_.push_back(w);
  waiting_.pop_front();
  return true;
}

bool Replica::admit_prefilled(int64_t* budget) {
  Sequence& w = waiting_.front();
  if (*budget < 1 || (no_evict() && !promise_whole(&w)) || !reserve(&w, w.cached + 1)) {
    return false;
  }
  w.admitted = next_admission_++;
  w.in_batch = true;
  --*budget;
  ++work_.tokens;
  ++work_.logits;
  add_decode(&work_, w.cached + 1, settings_);
  running_.push_back(w);
  waiting_.pop_front();
  return true;
}

bool Replica::form_static() {
  if (!running_.empty()) {  // the batch decodes, finished sequences as padding
    for (const Sequence& s : running_) add_decode(&work_, s.cached + 1, settings_);
    work_.tokens = work_.logits = static_cast<int64_t>(running_.size());
    // Each beam holds its own copy of the cache: nothing shared to read again.
    if (settings_.beam_width > 1) widen_to_beams(&work_, settings_.beam_width, 0);
    return true;
  }
  if (waiting_.empty()) return false;
  const Picoseconds deadline =
      Picoseconds::from_seconds((*requests_)[waiting_.front().request].arrival_s) +
      settings_.batch_wait;
  if (static_cast<int>(waiting_.size()) < settings_.max_batch && sim_->now() < deadline) {
    if (!wake_pending_) sim_->schedule_at(deadline, this, kWake);
    wake_pending_ = true;
    return false;
  }
  double used = 0;
  int32_t longest = 0;
  while (!waiting_.empty() && static_cast<int>(running_.size()) < settings_.max_batch) {
    const Request& r = (*requests_)[waiting_.front().request];
    const double bytes =
        (r.input_tokens + r.output_tokens) * settings_.kv_bytes_per_token * settings_.beam_width +
        r.input_tokens * settings_.activation_bytes_per_token;
    if (!running_.empty() && used + bytes > settings_.static_free_bytes) break;
    used += bytes;
    Sequence s = waiting_.front();
    waiting_.pop_front();
    s.chunk = s.prompt;
    work_.tokens += s.prompt;
    add_prompt(&work_, 0, s.prompt, settings_);
    longest = std::max(longest, r.output_tokens);
    running_.push_back(s);
  }
  work_.logits = static_cast<int64_t>(running_.size());
  work_.beam_width = settings_.beam_width;  // the first search, on each request's context logits
  work_.static_prefill = true;
  static_steps_left_ = longest - 1;
  static_prefill_ = true;
  return true;
}

double Replica::shared_prompt_keys() const {
  const int block = settings_.block_tokens;
  double keys = 0;
  for (const Sequence& s : running_) {
    if (!s.in_batch) continue;
    const int64_t shared = (*requests_)[s.request].input_tokens / block * int64_t{block};
    keys += static_cast<double>(std::min<int64_t>(shared, s.cached + 1));
  }
  return keys;
}

void Replica::finish_prompt() {
  ++work_.logits;
  work_.beam_width = settings_.beam_width;
}

void Replica::complete(Sequence* s) {
  RequestRecord& record = (*records_)[s->request];
  record.finish = sim_->now();
  record.done = true;
  if (settings_.on_finish) settings_.on_finish(s->request);
  free_blocks_of(s);
  promised_blocks_ -= s->promised;
  s->promised = 0;
}

void Replica::finish_iteration() {
  const bool is_static = settings_.batching == schema::STATIC;
  const bool speculative = settings_.speculative != nullptr;
  const size_t running = running_.size();
  size_t kept = 0;
  for (size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = running_[i];
    const Request& r = (*requests_)[s.request];
    int32_t produced = 0;  // output tokens
    if (s.chunk > 0) {
      s.prefilled += s.chunk;
      s.cached += s.chunk;
      s.chunk = 0;
      share_prefix_blocks(&s);
      produced = s.decoding() ? 1 : 0;
    } else if (speculative && s.in_batch) {
      produced = s.accepting;  // the K and V of the previous token and the accepted drafts
      s.cached += produced;
      accepted_tokens_ += produced;
      ++verifications_;
    } else if (is_static || s.in_batch) {
      ++s.cached;  // the previous token's K and V
      produced = 1;
    }
    if (produced > 0 && s.generated < r.output_tokens) {
      s.generated += produced;
      RequestRecord& record = (*records_)[s.request];
      if (!record.started) {
        record.first_token = sim_->now();
        record.started = true;
      }
      if (s.generated == r.output_tokens) {
        complete(&s);
      } else if (s.generated == 1 && settings_.hand_off) {
        promised_blocks_ -= s.promised;  // none left: it holds its prompt
        settings_.hand_off(s.request, s.blocks);
        continue;  // the decode pool has it now
      }
    }
    if (!is_static && s.generated >= r.output_tokens) continue;
    // Copied only when a sequence before it left: a copy onto itself stalls on its own stores.
    if (kept != i) running_[kept] = s;
    ++kept;
  }
  running_.resize(kept);
  if (is_static) {
    if (!static_prefill_) --static_steps_left_;
    static_prefill_ = false;
    if (static_steps_left_ <= 0) running_.clear();  // the batch is done
  }
  if (running_.size() != running) report_outstanding();
}

void Replica::report_outstanding() const {
  if (settings_.on_outstanding) settings_.on_outstanding(outstanding());
}

}  // namespace clustersim
