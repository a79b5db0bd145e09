// ZeRO-3 layer-by-layer execution of a stage's tasks: gathers, compute segments, reduce-scatters.
#include "sim/parallel/zero3_traffic.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// Part `i` of `total` split into `parts` stretches that add up to it exactly.
Picoseconds share(Picoseconds total, int parts, int i) {
  return Picoseconds(total.count() * (i + 1) / parts - total.count() * i / parts);
}

// Appends to `out` the all-to-alls of `layers` expert layers in a segment of `duration`
// (Zero3ExpertAllToAlls): each layer's `spans` of its `pass` in its equal part of the segment,
// scaled to it; then each after the one before, ending by the segment's end where they fit.
void place_all_to_alls(Picoseconds duration, int layers, Picoseconds pass,
                       const std::vector<TaskSpan>& spans, std::vector<TaskSpan>* out) {
  const size_t first = out->size();
  for (int i = 0; i < layers; ++i) {
    const Picoseconds begin(duration.count() * i / layers);
    const Picoseconds part = share(duration, layers, i);
    const double scale = pass > Picoseconds(0) ? static_cast<double>(part.count()) /
                                                     static_cast<double>(pass.count())
                                               : 0;
    for (const TaskSpan& span : spans) {
      const Picoseconds at(std::llround(static_cast<double>(span.start.count()) * scale));
      out->push_back({begin + at, span.length, span.name, span.bytes});
    }
  }
  Picoseconds latest = duration;
  for (size_t i = out->size(); i-- > first;) {
    TaskSpan& span = (*out)[i];
    span.start = std::min(span.start, latest - span.length);
    latest = span.start;
  }
  Picoseconds earliest(0);
  for (size_t i = first; i < out->size(); ++i) {
    TaskSpan& span = (*out)[i];
    span.start = std::max(span.start, earliest);
    earliest = span.start + span.length;
  }
}

}  // namespace

Zero3Work zero3_work(int layers, double chunk_parameters, double weight_bytes,
                     double chunk_trained_parameters, double gradient_bytes) {
  CLUSTERSIM_CHECK(chunk_trained_parameters <= chunk_parameters,
                   "ZeRO-3 trains no more parameters than it gathers");
  Zero3Work w;
  w.units = std::max(1, layers);
  const double unit = chunk_parameters / w.units;
  const double trained = chunk_trained_parameters / w.units;
  w.unit_parameters = unit;
  w.unit_gather_bytes = weight_bytes * unit;
  w.unit_gradient_bytes = gradient_bytes * trained;
  w.unit_reduce_buckets =
      std::max(1, static_cast<int>(std::ceil(trained / kZero3ReduceBucketElements)));
  // Between a sub-module's recomputed forward and its backward run the rest of its layer's
  // forward and backward: when the layer alone exceeds the reuse distance, DeepSpeed has released
  // the weights and gathers them a third time.
  w.regather_for_backward = unit > kZero3MaxReuseDistanceParameters;
  // DeepSpeed prefetches the next sub-modules up to the bucket size, and at least the next one.
  w.prefetch_units = std::max(1, static_cast<int>(kZero3PrefetchBucketParameters / unit));
  return w;
}

void make_fetch_synchronous(Zero3Work* work, std::vector<double> module_shares) {
  double total = 0;
  for (double share : module_shares) total += share;
  CLUSTERSIM_CHECK(!module_shares.empty() && std::abs(total - 1) < 1e-9,
                   "a layer's module shares add up to 1");
  work->synchronize = true;
  work->prefetch_units = 1;
  work->unit_reduce_buckets = 1;
  work->fetch_bytes_per_s = kDeepSpeed2021FetchBytesPerSecond;
  work->max_live_parameters = kZero3MaxLiveParameters;
  work->module_shares = std::move(module_shares);
}

void make_fsdp2(Zero3Work* work) {
  work->prefetch_units = 1;
  work->unit_reduce_buckets = 1;
  work->regather_for_backward = false;
  work->backward_waits_reductions = true;
}

Zero3Stage::Zero3Stage(const Zero3Work& work, const std::vector<PipelineTask>& tasks,
                       Picoseconds forward, Picoseconds backward, Simulation* simulation,
                       DataParallelCollective collective, CollectiveSmContention* contention,
                       ExpertAllToAll all_to_all)
    : work_(work),
      sim_(simulation),
      collective_(std::move(collective)),
      contention_(contention),
      all_to_all_(std::move(all_to_all)) {
  CLUSTERSIM_CHECK(work.units > 0 && work.prefetch_units >= 0 && work.unit_reduce_buckets > 0,
                   "ZeRO-3 work needs layers, a prefetch window and reduce buckets");
  const int units = work.units;
  const std::vector<double> shares =
      work.module_shares.empty() ? std::vector<double>{1.0} : work.module_shares;
  const int modules = static_cast<int>(shares.size());
  // Whether each module's backward regathers it after its recomputed forward: the whole layer's
  // flag, or per module the parameters used in between (the later modules, recomputed and then
  // differentiated) against the reuse distance.
  std::vector<bool> regather(modules, work.regather_for_backward);
  if (!work.module_shares.empty()) {
    double after = 0;
    for (int m = modules - 1; m >= 0; --m) {
      regather[m] = 2 * after * work.unit_parameters >= kZero3MaxReuseDistanceParameters;
      after += shares[m];
    }
  }
  // Module m's part of a layer's `total` (cumulative shares, so the parts add up to it exactly).
  std::vector<double> cumulative{0};
  for (double share : shares) cumulative.push_back(cumulative.back() + share);
  auto part = [&](Picoseconds total, int m) {
    const auto at = [&](int i) {
      return i == modules ? total.count()
                          : static_cast<int64_t>(std::llround(total.count() * cumulative[i]));
    };
    return Picoseconds(at(m + 1) - at(m));
  };
  // Which passes gather and reduce: every one, or under deferred synchronization each chunk's
  // first forward and last backward of each pipeline run (`gathers`, `reduces` for the task
  // computing), by run x chunks + chunk.
  int chunks = 0, runs = 0;
  for (const PipelineTask& task : tasks) {
    chunks = std::max(chunks, task.chunk + 1);
    runs = std::max(runs, task.run + 1);
  }
  std::vector<size_t> first_forward(static_cast<size_t>(runs) * chunks, tasks.size()),
      last_backward(static_cast<size_t>(runs) * chunks, 0);
  // Hybrid-FSDP goes on across the groups in each chunk's last backward of the step only.
  std::vector<size_t> step_last_backward(static_cast<size_t>(chunks), 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const size_t c = static_cast<size_t>(tasks[i].run) * chunks + tasks[i].chunk;
    if (tasks[i].forward) first_forward[c] = std::min(first_forward[c], i);
    if (!tasks[i].forward) last_backward[c] = step_last_backward[tasks[i].chunk] = i;
  }
  bool gathers = true, reduces = true, across_replicas = true;
  auto segment = [&](Picoseconds duration, bool gather, bool reduce, bool forward, int layer,
                     int m) {
    Segment s{duration, gather && gathers, reduce && reduces, false, forward, layer};
    s.gather_bytes = shares[m] * work.unit_gather_bytes;
    s.reduce_bytes = shares[m] * work.unit_gradient_bytes;
    s.expert_gather_bytes = shares[m] * work.unit_expert_gather_bytes;
    s.expert_reduce_bytes = across_replicas ? shares[m] * work.unit_expert_gradient_bytes : 0;
    s.across_replicas = across_replicas;
    s.prefetch = work.max_live_parameters <= 0 ||
                 shares[m] * work.unit_parameters < work.max_live_parameters;
    return s;
  };
  // The expert all-to-alls of the segment just added, of chunk layer `unit` in the pass whose
  // all-to-alls are `spans` over its `pass` (Zero3ExpertAllToAlls).
  const Zero3ExpertAllToAlls& experts = work.expert_all_to_alls;
  const bool run_all_to_alls = all_to_all_ && experts.layers > 0 && modules == 1;
  const int64_t stage_units = static_cast<int64_t>(chunks) * units;
  auto add_all_to_alls = [&](int chunk, int unit, Picoseconds pass,
                             const std::vector<TaskSpan>& spans) {
    if (!run_all_to_alls || spans.empty()) return;
    const int64_t j = static_cast<int64_t>(chunk) * units + unit;
    const int64_t layers = (j + 1) * experts.layers / stage_units - j * experts.layers / stage_units;
    Segment& s = segments_.back();
    s.first_all_to_all = static_cast<uint32_t>(all_to_alls_.size());
    place_all_to_alls(s.duration, static_cast<int>(layers), pass, spans, &all_to_alls_);
    s.all_to_alls_end = static_cast<uint32_t>(all_to_alls_.size());
  };
  const bool backward_gathers = !work.keep_forward_gather;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const PipelineTask& task = tasks[i];
    task_begin_.push_back(segments_.size());
    const size_t run_chunk = static_cast<size_t>(task.run) * chunks + task.chunk;
    const bool synchronizes = !work.defer_gradient_sync ||
                              i == (task.forward ? first_forward : last_backward)[run_chunk];
    gathers = task.forward ? synchronizes : backward_gathers;
    reduces = synchronizes && !work.reduce_after_backward;
    across_replicas = !work.optimizer_across_replicas || i == step_last_backward[task.chunk];
    for (int u = 0; u < units; ++u) {
      const Picoseconds layer_forward = share(forward, units, u);
      const Picoseconds layer_backward = share(backward, units, u);
      if (task.forward) {
        for (int m = 0; m < modules; ++m) {
          segments_.push_back(segment(part(layer_forward, m), true, false, true, u, m));
        }
        add_all_to_alls(task.chunk, u, experts.forward, experts.forward_spans);
      } else if (work.recompute > Picoseconds(0)) {
        const Picoseconds layer_recompute = share(work.recompute, units, u);
        for (int m = 0; m < modules; ++m) {
          segments_.push_back(segment(part(layer_recompute, m), true, false, false, -1, m));
        }
        add_all_to_alls(task.chunk, u, experts.recompute, experts.recompute_spans);
        for (int m = modules - 1; m >= 0; --m) {
          segments_.push_back(
              segment(part(layer_backward - layer_recompute, m), regather[m], true, false, -1, m));
        }
        add_all_to_alls(task.chunk, u, experts.backward, experts.backward_spans);
      } else {
        for (int m = modules - 1; m >= 0; --m) {
          segments_.push_back(
              segment(part(layer_backward, m), true, true, false, units - 1 - u, m));
        }
        add_all_to_alls(task.chunk, units - 1 - u, experts.backward, experts.backward_spans);
      }
    }
    // Reduced after the chunk's last backward: every layer's gradients at once, on its last
    // segment, and the task ends only once they are (the stream waits on them).
    if (!task.forward && synchronizes && work.reduce_after_backward) {
      Segment& last = segments_.back();
      last.reduce = true;
      last.reduce_bytes = units * work.unit_gradient_bytes;
      last.expert_reduce_bytes = units * work.unit_expert_gradient_bytes;
      last.wait_reduced = true;
    }
    // FSDP2's root callback: a reducing backward waits for its reductions.
    if (!task.forward && synchronizes && work.backward_waits_reductions) {
      segments_.back().wait_reduced = true;
    }
  }
  task_begin_.push_back(segments_.size());
  if (work.offload.layers > 0) {
    CLUSTERSIM_CHECK(work.recompute == Picoseconds(0), "activation offload without recomputation");
    CLUSTERSIM_CHECK(modules == 1, "activation offload with one module per layer");
    offload_ = std::make_unique<OffloadStreams>(work.offload, units, simulation);
  }
}

void Zero3Stage::run_task(size_t index, std::function<void()> done) {
  CLUSTERSIM_CHECK(index + 1 < task_begin_.size() && task_begin_[index] == current_,
                   "ZeRO-3 tasks run in schedule order");
  task_done_ = std::move(done);
  task_end_ = task_begin_[index + 1];
  start_segment();
}

bool Zero3Stage::group_free() const {
  return !work_.synchronize || (!gather_in_flight_ && reductions_in_flight_ == 0);
}

Picoseconds Zero3Stage::fetch_floor(double bytes) const {
  return work_.fetch_bytes_per_s > 0
             ? sim_->now() + Picoseconds::from_seconds(bytes / work_.fetch_bytes_per_s)
             : sim_->now();
}

// Issues, in order and one at a time, the gathers of segments up to `prefetch_units` gathers
// past the one `segment` needs (none past it while `segment` may not prefetch).
void Zero3Stage::issue_gathers_up_to(size_t segment) {
  if (gather_in_flight_ || !group_free()) return;
  const int window =
      segment < segments_.size() && !segments_[segment].prefetch ? 0 : work_.prefetch_units;
  // Gathers already needed by `segment` or within the prefetch window after it.
  int ahead = 0;
  size_t limit = segment;
  while (limit < segments_.size()) {
    if (segments_[limit].gather && limit > segment && ++ahead > window) break;
    ++limit;
  }
  while (gather_issued_ < limit && !segments_[gather_issued_].gather) {
    segments_[gather_issued_++].gathered = true;
  }
  if (gather_issued_ >= limit) return;
  const size_t target = gather_issued_++;
  gather_in_flight_ = true;
  if (gather_end_ != sim_->now()) chain_start_work_ = contention_->work_done(sim_->now());
  const double bytes = segments_[target].gather_bytes;
  const double expert_bytes = segments_[target].expert_gather_bytes;
  gathered_bytes_ += bytes + expert_bytes;
  expert_gathered_bytes_ += expert_bytes;
  // The fetch path's own rate, when it is slower than the network.
  const Picoseconds earliest = fetch_floor(bytes);
  dense_and_experts(CollectiveOp::kAllGather, bytes, expert_bytes, [this, target, earliest] {
    if (sim_->now() >= earliest) return gather_done(target, true);
    sim_->call_at(earliest, [this, target] { gather_done(target, false); });
  });
}

void Zero3Stage::dense_and_experts(CollectiveOp op, double dense, double expert,
                                   std::function<void()> done) {
  if (expert <= 0) return collective_(op, DataParallelGroup::kShard, dense, std::move(done));
  auto left = std::make_shared<int>(2);
  auto both = [left, done = std::move(done)] {
    if (--*left == 0) done();
  };
  collective_(op, DataParallelGroup::kShard, dense, both);
  collective_(op, DataParallelGroup::kExperts, expert, both);
}

void Zero3Stage::gather_done(size_t segment, bool network_paced) {
  gather_in_flight_ = false;
  // The compute idle since it needed this gather (it ran no work meanwhile) waited on the chain.
  if (network_paced && waiting_ && segment == current_) {
    contention_->record_work_beside(sim_->now(), chain_start_work_);
  }
  gather_end_ = network_paced ? std::optional(sim_->now()) : std::nullopt;
  released_at_floor_ = !network_paced;
  segments_[segment].gathered = true;
  next_reduction();
  if (waiting_) return start_compute();
  issue_gathers_up_to(current_);
}

void Zero3Stage::start_segment() {
  const Segment& s = segments_[current_];
  if (offload_ && !s.forward && s.layer >= 0) {
    issue_gathers_up_to(current_);  // the gathers go on while the copy back is awaited
    return offload_->before_backward(s.layer, [this] { start_compute(); });
  }
  start_compute();
}

void Zero3Stage::start_compute() {
  // A segment without its own gather (marked gathered once the issue point passes it) computes
  // with the weights of the gather before it. Synchronizing, it also waits for every collective
  // issued before it.
  issue_gathers_up_to(current_);
  const bool ready =
      segments_[current_].gathered &&
      (!work_.synchronize || (reductions_in_flight_ == 0 && reductions_queued_.empty()));
  if (!ready) {
    if (!waiting_) wait_start_ = sim_->now();
    waiting_ = true;
    return;
  }
  if (waiting_) {
    waiting_ = false;
    waited_ += sim_->now() - wait_start_;
    if (released_at_floor_) fetch_paced_waited_ += sim_->now() - wait_start_;
  }
  issue_gathers_up_to(current_);  // the prefetch, issued after the synchronization
  release_deferred();
  next_all_to_all_ = segments_[current_].first_all_to_all;
  segment_done_ = Picoseconds(0);
  compute_piece();
}

void Zero3Stage::compute_piece() {
  const Segment& s = segments_[current_];
  const Picoseconds until =
      next_all_to_all_ < s.all_to_alls_end ? all_to_alls_[next_all_to_all_].start : s.duration;
  const auto end = contention_->start(sim_->now(), std::max(Picoseconds(0), until - segment_done_));
  if (end) compute_moved(*end);  // else every SM is held: the collective that ends gives it
}

void Zero3Stage::compute_moved(Picoseconds end) {
  sim_->call_at(end, [this] {
    if (!contention_->ends_at(sim_->now())) return;  // moved again since
    contention_->finish();
    piece_done();
  });
}

void Zero3Stage::piece_done() {
  if (next_all_to_all_ < segments_[current_].all_to_alls_end) {
    return all_to_all_(all_to_alls_[next_all_to_all_]);
  }
  segment_done();
}

void Zero3Stage::all_to_all_done() {
  const TaskSpan& span = all_to_alls_[next_all_to_all_++];
  segment_done_ = span.start + span.length;
  compute_piece();
}

void Zero3Stage::segment_done() {
  const Segment& s = segments_[current_];
  if (s.reduce) queue_reduction({s.reduce_bytes, s.expert_reduce_bytes, s.across_replicas});
  if (offload_ && s.forward) return offload_->after_forward(s.layer, [this] { next_segment(); });
  next_segment();
}

void Zero3Stage::next_segment() {
  ++current_;
  if (current_ < task_end_) return start_segment();
  release_deferred();  // the end of the backward reduces what its bucket still holds
  if (work_.prefetch_units > 0) issue_gathers_up_to(current_);  // prefetch into the next task
  if (segments_[current_ - 1].wait_reduced && reductions_pending()) {
    waiting_reduced_ = true;  // reduction_done ends the task
    return;
  }
  std::function<void()> done = std::move(task_done_);
  done();
}

void Zero3Stage::queue_reduction(const Reduction& bytes) {
  if (work_.synchronize) {
    deferred_.bytes += bytes.bytes;
    deferred_.expert_bytes += bytes.expert_bytes;
    return;
  }
  const int buckets = work_.unit_reduce_buckets;
  for (int b = 0; b < buckets; ++b) {
    reductions_queued_.push_back(
        {bytes.bytes / buckets, bytes.expert_bytes / buckets, bytes.across_replicas});
  }
  next_reduction();
}

void Zero3Stage::release_deferred() {
  if (deferred_.bytes <= 0 && deferred_.expert_bytes <= 0) return;
  reductions_queued_.push_back(deferred_);
  deferred_ = {};
  next_reduction();
}

void Zero3Stage::next_reduction() {
  if (reductions_in_flight_ > 0 || reductions_queued_.empty() || !group_free()) return;
  const Reduction next = reductions_queued_.front();
  reductions_queued_.pop_front();
  ++reductions_in_flight_;
  reduced_bytes_ += next.bytes + next.expert_bytes;
  expert_reduced_bytes_ += next.expert_bytes;
  const double bytes = next.bytes;
  const bool across = next.across_replicas;
  const Picoseconds earliest = fetch_floor(bytes);
  dense_and_experts(
      CollectiveOp::kReduceScatter, bytes, next.expert_bytes, [this, bytes, across, earliest] {
        if (sim_->now() >= earliest) return reduce_scattered(bytes, across, false);
        sim_->call_at(earliest, [this, bytes, across] { reduce_scattered(bytes, across, true); });
      });
}

// Under hybrid sharding each rank's shard is then all-reduced across the groups holding it;
// under Hybrid-FSDP reduce-scattered, in the step's last backward only.
void Zero3Stage::reduce_scattered(double bytes, bool across_replicas, bool at_floor) {
  released_at_floor_ = at_floor;
  if (work_.replicas <= 1 || !across_replicas) return reduction_done();
  const double shard = bytes / work_.shard_ranks;
  replicated_bytes_ += shard;
  collective_(
      work_.optimizer_across_replicas ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
      DataParallelGroup::kReplicas, shard, [this] {
        released_at_floor_ = false;
        reduction_done();
      });
}

void Zero3Stage::reduction_done() {
  --reductions_in_flight_;
  next_reduction();
  if (work_.synchronize) {
    issue_gathers_up_to(current_);
    if (waiting_) start_compute();
  }
  if (reductions_pending()) return;
  if (waiting_reduced_) {
    waiting_reduced_ = false;
    std::function<void()> done = std::move(task_done_);
    done();
  }
  if (drained_) drained_();
}

}  // namespace clustersim
