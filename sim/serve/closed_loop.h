// A closed-loop client (traffic.closed_loop), as serving benchmarks run one (vLLM's
// benchmark_serving with --max-concurrency, genai-perf's concurrency mode): N users, each
// sending its first request at time 0 and its next one a think time after its previous one's last
// token, so that at most N requests are ever in flight. The users share the deployment's load
// balancer. Requests are made as they are sent, their lengths (and prefixes) drawn from the
// traffic's distributions in that order (request k has the same lengths at every concurrency);
// the client stops after its request count, or sends nothing at or after the traffic's duration.
// Seeded and driven by the engine's event order: deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/shared_prefix.h"

namespace clustersim {

// The most users a closed loop may have (traffic.closed_loop.concurrency, sweep.concurrency): each
// user is an event in flight, and a million concurrent requests is beyond any one deployment.
inline constexpr int kMaxClosedLoopUsers = 1 << 20;
inline constexpr double kMaxThinkTime_s = 86400;  // a day between a user's requests

class ClosedLoopClient final : public RequestSource, public EventHandler {
 public:
  // Requires: checked traffic with closed_loop; concurrency >= 1 (the scenario's or a swept
  // level).
  ClosedLoopClient(const schema::Traffic& traffic, int concurrency);

  const std::vector<Request>& requests() const override { return requests_; }
  void start(Simulation* sim, std::function<void(int32_t request)> arrive) override;
  void finished(int32_t request) override;
  // Whether a user had a request to send when the client reached kMaxRequests requests or
  // kMaxTraffic_s of simulated time: the run was cut short.
  bool cut_short() const { return cut_short_; }

 private:
  void on_event(uint64_t user) override;  // the user sends its next request now

  const schema::Traffic& traffic_;
  const int users_;
  const Picoseconds think_;
  const int64_t limit_;         // requests in all; 0: until the horizon
  const double horizon_s_;      // no request is sent at or after it (kMaxTraffic_s with a limit)
  std::mt19937_64 rng_;
  PrefixDraws prefixes_;
  std::vector<Request> requests_;
  std::vector<int32_t> user_of_;  // per request
  Simulation* sim_ = nullptr;
  std::function<void(int32_t)> arrive_;
  bool cut_short_ = false;
};

}  // namespace clustersim
