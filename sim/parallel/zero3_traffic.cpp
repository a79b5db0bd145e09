// ZeRO-3 layer-by-layer execution of a stage's tasks: gathers, compute segments, reduce-scatters.
#include "sim/parallel/zero3_traffic.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// Part `i` of `total` split into `parts` stretches that add up to it exactly.
Picoseconds share(Picoseconds total, int parts, int i) {
  return Picoseconds(total.count() * (i + 1) / parts - total.count() * i / parts);
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

void make_fetch_synchronous(Zero3Work* work) {
  work->prefetch_units = 0;
  work->fetch_bytes_per_s = kDeepSpeed2021FetchBytesPerSecond;
}

void make_fsdp2(Zero3Work* work) {
  work->prefetch_units = 1;
  work->unit_reduce_buckets = 1;
  work->regather_for_backward = false;
}

Zero3Stage::Zero3Stage(const Zero3Work& work, const std::vector<PipelineTask>& tasks,
                       Picoseconds forward, Picoseconds backward, Simulation* simulation,
                       DataParallelCollective collective)
    : work_(work), sim_(simulation), collective_(std::move(collective)) {
  CLUSTERSIM_CHECK(work.units > 0 && work.prefetch_units >= 0 && work.unit_reduce_buckets > 0,
                   "ZeRO-3 work needs layers, a prefetch window and reduce buckets");
  const int units = work.units;
  for (const PipelineTask& task : tasks) {
    task_begin_.push_back(segments_.size());
    for (int u = 0; u < units; ++u) {
      if (task.forward) {
        segments_.push_back({share(forward, units, u), true, false, false, true, u});
      } else if (work.recompute > Picoseconds(0)) {
        segments_.push_back({share(work.recompute, units, u), true, false});
        segments_.push_back(
            {share(backward - work.recompute, units, u), work.regather_for_backward, true});
      } else {
        segments_.push_back({share(backward, units, u), true, true, false, false, units - 1 - u});
      }
    }
  }
  task_begin_.push_back(segments_.size());
  if (work.offload.layers > 0) {
    CLUSTERSIM_CHECK(work.recompute == Picoseconds(0), "activation offload without recomputation");
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

// Issues, in order and one at a time, the gathers of segments up to `prefetch_units` gathers
// past the one `segment` needs.
void Zero3Stage::issue_gathers_up_to(size_t segment) {
  if (gather_in_flight_) return;
  // Gathers already needed by `segment` or within the prefetch window after it.
  int ahead = 0;
  size_t limit = segment;
  while (limit < segments_.size()) {
    if (segments_[limit].gather && limit > segment && ++ahead > work_.prefetch_units) break;
    ++limit;
  }
  while (gather_issued_ < limit && !segments_[gather_issued_].gather) {
    segments_[gather_issued_++].gathered = true;
  }
  if (gather_issued_ >= limit) return;
  const size_t target = gather_issued_++;
  gather_in_flight_ = true;
  gathered_bytes_ += work_.unit_gather_bytes;
  // The fetch path's own rate, when it is slower than the network.
  const Picoseconds earliest =
      work_.fetch_bytes_per_s > 0
          ? sim_->now() +
                Picoseconds::from_seconds(work_.unit_gather_bytes / work_.fetch_bytes_per_s)
          : sim_->now();
  collective_(CollectiveOp::kAllGather, work_.unit_gather_bytes, [this, target, earliest] {
    if (sim_->now() >= earliest) return gather_done(target);
    sim_->call_at(earliest, [this, target] { gather_done(target); });
  });
}

void Zero3Stage::gather_done(size_t segment) {
  gather_in_flight_ = false;
  segments_[segment].gathered = true;
  if (waiting_ && segment == current_) {
    waiting_ = false;
    waited_ += sim_->now() - wait_start_;
    start_compute();
  } else {
    issue_gathers_up_to(current_);
  }
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
  // with the weights of the gather before it.
  issue_gathers_up_to(current_);
  if (!segments_[current_].gathered) {
    waiting_ = true;
    wait_start_ = sim_->now();
    return;
  }
  sim_->call_after(segments_[current_].duration, [this] { segment_done(); });
}

void Zero3Stage::segment_done() {
  const Segment& s = segments_[current_];
  if (s.reduce) queue_reduction();
  if (offload_ && s.forward) return offload_->after_forward(s.layer, [this] { next_segment(); });
  next_segment();
}

void Zero3Stage::next_segment() {
  ++current_;
  if (current_ < task_end_) return start_segment();
  if (work_.prefetch_units > 0) issue_gathers_up_to(current_);  // prefetch into the next task
  std::function<void()> done = std::move(task_done_);
  done();
}

void Zero3Stage::queue_reduction() {
  reductions_queued_ += work_.unit_reduce_buckets;
  next_reduction();
}

void Zero3Stage::next_reduction() {
  if (reductions_in_flight_ > 0 || reductions_queued_ == 0) return;
  --reductions_queued_;
  ++reductions_in_flight_;
  const double bytes = work_.unit_gradient_bytes / work_.unit_reduce_buckets;
  reduced_bytes_ += bytes;
  collective_(CollectiveOp::kReduceScatter, bytes, [this] {
    --reductions_in_flight_;
    next_reduction();
    if (!reductions_pending() && drained_) drained_();
  });
}

}  // namespace clustersim
