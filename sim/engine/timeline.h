// A record of what ran when: spans on named tracks, grouped (a pipeline stage, the network).
// Filled by simulations that are asked to; written out by io/trace_writer.h.
#pragma once

#include <string>
#include <vector>

#include "sim/util/units.h"

namespace clustersim {

struct TimelineSpan {
  std::string group;  // e.g. "stage 0"
  std::string track;  // e.g. "compute", "network"
  std::string name;   // e.g. "forward mb 3"
  Picoseconds start, end;
};

class Timeline {
 public:
  void add(std::string group, std::string track, std::string name, Picoseconds start,
           Picoseconds end) {
    spans_.push_back({std::move(group), std::move(track), std::move(name), start, end});
  }
  // Delays every span recorded so far by `wait` and records [0, wait) on `track` of `group`
  // before them: what the recorded work waited for before it could begin (a step's data stall).
  void begin_with_wait(std::string group, std::string track, std::string name, Picoseconds wait) {
    for (TimelineSpan& s : spans_) {
      s.start += wait;
      s.end += wait;
    }
    spans_.insert(spans_.begin(),
                  {std::move(group), std::move(track), std::move(name), Picoseconds(0), wait});
  }
  const std::vector<TimelineSpan>& spans() const { return spans_; }

 private:
  std::vector<TimelineSpan> spans_;
};

}  // namespace clustersim
