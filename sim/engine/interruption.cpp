// The interruption each thread checks.
#include "sim/engine/interruption.h"

namespace clustersim {
namespace {

thread_local const Interruption* current = nullptr;

}  // namespace

InterruptionScope::InterruptionScope(const Interruption* interruption) : previous_(current) {
  current = interruption;
}

InterruptionScope::~InterruptionScope() { current = previous_; }

void check_interruption() {
  if (current && current->requested()) throw Interrupted();
}

}  // namespace clustersim
