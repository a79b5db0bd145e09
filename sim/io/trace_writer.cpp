// Chrome trace JSON output.
#include "sim/io/trace_writer.h"

#include <map>
#include <string>
#include <vector>

#include "sim/io/table.h"
#include "sim/util/number_format.h"

namespace clustersim {

void write_chrome_trace(const Timeline& timeline, const TraceMetadata& metadata,
                        std::ostream& out) {
  std::map<std::string, int> group_ids;
  std::map<std::pair<std::string, std::string>, int> track_ids;
  std::vector<std::string> events;
  for (const TimelineSpan& s : timeline.spans()) {
    auto [g, new_group] = group_ids.try_emplace(s.group, static_cast<int>(group_ids.size()) + 1);
    if (new_group) {
      events.push_back(R"({"ph": "M", "name": "process_name", "pid": )" +
                       std::to_string(g->second) + R"(, "args": {"name": )" + json_quote(s.group) +
                       "}}");
    }
    auto [t, new_track] =
        track_ids.try_emplace({s.group, s.track}, static_cast<int>(track_ids.size()) + 1);
    if (new_track) {
      events.push_back(R"({"ph": "M", "name": "thread_name", "pid": )" + std::to_string(g->second) +
                       R"(, "tid": )" + std::to_string(t->second) + R"(, "args": {"name": )" +
                       json_quote(s.track) + "}}");
    }
    events.push_back(R"({"ph": "X", "name": )" + json_quote(s.name) + R"(, "pid": )" +
                     std::to_string(g->second) + R"(, "tid": )" + std::to_string(t->second) +
                     R"(, "ts": )" + format_number(s.start.microseconds()) + R"(, "dur": )" +
                     format_number((s.end - s.start).microseconds()) + "}");
  }
  out << "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) out << (i ? ",\n" : "") << events[i];
  out << "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {";
  const char* separator = "";
  for (const auto& [key, value] : metadata) {
    out << separator << json_quote(key) << ": " << json_quote(value);
    separator = ", ";
  }
  out << "}}\n";
}

}  // namespace clustersim
