// Loading scenarios a test writes against the shipped catalog: a valid one, or the diagnostics of
// a broken one.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "sim/io/scenario_loader.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim::testing {

// The scenario `text`, written to `file_name` in `dir`. Requires: it loads (the test fails
// otherwise, showing the diagnostics).
inline std::unique_ptr<LoadedScenario> load_valid_scenario(
    const TempDir& dir, const std::string& text, const std::string& file_name = "s.textproto") {
  Diagnostics diagnostics;
  auto loaded = load_scenario(dir.write(file_name, text), shipped_catalog(), &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  return loaded;
}

// Diagnostics of loading `text` as scenario file "s.textproto" (file names relative to the
// temporary directory it is written to). Checks that it loads exactly when there is no error.
inline std::string scenario_errors(const std::string& text) {
  TempDir dir;
  Diagnostics diagnostics;
  auto loaded = load_scenario(dir.write("s.textproto", text), shipped_catalog(), &diagnostics);
  CHECK((loaded == nullptr) == diagnostics.has_errors());
  return dir.relative(diagnostics.to_string());
}

}  // namespace clustersim::testing
