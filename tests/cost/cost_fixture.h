// A scenario with a `cost` block loaded into a cost model, for the tests of sim/cost.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "sim/cost/cost_model.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim::testing {

// Llama-2 7B on `instance` nodes, with the given `cost { ... }` body.
inline std::string cost_scenario(const std::string& cost,
                                 const std::string& instance = "instance: \"aws.p4d.24xlarge\"") {
  return "name: \"t\"\nmodel: \"llama2-7b\"\njob {\n  global_batch_size: 64\n"
         "  sequence_length: 4096\n  precision: BF16\n  optimizer: ADAM\n  token_budget: 1e9\n}\n"
         "cluster {\n  " +
         instance + "\n  nodes: 2\n}\nparallelism {\n  zero_stage: 1\n}\ncost {\n" + cost + "\n}\n";
}

struct LoadedCost {
  TempDir dir;
  std::unique_ptr<LoadedScenario> scenario;
  std::unique_ptr<TextFile<schema::PriceFile>> price_file;
  std::unique_ptr<CostModel> model;  // null after an error
  std::string diagnostics;           // paths relative to the temp dir
};

// Loads scenario `text` (as "s.textproto") and, when given, price file `prices` ("p.textproto").
inline std::unique_ptr<LoadedCost> load_cost(const std::string& text,
                                             const std::string& prices = "") {
  auto loaded = std::make_unique<LoadedCost>();
  Diagnostics diagnostics;
  loaded->scenario =
      load_scenario(loaded->dir.write("s.textproto", text), shipped_catalog(), &diagnostics);
  if (!prices.empty()) {
    loaded->price_file =
        read_text_file<schema::PriceFile>(loaded->dir.write("p.textproto", prices), &diagnostics);
  }
  if (loaded->scenario && (prices.empty() || loaded->price_file)) {
    loaded->model = load_cost_model(*loaded->scenario, shipped_catalog(), loaded->price_file.get(),
                                    &diagnostics);
  }
  loaded->diagnostics = diagnostics.to_string();
  const std::string prefix = loaded->dir.path() + "/";
  for (size_t at; (at = loaded->diagnostics.find(prefix)) != std::string::npos;) {
    loaded->diagnostics.erase(at, prefix.size());
  }
  return loaded;
}

}  // namespace clustersim::testing
