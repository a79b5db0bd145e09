// Abandoning long computations on request (Ctrl-C, SIGTERM from a batch scheduler): a flag that
// a signal handler may set, and the checks that turn it into an `Interrupted` exception inside
// the engine's event loop (Simulation::run) and the loops over many configurations.
//
// The flag a thread checks is installed for a scope (InterruptionScope), not passed down: every
// model that builds a Simulation would otherwise carry a parameter none of them has a use for.
// A thread without a scope is never interrupted.
#pragma once

#include <atomic>
#include <exception>

namespace clustersim {

class Interruption {
 public:
  // Async-signal-safe (a lock-free atomic store): may be called from a signal handler.
  void request() noexcept { requested_.store(true, std::memory_order_relaxed); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> requested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
};

// What an interrupted computation throws; nothing it computed is kept.
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};

// Makes `interruption` (may be null: none) the one this thread's computations check, until the
// scope ends (the previous one is restored). Requires: `interruption` outlives the scope.
class InterruptionScope {
 public:
  explicit InterruptionScope(const Interruption* interruption);
  ~InterruptionScope();
  InterruptionScope(const InterruptionScope&) = delete;
  InterruptionScope& operator=(const InterruptionScope&) = delete;

 private:
  const Interruption* previous_;
};

// Throws Interrupted when this thread's interruption has been requested. Cost: a thread-local
// read and a relaxed atomic load.
void check_interruption();

}  // namespace clustersim
