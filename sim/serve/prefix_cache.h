// The KV-cache blocks of shared prompt prefixes one replica holds (automatic prefix caching): for
// each prefix id, its whole blocks of kv_block_tokens resident from its start, each with the
// number of running sequences using it. A block no sequence uses stays resident, counted among
// the replica's free blocks, until the pool needs it: then the unused blocks go least recently
// released first (a prefix's later blocks before its earlier ones among blocks released together),
// as vLLM's free-block queue (its blocks freed in reverse order, the queue's head evicted first)
// and TensorRT-LLM's LRU eviction do.
//
// A sequence uses a prefix's blocks 0 .. n-1 (matched at admission, then extended block by block
// as it computes them), so each prefix's users fall from its first block to its last and its
// unused blocks are always its last ones: the chain's tail is the one eviction candidate. Every
// operation costs O(log prefixes) plus the blocks it touches. Deterministic.
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace clustersim {

class PrefixCache {
 public:
  // Of `prefix`'s first `blocks` blocks, how many are resident (from the first on), and how many
  // of those no sequence uses.
  int64_t resident(int32_t prefix, int64_t blocks) const;
  int64_t unused(int32_t prefix, int64_t blocks) const;
  // A sequence starts using `prefix`'s first `blocks` blocks, all resident.
  void acquire(int32_t prefix, int64_t blocks);
  // A sequence using `prefix`'s first `index` blocks computed block `index`: its block becomes
  // resident, or where a copy is resident already it uses that one and frees its own. Returns the
  // change in the replica's free blocks: 1 when the resident copy was in use, else 0 (its own
  // block stays in use, or an unused copy leaves the free ones as its own joins them).
  int64_t extend(int32_t prefix, int64_t index);
  // A sequence stops using `prefix`'s first `blocks` blocks; returns how many nobody uses now.
  int64_t release(int32_t prefix, int64_t blocks);
  // Evicts unused blocks, least recently released first, until at most `limit` are left.
  void evict_to(int64_t limit);

  int64_t unused_blocks() const { return unused_; }
  int64_t resident_blocks() const { return resident_; }

 private:
  struct Block {
    int32_t users = 0;
    uint64_t released = 0;  // when its last user left (a counter of releases)
  };
  using Chain = std::vector<Block>;
  // Keeps `prefix`'s entry in tails_ (its tail, when unused) in step around a change of its chain.
  void untrack(int32_t prefix);
  void track(int32_t prefix);

  std::unordered_map<int32_t, Chain> chains_;
  std::set<std::pair<uint64_t, int32_t>> tails_;  // (released, prefix) of every unused tail
  uint64_t releases_ = 0;
  int64_t unused_ = 0, resident_ = 0;
};

}  // namespace clustersim
