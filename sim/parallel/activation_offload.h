// Activation offloading to host memory as Transformer Engine's CPU offload context runs it for
// Megatron-Core (cpu_offloading_num_layers; NVIDIA/TransformerEngine
// transformer_engine/pytorch/cpu_offload.py, AsyncDoubleBufferGroupOffloadHandler): the tensors
// the first N layers of a model chunk save for their backward are copied to host memory on a
// device-to-host stream and freed, and copied back on a host-to-device stream ahead of their
// backward. Owns where each layer's copies start and where the compute waits for them (TE's
// layer window map), the host link's rate, and one GPU's two copy streams on the event engine.
//
// Window of offloaded layer k of N among L layers (TE's layer_window_map): it closes after layer
// last(k) = floor(L / N) (k + 1) - 1 + min(k + 1, L mod N) and opens after layer
// first(k) = max(k, last(k - 1)) (first(0) = 0). Forward: the copy out of layer k starts at the end
// of layer first(k)'s forward and the compute waits for it at the end of layer last(k)'s, when
// the layer's tensors leave GPU memory. Backward (layers in reverse): the copy back of layer k
// starts before layer last(k)'s backward and the compute waits for it before layer first(k)'s.
// So each copy hides under the compute of the last(k) - first(k) layers between its two points;
// the copies of one direction run one after another.
#pragma once

#include <functional>
#include <vector>

#include "sim/engine/serial_resource.h"
#include "sim/engine/simulation.h"
#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

struct ActivationOffload {
  int layers = 0;               // offloaded layers, the first of every chunk (0: none)
  double layer_bytes = 0;       // one offloaded layer's saved tensors, one micro-batch
  double link_bytes_per_s = 0;  // this GPU's share of its host link, each direction
};

// The layers after which offloaded layer `k`'s window opens and closes (0-based, forward order).
struct OffloadWindow {
  int first = 0;
  int last = 0;
  bool operator==(const OffloadWindow&) const = default;
};
// Requires: 0 <= k < offloaded < chunk_layers.
OffloadWindow offload_window(int k, int offloaded, int chunk_layers);

// Whether `p` offloads the fused grouped MLP's FC1 output of every expert layer (Megatron-Core's
// fine-grained activation offloading of "fused_group_mlp", parallelism.activation_offload_modules):
// its copies run on the same streams, each expert layer one offloaded "layer" of the windows.
bool offloads_fused_expert_mlp(const schema::Parallelism& p);

// Bytes per second one direction of `gpu`'s link to host memory gives each GPU on it while they
// all copy (the GPUs of a superchip run the same schedule): its host_link's share, else its PCIe
// link; 0 when it has neither.
double host_link_bytes_per_s(const schema::Gpu& gpu);

// The copy streams of one GPU running a chunk of `chunk_layers` layers task by task, one
// micro-batch's forward or backward at a time (as ZeRO-3 runs its tasks: zero3_traffic.h).
class OffloadStreams {
 public:
  // Requires: 0 < offload.layers < chunk_layers, offload.link_bytes_per_s > 0; `sim` outlives it.
  OffloadStreams(const ActivationOffload& offload, int chunk_layers, Simulation* sim);

  // At the end of layer `layer`'s forward: starts the copy out whose window opens there, then
  // runs `go` once the copy whose window closes there is done (at once when there is none).
  void after_forward(int layer, std::function<void()> go);
  // Before layer `layer`'s backward: starts the copy back whose window opens there, then runs `go`
  // once the copy back this layer's backward waits for is done (at once when there is none).
  void before_backward(int layer, std::function<void()> go);

  // Time the compute stream waited for copies, and bytes moved each way, over the run.
  Picoseconds waited() const { return waited_; }
  double copied_out_bytes() const { return out_bytes_; }
  double copied_in_bytes() const { return in_bytes_; }

 private:
  struct Direction {
    explicit Direction(Simulation* sim) : stream(sim) {}
    SerialResource stream;
    std::vector<char> done;  // per offloaded layer, this pass
  };
  void start_copy(Direction* d, int k, double* bytes);
  void wait_for(Direction* d, int k, std::function<void()> go);

  Simulation* sim_;
  Picoseconds copy_;            // one layer's copy
  double layer_bytes_;
  std::vector<int> opens_at_;   // per chunk layer: the offloaded layer whose window opens there, -1
  std::vector<int> closes_at_;  // the same for the window that closes there
  Direction out_, in_;
  Direction* waiting_on_ = nullptr;
  int waiting_for_ = -1;
  std::function<void()> go_;
  Picoseconds wait_start_, waited_;
  double out_bytes_ = 0, in_bytes_ = 0;
};

}  // namespace clustersim
