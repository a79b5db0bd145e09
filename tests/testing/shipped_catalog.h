// The catalog shipped in models/ and topologies/, loaded once for all tests that need it.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "sim/io/catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim::testing {

// Requires: the shipped catalog loads without any diagnostic (checked here).
inline const Catalog& shipped_catalog() {
  static const std::unique_ptr<Catalog> catalog = [] {
    Diagnostics diagnostics;
    auto loaded = Catalog::load({source_path("models"), source_path("topologies")}, &diagnostics);
    INFO(diagnostics.to_string());
    REQUIRE(diagnostics.all().empty());  // no error and no warning (every entry has a source)
    return loaded;
  }();
  return *catalog;
}

// Entries of the shipped catalog. Requires: the name is in it.
inline const schema::InstanceType& shipped_instance(const std::string& name) {
  return *shipped_catalog().instances().find(name)->value;
}
inline const schema::Model& shipped_model(const std::string& name) {
  return *shipped_catalog().models().find(name)->value;
}

}  // namespace clustersim::testing
