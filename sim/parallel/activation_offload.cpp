// Transformer Engine's activation offload: layer windows, host link rate, copy streams.
#include "sim/parallel/activation_offload.h"

#include <algorithm>
#include <utility>

#include "sim/util/check.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

int window_last(int k, int offloaded, int chunk_layers) {
  return chunk_layers / offloaded * (k + 1) - 1 + std::min(k + 1, chunk_layers % offloaded);
}

}  // namespace

OffloadWindow offload_window(int k, int offloaded, int chunk_layers) {
  CLUSTERSIM_CHECK(0 <= k && k < offloaded && offloaded < chunk_layers,
                   "an offloaded layer of fewer offloaded layers than the chunk has");
  const int first = k == 0 ? 0 : std::max(k, window_last(k - 1, offloaded, chunk_layers));
  return {first, window_last(k, offloaded, chunk_layers)};
}

bool offloads_fused_expert_mlp(const schema::Parallelism& p) {
  const auto& modules = p.activation_offload_modules();
  return std::find(modules.begin(), modules.end(), schema::OFFLOAD_FUSED_EXPERT_MLP) !=
         modules.end();
}

double host_link_bytes_per_s(const schema::Gpu& gpu) {
  if (gpu.has_host_link()) {
    const schema::HostLink& link = gpu.host_link();
    return link.per_direction_gb_per_s() * kBytesPerGigabyte / std::max(1, link.gpus_sharing());
  }
  return gpu.has_pcie() ? gpu.pcie().per_direction_gb_per_s() * kBytesPerGigabyte : 0;
}

OffloadStreams::OffloadStreams(const ActivationOffload& offload, int chunk_layers,
                               Simulation* sim)
    : sim_(sim),
      copy_(Picoseconds::from_seconds(offload.layer_bytes / offload.link_bytes_per_s)),
      layer_bytes_(offload.layer_bytes),
      opens_at_(chunk_layers, -1),
      closes_at_(chunk_layers, -1),
      out_(sim),
      in_(sim) {
  CLUSTERSIM_CHECK(offload.layers > 0 && offload.layers < chunk_layers &&
                       offload.link_bytes_per_s > 0,
                   "activation offload needs fewer offloaded layers than the chunk and a link");
  for (int k = 0; k < offload.layers; ++k) {
    const OffloadWindow w = offload_window(k, offload.layers, chunk_layers);
    opens_at_[w.first] = k;
    closes_at_[w.last] = k;
  }
  out_.done.assign(offload.layers, 0);
  in_.done.assign(offload.layers, 0);
}

void OffloadStreams::after_forward(int layer, std::function<void()> go) {
  // A new micro-batch's forward: the last one's copies out all ended inside it.
  if (layer == 0) std::fill(out_.done.begin(), out_.done.end(), 0);
  if (opens_at_[layer] >= 0) start_copy(&out_, opens_at_[layer], &out_bytes_);
  wait_for(&out_, closes_at_[layer], std::move(go));
}

void OffloadStreams::before_backward(int layer, std::function<void()> go) {
  if (layer + 1 == static_cast<int>(opens_at_.size())) {
    std::fill(in_.done.begin(), in_.done.end(), 0);
  }
  if (closes_at_[layer] >= 0) start_copy(&in_, closes_at_[layer], &in_bytes_);
  wait_for(&in_, opens_at_[layer], std::move(go));
}

void OffloadStreams::start_copy(Direction* d, int k, double* bytes) {
  *bytes += layer_bytes_;
  d->stream.submit(copy_, [this, d, k] {
    d->done[k] = 1;
    if (waiting_on_ != d || waiting_for_ != k) return;
    waiting_on_ = nullptr;
    waiting_for_ = -1;
    waited_ += sim_->now() - wait_start_;
    std::function<void()> go = std::move(go_);
    go();
  });
}

void OffloadStreams::wait_for(Direction* d, int k, std::function<void()> go) {
  if (k < 0 || d->done[k]) return go();
  waiting_on_ = d;
  waiting_for_ = k;
  wait_start_ = sim_->now();
  go_ = std::move(go);
}

}  // namespace clustersim
