// The expert all-to-alls of a pipeline's stages on the network (PipelineRun, pipeline_run.h):
// the traffic across NVLink domains prepared once per stage, each all-to-all run between its
// task's compute segments with the compute stopped, and its time beyond the traffic's time alone.
#include <algorithm>
#include <vector>

#include "sim/parallel/pipeline_run.h"

namespace clustersim {

// The expert all-to-alls of `task` on stage r that run on the network; null when none do: the
// stage's groups stay inside their NVLink domains, or the task has none (a deferred weight
// gradient), or runs them beside the other pass of an overlapped combined step (whose closed
// form times them alone).
const std::vector<TaskSpan>* PipelineRun::network_all_to_alls(int r,
                                                              const PipelineTask& task) const {
  if (a2a_[r].prepared.empty() || task.weight_only ||
      (task.combined && plan_.overlap_expert_communication)) {
    return nullptr;
  }
  const StageWork& w = plan_.work[r];
  const auto& spans = task.forward ? w.chunk_forward_all_to_alls : w.chunk_backward_all_to_alls;
  if (spans.size() <= static_cast<size_t>(task.chunk) || spans[task.chunk].empty()) {
    return nullptr;
  }
  return &spans[task.chunk];
}

// Stage r's all-to-all traffic across NVLink domains, prepared on the network when it has any.
void PipelineRun::prepare_all_to_alls(int r) {
  const int tcp = plan_.tensor_parallel * plan_.context_parallel;
  std::vector<int> gpus;
  for (int local = 0; local < plan_.experts.stage_gpus; ++local) {
    gpus.push_back(plan_.gpu(local / tcp, r, local % tcp));
  }
  AllToAllRoutes& routes = a2a_[r];
  routes.traffic =
      expert_network_traffic(net_->topology(), plan_.experts, gpus, plan_.expert_rail_shares,
                             plan_.tensor_parallel, ranks_);
  std::vector<Network::PreparedLoad> loads;
  for (const ExpertNetworkTraffic::Kind& kind : routes.traffic.kinds) {
    routes.prepared.push_back(net_->prepare_coupled(kind.edges));
    loads.push_back({routes.prepared.back(), kind.edge_bytes_per_byte});
  }
  if (!loads.empty()) {
    timeline_.stages[r].expert_scale_out_link = net_->prepared_binding_link(loads);
  }
  stages_[r].all_to_all_transfers.assign(routes.prepared.size(), -1);
}

// Stage r's compute segment has ended: starts the all-to-all after it, if any (false: the task
// is over).
bool PipelineRun::start_all_to_all(int r) {
  Stage& s = stages_[r];
  if (s.draining || s.spans == nullptr || s.segment / 2 >= s.spans->size()) return false;
  const TaskSpan& span = (*s.spans)[s.segment / 2];
  ++s.segment;
  s.offset = span_start(r, span);
  run_all_to_all(r, span);
  return true;
}

// Runs stage r's all-to-all `span` on the network, the compute stopped: it takes its time alone
// (layer_times.h) and, when its traffic across domains (every kind, started together) takes
// longer on the network than alone (traffic beside it), that much more.
void PipelineRun::run_all_to_all(int r, const TaskSpan& span) {
  Stage& s = stages_[r];
  s.all_to_all = &span;
  s.all_to_all_start = now();
  const AllToAllRoutes& routes = a2a_[r];
  s.all_to_all_arriving = routes.prepared.size();
  for (size_t k = 0; k < routes.prepared.size(); ++k) {
    s.all_to_all_transfers[k] = net_->start_prepared(
        routes.prepared[k], span.bytes * routes.traffic.kinds[k].edge_bytes_per_byte,
        routes.traffic.latency, [this, r, k] { all_to_all_arrived(r, k); });
  }
}

// Kind k of its traffic has arrived. Once every kind has, the all-to-all ends after its time
// alone, and after the part of it beyond its traffic's time alone.
void PipelineRun::all_to_all_arrived(int r, size_t k) {
  Stage& s = stages_[r];
  s.all_to_all_transfers[k] = -1;
  if (--s.all_to_all_arriving > 0) return;
  timeline_.stages[r].expert_scale_out += now() - s.all_to_all_start;
  const TaskSpan& span = *s.all_to_all;
  const Picoseconds rest = std::max(Picoseconds(0), span.length - traffic_alone(r, span.bytes));
  schedule_at(std::max(s.all_to_all_start + span.length, now() + rest), kAllToAllEnd, r);
}

void PipelineRun::all_to_all_ended(int r) {
  Stage& s = stages_[r];
  const TaskSpan& span = *s.all_to_all;
  if (record_) record(r, "expert all-to-all", span.name, s.all_to_all_start);
  timeline_.stages[r].expert_network_wait += now() - s.all_to_all_start - span.length;
  if (zero3_[r]) return zero3_[r]->all_to_all_done();
  ++s.segment;
  s.offset += span.length;
  start_compute(r);
}

// Stage r's all-to-all traffic of `bytes` per GPU (every kind) alone on an idle copy of the
// network, on the routes prepare_all_to_alls resolved.
Picoseconds PipelineRun::traffic_alone(int r, double bytes) {
  AllToAllRoutes& routes = a2a_[r];
  const auto found = routes.alone.find(bytes);
  if (found != routes.alone.end()) return found->second;
  std::vector<Network::PreparedLoad> loads;
  for (size_t k = 0; k < routes.prepared.size(); ++k) {
    loads.push_back({routes.prepared[k], bytes * routes.traffic.kinds[k].edge_bytes_per_byte});
  }
  const Picoseconds alone = net_->prepared_time_alone(loads, routes.traffic.latency);
  routes.alone.emplace(bytes, alone);
  return alone;
}

}  // namespace clustersim
