// Ring attention's steps and block transfers as events on the engine.
#include "sim/parallel/ring_attention.h"

#include <algorithm>

#include "sim/engine/simulation.h"
#include "sim/net/collective_algorithms.h"
#include "sim/net/network.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// One rank's progress: the step it is on, whether that step's kernel runs, the blocks it holds,
// and the sends and receives it has posted (NCCL's point-to-point: a block moves once its sender
// has posted the send and its receiver the matching receive).
struct RankState {
  int step = 0;
  bool computing = false;
  int blocks_arrived = 1;  // its own block is there from the start
  int sends_posted = 0;
  int receives_posted = 0;
  int sends_started = 0;
};

class RingRun {
 public:
  RingRun(const Topology& topology, const std::vector<int>& ring, const RingAttentionPass& pass)
      : network_(&sim_, &topology), ring_(ring), pass_(pass), ranks_(ring.size()) {}

  RingAttentionTime run() {
    for (size_t r = 0; r < ring_.size(); ++r) try_start(r);
    sim_.run();
    RingAttentionTime t{end_, Picoseconds(0)};
    for (const std::vector<Picoseconds>& steps : pass_.steps) {
      Picoseconds sum(0);
      for (Picoseconds s : steps) sum += s;
      t.compute = std::max(t.compute, sum);
    }
    return t;
  }

 private:
  // Starts rank r's next step when its previous one is done and its block has arrived: posts the
  // send of that block to the next rank and the receive of the next block from the previous one
  // (but at the last step), and runs the step's kernel.
  void try_start(size_t r) {
    RankState& s = ranks_[r];
    const int steps = static_cast<int>(ring_.size());
    if (s.computing || s.step >= steps || s.blocks_arrived <= s.step) return;
    s.computing = true;
    if (s.step + 1 < steps) {
      ++s.sends_posted;
      ++s.receives_posted;
      try_send(r);
      try_send((r + ring_.size() - 1) % ring_.size());
    }
    sim_.call_after(pass_.steps[r][s.step], [this, r] {
      RankState& done = ranks_[r];
      done.computing = false;
      ++done.step;
      end_ = std::max(end_, sim_.now());
      try_start(r);
    });
  }

  // Moves rank r's next block to its successor once both have posted their side.
  void try_send(size_t r) {
    RankState& s = ranks_[r];
    const size_t next = (r + 1) % ring_.size();
    if (s.sends_started >= s.sends_posted || s.sends_started >= ranks_[next].receives_posted) return;
    ++s.sends_started;
    network_.start_transfer(ring_[r], ring_[next], pass_.block_bytes,
                            step_latency(ring_[r], ring_[next], network_.topology()),
                            [this, next] {
                              ++ranks_[next].blocks_arrived;
                              try_start(next);
                            });
  }

  Simulation sim_;
  Network network_;
  const std::vector<int>& ring_;
  const RingAttentionPass& pass_;
  std::vector<RankState> ranks_;
  Picoseconds end_{0};
};

}  // namespace

RingAttentionTime simulate_ring_attention(const Topology& topology, const std::vector<int>& ring,
                                          const RingAttentionPass& pass) {
  CLUSTERSIM_CHECK(ring.size() >= 2 && pass.steps.size() == ring.size(),
                   "a ring attention needs one step list per rank of at least two");
  for (const std::vector<Picoseconds>& steps : pass.steps) {
    CLUSTERSIM_CHECK(steps.size() == ring.size(), "a ring attention rank without CP steps");
  }
  return RingRun(topology, ring, pass).run();
}

}  // namespace clustersim
