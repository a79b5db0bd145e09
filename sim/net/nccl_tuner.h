// NCCL's own tuning model (NVIDIA/nccl v2.19.3-1 and v2.20.3-1, the releases of TensorRT-LLM
// 0.9.0's time, alike in all used here; src/graph/tuning.cc, search.cc, topo.h, topo.cc): the bus bandwidth its
// topology search settles on for a ring inside one node, the time its tuner predicts for a ring
// collective under each protocol, and the protocol it picks (the least predicted time). These are
// NCCL's published constants and formulas, not fits: the protocol a collective runs on is NCCL's
// choice, made from NCCL's ratings of the links (PCIe by generation and lanes, the CPU sockets'
// link by CPU vendor), whatever the links really carry; the engine then times the chosen protocol
// on the modelled links (ring.cpp).
//
// Scope: rings within one node whose hops NCCL does not rate all NVLink (its tuner then charges
// every step at its PCI latency and never enables LL128, so LL and Simple are its whole choice of
// protocol for a ring; its tree inside one node, a chain, is not modelled: the model's tree spans
// nodes). NVLink-only rings, where NCCL also runs LL128, and rings across nodes keep the engine's
// own choice (start_with_protocol).
#pragma once

#include <string>
#include <vector>

#include "sim/net/collective.h"
#include "sim/net/topology.h"

namespace clustersim {

// NCCL's rating of a PCIe link of `generation` and `lanes`, GB/s one direction: lanes x 0.75 GB/s
// at generation 3, doubling with each generation (topo.cc: lanes x GT/s-derived speed / 80).
double nccl_pcie_gb_per_s(int generation, int lanes);
// NCCL's rating of the link between two CPU sockets (topo.h): 10 GB/s between Intel Xeon
// Scalable sockets (SKL_QPI_BW), 16 between AMD ones (AMD_BW); 0 (not rated: NCCL's LOC_BW, no
// bound) for a CPU named neither Intel nor AMD.
double nccl_socket_gb_per_s(const std::string& cpu_model);
// Whether NCCL treats the host's PCIe roots as Intel's (`cpu_model` names Intel).
bool nccl_intel_cpu(const std::string& cpu_model);
// The compute capability (major x 10 + minor) of a GPU architecture as the catalog names it
// ("Volta" 70, "Turing" 75, "Ampere" 80, "Ada Lovelace" 89, "Hopper" 90, "Blackwell" 100); 0 for
// others.
int nccl_compute_capability(const std::string& architecture);

// One link a ring channel crosses, as NCCL's topology search sees it.
struct NcclLinkLoad {
  double rating_gb_per_s;   // NCCL's bandwidth of the link, GB/s one direction
  double use_per_channel;   // what one channel at 1 GB/s takes of it (crossings x P2P overhead)
};

// The ring's bus bandwidth NCCL's search finds, channels x per-channel speed in GB/s: from the
// highest speed of its list (NCCL's sm90 list from compute capability 9.0, else the older one) at
// most `gpu_total_gb_per_s` (a GPU's own bandwidth: its PCIe link, or its NVLinks together), the
// most channels (up to 16) each speed fits on every link; speeds lower until one fits, then on
// while a lower speed is above 0.49 of the best one's, keeping the highest total and stopping once
// it reaches the GPU's bandwidth; then the speed rises while the same channels still fit (NCCL's
// second pass). Speeds above a hop's best path fit no channel, so the search starts where NCCL's
// does. 0 when no speed fits. Requires: every rating and use > 0.
double nccl_ring_bus_gb_per_s(const std::vector<NcclLinkLoad>& loads, int compute_capability,
                              double gpu_total_gb_per_s);

// The links of `ring` (consecutive GPUs, the last back to the first) that NCCL rates, with their
// use by one channel: each crossing once, times 6/5 on the PCIe links of a hop through one Intel
// root complex (NCCL's INTEL_P2P_OVERHEAD; a hop across sockets goes without it, as NCCL counts).
std::vector<NcclLinkLoad> nccl_ring_loads(const std::vector<int>& ring, const Topology& t);

// Whether NCCL's tuner as modelled here picks the protocol of `ring` (GPUs in ring order): all in
// one NVLink domain, at least one hop over PCIe, on a host with ratings (set_nccl_host).
bool nccl_tunes_ring(const std::vector<int>& ring, const Topology& t);

// nccl_ring_bus_gb_per_s of `ring` on `t`: its loads (nccl_ring_loads) against a GPU's own
// bandwidth (its PCIe rating; unbounded with NVLink, which NCCL rates far above PCIe); 0 when no
// link of the ring is rated (a GPU whose PCIe generation the catalog lacks).
// Requires: nccl_tunes_ring(ring, t).
double nccl_ring_bus_gb_per_s(const std::vector<int>& ring, const Topology& t);

// NCCL's predicted time in microseconds of a ring `op` over `ranks` GPUs of one node on
// `protocol` for `bytes` (nccl-tests' size), its bus bandwidth estimate `bus_gb_per_s`:
//   latency = base + steps x PCI hop latency (6.6 + 1.0 us a step for LL, 8.4 + 5.7 for Simple;
//             one hop for broadcast),
//   bandwidth = bus x ranks / steps, LL at a quarter of bus for all-reduce, a third otherwise
//             (at most 87.7 GB/s from compute capability 8.0, 39 before),
//   time = latency + bytes / bandwidth,
// with steps 2(n-1) for all-reduce, n-1 for reduce-scatter and all-gather, n for broadcast.
// Requires: ranks >= 2, op a ring collective (not all_to_all or send_recv), bus_gb_per_s > 0.
double nccl_ring_time_us(CollectiveOp op, int ranks, double bus_gb_per_s, int compute_capability,
                         Protocol protocol, double bytes);

// The protocol NCCL's tuner picks: the one of least nccl_ring_time_us (ties to LL, checked
// first as in NCCL's loop).
Protocol nccl_ring_protocol(CollectiveOp op, int ranks, double bus_gb_per_s,
                            int compute_capability, double bytes);

}  // namespace clustersim
