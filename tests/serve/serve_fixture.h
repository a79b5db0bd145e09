// Serving pieces built from the shipped catalog, and serving scenarios loaded from text, for the
// tests of sim/serve.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "sim/serve/iteration_model.h"
#include "sim/serve/serving_default_fit.h"
#include "sim/serve/serving_scenario.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim::testing {

// The inputs of a TP-1 iteration model of `model` on `gpu` at `formats` with TensorRT-LLM's fit
// (its form factor's default where the GPU has none).
inline IterationInputs single_gpu_inputs(const std::string& model, const std::string& gpu,
                                         const TensorFormats& formats) {
  const Catalog& catalog = shipped_catalog();
  IterationInputs in;
  in.model = &catalog.models().find(model)->value->transformer();
  in.formats = formats;
  in.gpu = catalog.gpus().find(gpu)->value;
  in.runtime = catalog.runtimes().find("default")->value;
  in.serving = catalog.serving_runtimes().find("tensorrt-llm")->value;
  bool calibrated = true;
  in.fit = serving_gpu_fit(*in.serving, *in.gpu, &calibrated);
  return in;
}

// An iteration prefilling `count` whole prompts of `length` tokens (a static batch's context phase
// when `static_prefill`).
inline IterationWork prompts(int64_t count, int64_t length, bool static_prefill = false) {
  IterationWork w{count * length, count, 0, 0, static_prefill};
  for (int64_t i = 0; i < count; ++i) add_prompt_chunk(&w, 0, length);
  return w;
}

// A serving scenario written to a temporary directory and loaded against the shipped catalog.
struct ScenarioUnderTest {
  TempDir dir;
  Diagnostics diagnostics;
  std::unique_ptr<LoadedServingScenario> loaded;
  // Diagnostics with the temporary directory's path removed.
  std::string messages() const { return dir.relative(diagnostics.to_string()); }
};

inline std::unique_ptr<ScenarioUnderTest> load_serving_text(const std::string& text,
                                                           const std::string& trace = "") {
  auto t = std::make_unique<ScenarioUnderTest>();
  if (!trace.empty()) t->dir.write("trace.csv", trace);
  const std::string path = t->dir.write("s.textproto", text);
  t->loaded = load_serving_scenario(path, shipped_catalog(), &t->diagnostics);
  return t;
}

}  // namespace clustersim::testing
