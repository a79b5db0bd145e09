// A topology's links as shared capacities on the engine, and transfers between GPUs along their
// routes. Counts the bytes each GPU sends and receives, so collectives can be checked for
// conservation.
//
// Replicated (replicas t > 1): every transfer started from rank-0 GPUs stands for t transfers,
// its GPUs shifted by 0..t-1 (the tensor-parallel ranks), and loads the links as the t would,
// counted on one representative link per orbit of the topology's rank symmetry
// (rank_symmetry.h). Exact while every replica's route is the image of rank 0's under the
// symmetry; symmetric() turns false (and the simulation stops) on the first route that is not,
// e.g. when routing ties are broken differently for two ranks.
//
// Not thread-safe; one per simulation. The simulation and topology must outlive it.
#pragma once

#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/shared_bandwidth.h"
#include "sim/engine/simulation.h"
#include "sim/net/rank_symmetry.h"
#include "sim/net/topology.h"

namespace clustersim {

class Network {
 public:
  // Requires: replicas is 1 or a power of two <= topology->rank_symmetry().max_ranks().
  Network(Simulation* sim, const Topology* topology, int replicas = 1);

  // Moves `bytes_per_edge` over every (from GPU, to GPU) edge at one common rate, starting after
  // `latency`: the pace of a pipelined ring or tree, which its most loaded link sets. Calls
  // `done` when all has arrived. Requires: from != to on every edge.
  void start_coupled(const std::vector<std::pair<int, int>>& edges, double bytes_per_edge,
                     Picoseconds latency, std::function<void()> done);
  // start_coupled in two calls, for a caller that picks the latency and the bytes on the wire
  // from the rate: stage_coupled books the data bytes and returns the rate (bytes/s per edge)
  // the transfer would get alone on an idle network (the least capacity per use of the links
  // it loads); start_staged then starts it with `wire_bytes_per_edge` (a protocol's flags
  // included). Requires: edges not empty; start_staged next, before any other call.
  double stage_coupled(const std::vector<std::pair<int, int>>& edges, double bytes_per_edge);
  void start_staged(double wire_bytes_per_edge, Picoseconds latency, std::function<void()> done);
  // A coupled transfer over `edges` (as start_coupled makes it) prepared once, for a caller that
  // starts it again and again: returns a handle for start_prepared, which then costs what the
  // routes' distinct links cost, not the edges. Requires: edges not empty, from != to on each.
  int32_t prepare_coupled(const std::vector<std::pair<int, int>>& edges);
  // Starts prepared transfer `prepared` with `bytes_per_edge`; returns its id (as
  // start_transfer's).
  int64_t start_prepared(int32_t prepared, double bytes_per_edge, Picoseconds latency,
                         std::function<void()> done);
  // Prepared transfer `prepared` with `bytes_per_edge`.
  struct PreparedLoad {
    int32_t prepared;
    double bytes_per_edge;
  };
  // How long prepared transfers `loads`, started together after `latency`, would take on an idle
  // copy of the network until the last has arrived (what start_prepared's would take on this one
  // with nothing beside them). Books no bytes.
  Picoseconds prepared_time_alone(const std::vector<PreparedLoad>& loads,
                                  Picoseconds latency) const;
  // The kind of link that binds prepared transfers `loads` started together: the one carrying
  // the most of their bytes per byte/s of its capacity. On a tie the scale-out network's: a
  // NIC's PCIe link runs at the NIC's rate where that is the lower (topology_builder.cpp).
  LinkKind prepared_binding_link(const std::vector<PreparedLoad>& loads) const;
  // One transfer from GPU `from` to GPU `to`; returns its id (SharedBandwidth's: reused once it
  // has ended).
  int64_t start_transfer(int from, int to, double bytes, Picoseconds latency,
                         std::function<void()> done);
  // Moves `bytes` over explicit links (each counted `multiplicity` times), for traffic that is
  // not GPU-to-GPU (e.g. to an NVSwitch that reduces in the switch).
  void start_on_links(const std::vector<MaxMinFair::Use>& uses, double bytes, Picoseconds latency,
                      std::function<void()> done);
  // Books bytes that start_on_links moved on behalf of `gpu`.
  void count_bytes(int gpu, double sent, double received);

  int replicas() const { return replicas_; }
  // False once a replicated transfer's routes broke the symmetry: the run is not exact.
  bool symmetric() const { return symmetric_; }

  // State records and time shifts (SharedBandwidth's): the owner of each transfer describes it,
  // then fingerprint() completes the record (incomparable once the symmetry broke).
  void describe_transfer(int64_t transfer, StateFingerprint* f) const {
    links_.describe_transfer(transfer, f);
  }
  void fingerprint(StateFingerprint* f) const;
  void translate(Picoseconds delta) { links_.translate(delta); }

  // Bytes of the transfers started so far (a translate() skips some: not counted).
  const std::vector<double>& bytes_sent() const { return sent_; }
  const std::vector<double>& bytes_received() const { return received_; }
  // Bytes through topology link `link` by the transfers started so far (all replicas counted).
  double bytes_through(int32_t link) const { return links_.bytes_through(link); }
  const Topology& topology() const { return *topology_; }
  Simulation& simulation() { return *sim_; }

 private:
  // Books `bytes` sent from GPU `from` to GPU `to` (for all replicas).
  void count_edge(int from, int to, double bytes);
  // Appends the uses of route(from, to) (for all replicas) to uses_.
  void append_route(int from, int to);
  // The merged uses of the routes of an edge list (for all replicas), as links_' id of them, and
  // the rate (bytes/s per edge) a transfer over them gets alone on an idle network (the least
  // capacity per use of its links).
  struct CoupledUses {
    int32_t uses;
    double idle_rate;
  };
  // The CoupledUses of `edges`: resolved the first time an edge list is seen and kept, as
  // collectives start the same rings again and again.
  const CoupledUses& coupled_uses(const std::vector<std::pair<int, int>>& edges);
  // The merged uses of route(from, to) (for all replicas), as links_' id of them: resolved the
  // first time a pair is seen and kept, as a pipeline sends between the same GPUs again and again.
  int32_t route_uses(int from, int to);
  // Replicated: the uses of route(from, to) for all replicas, on their orbits' representatives
  // (kept per topology: replicated_routes.h); a route that is not the image of rank 0's for
  // every replica breaks the symmetry.
  const std::vector<MaxMinFair::Use>& replicated_route(int from, int to);

  Simulation* sim_;
  const Topology* topology_;
  int replicas_;
  const RankSymmetry* symmetry_ = nullptr;  // when replicated
  bool symmetric_ = true;
  SharedBandwidth links_;
  std::vector<double> sent_;
  std::vector<double> received_;
  // A prepared coupled transfer: its merged uses (coupled_uses), and the edges leaving and reaching
  // each GPU.
  struct Prepared {
    int32_t uses;
    std::vector<std::pair<int, int>> edges_from, edges_to;  // (GPU, edges), GPUs ascending
  };
  std::vector<MaxMinFair::Use> uses_;  // scratch of the transfer being started
  std::vector<Prepared> prepared_;
  struct EdgesHash {
    size_t operator()(const std::vector<std::pair<int, int>>& edges) const;
  };
  std::unordered_map<std::vector<std::pair<int, int>>, CoupledUses, EdgesHash> coupled_uses_;
  int32_t staged_ = -1;  // the uses stage_coupled staged
  std::unordered_map<uint64_t, int32_t> route_uses_;  // by (from, to)
};

}  // namespace clustersim
