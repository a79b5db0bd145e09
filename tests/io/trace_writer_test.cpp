// Tests of the Chrome trace output: metadata naming groups and tracks, complete events in us,
// and what the trace shows in its otherData.
#include "sim/io/trace_writer.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace clustersim {
namespace {

TEST_CASE("a timeline becomes named processes and threads with complete events in microseconds") {
  Timeline t;
  t.add("stage 0", "compute", "forward mb 0", Picoseconds(0), Picoseconds(2'500'000));
  t.add("stage 0", "send (network)", "activations \"mb\" 0", Picoseconds(2'500'000),
        Picoseconds(3'000'000));
  std::ostringstream out;
  write_chrome_trace(t, {{"configuration", "p5 x 1"}, {"tool_version", "0.1.0"}}, out);
  CHECK(out.str() ==
        "{\"traceEvents\": [\n"
        "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"stage "
        "0\"}},\n"
        "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": "
        "\"compute\"}},\n"
        "{\"ph\": \"X\", \"name\": \"forward mb 0\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": "
        "2.5},\n"
        "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 2, \"args\": {\"name\": "
        "\"send (network)\"}},\n"
        "{\"ph\": \"X\", \"name\": \"activations \\\"mb\\\" 0\", \"pid\": 1, \"tid\": 2, \"ts\": "
        "2.5, \"dur\": 0.5}\n"
        "], \"displayTimeUnit\": \"ms\", \"otherData\": {\"configuration\": \"p5 x 1\", "
        "\"tool_version\": \"0.1.0\"}}\n");
}

}  // namespace
}  // namespace clustersim
