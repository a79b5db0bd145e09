// The one interruption the signal handlers request.
#include "tools/clustersim/stop_signals.h"

#include <csignal>

namespace clustersim::cli {
namespace {

Interruption interruption;
extern "C" void request_stop(int) { interruption.request(); }

}  // namespace

const Interruption* stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  return &interruption;
}

}  // namespace clustersim::cli
