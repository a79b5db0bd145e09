// Loading a serving scenario: parsing, checking every field (file:line:col: field.path:
// message), resolving the model, candidate instances and serving runtime against the catalog,
// and reading its trace file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/io/text_file.h"
#include "sim/serve/traffic.h"

namespace clustersim {

// A checked serving scenario. Pointers point into the catalog, which must outlive it.
// Immutable; safe to share between threads.
struct LoadedServingScenario {
  std::unique_ptr<TextFile<schema::ServingScenario>> file;
  const schema::Model* model = nullptr;
  // The candidate instance types: sweep.instance if given, else deployment.instance.
  std::vector<const schema::InstanceType*> instances;
  std::vector<Request> trace;  // the trace file's requests, when the traffic names one
  // Disaggregated: a pool's own instance type (disaggregation.prefill/decode.instance), or null.
  const schema::InstanceType* prefill_instance = nullptr;
  const schema::InstanceType* decode_instance = nullptr;
  // deployment.speculative_decoding's draft model, or null (none, or the model's own layers).
  const schema::Model* draft_model = nullptr;

  const schema::ServingScenario& scenario() const { return file->message; }
};

// The most deployments a serving sweep may make: each one's rows (about 4 KB) are held for the
// ranking, 4 GB at this bound (131,072 deployments: 8.5 s and 0.5 GB on a 2-core machine).
inline constexpr int64_t kMaxServingDeployments = int64_t{1} << 20;

// Reads, checks and resolves the serving scenario at `path`. Every problem goes to
// `diagnostics`. Returns nullptr when there was any error.
std::unique_ptr<LoadedServingScenario> load_serving_scenario(const std::string& path,
                                                             const Catalog& catalog,
                                                             Diagnostics* diagnostics);

// The most tokens one request of the scenario's traffic (or trace) holds, prompt and output, and
// its longest prompt (benchmark runs' included); 0 when the traffic is malformed.
int64_t longest_request_tokens(const LoadedServingScenario& loaded);
int longest_prompt_tokens(const LoadedServingScenario& loaded);

// Whether some request of the scenario's traffic begins with a shared prefix
// (traffic.shared_prefix, or a trace line with prefix columns).
bool has_shared_prefixes(const LoadedServingScenario& loaded);

// Whether the scenario file at `path` is a serving scenario (it has a top-level `deployment`,
// `traffic` or `benchmark`) rather than a training one. False when it cannot be read.
bool is_serving_scenario_file(const std::string& path);

// The serving runtime a scenario uses (deployment.runtime, "tensorrt-llm" when absent), or null.
const schema::ServingRuntime* serving_runtime(const schema::ServingScenario& scenario,
                                              const Catalog& catalog);

}  // namespace clustersim
