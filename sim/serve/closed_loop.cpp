// The closed-loop client's users on the engine.
#include "sim/serve/closed_loop.h"

#include "sim/serve/traffic.h"

namespace clustersim {

ClosedLoopClient::ClosedLoopClient(const schema::Traffic& traffic, int concurrency)
    : traffic_(traffic),
      users_(concurrency),
      think_(Picoseconds::from_seconds(traffic.closed_loop().think_time_s())),
      limit_(traffic.closed_loop().requests()),
      horizon_s_(limit_ > 0 ? kMaxTraffic_s : traffic_duration_s(traffic)),
      rng_(traffic.has_seed() ? traffic.seed() : 1),
      prefixes_(traffic) {}

void ClosedLoopClient::start(Simulation* sim, std::function<void(int32_t request)> arrive) {
  sim_ = sim;
  arrive_ = std::move(arrive);
  for (int user = 0; user < users_; ++user) sim_->schedule_at(Picoseconds(), this, user);
}

void ClosedLoopClient::finished(int32_t request) {
  sim_->schedule_at(sim_->now() + think_, this, user_of_[request]);
}

void ClosedLoopClient::on_event(uint64_t user) {
  const Picoseconds now = sim_->now();
  const bool all_sent = limit_ > 0 && static_cast<int64_t>(requests_.size()) >= limit_;
  if (all_sent || now.seconds() >= horizon_s_) {
    cut_short_ = cut_short_ || (limit_ > 0 && !all_sent);
    return;
  }
  if (static_cast<int64_t>(requests_.size()) == kMaxRequests) {
    cut_short_ = true;
    return;
  }
  Request r;
  r.arrival_s = now.seconds();
  r.input_tokens = draw_length(traffic_.input_tokens(), &rng_);
  r.output_tokens = draw_length(traffic_.output_tokens(), &rng_);
  prefixes_.assign(&r);
  requests_.push_back(r);
  user_of_.push_back(static_cast<int32_t>(user));
  arrive_(static_cast<int32_t>(requests_.size() - 1));
}

}  // namespace clustersim
