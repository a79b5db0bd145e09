// Beam search's KV-cache blocks and the checks of a scenario's beam widths.
#include "sim/serve/beam_search.h"

#include <algorithm>

#include "sim/serve/serving_scenario.h"

namespace clustersim {

namespace s = schema;

int64_t beam_kv_blocks(int64_t prompt, int64_t tokens, int block_tokens, int beams) {
  const int64_t blocks = (tokens + block_tokens - 1) / block_tokens;
  const int64_t shared = prompt / block_tokens;  // full prompt blocks, before the last token's
  return std::min(blocks, shared) + beams * std::max<int64_t>(0, blocks - shared);
}

namespace {

// Whether the scenario turns prefix caching on explicitly (a runtime's default stays off under
// beam search, as the runtime does).
bool asks_prefix_caching(const s::ServingScenario& m) {
  const s::Scheduler& scheduler = m.deployment().scheduler();
  const auto& swept = m.sweep().prefix_caching();
  return (scheduler.prefix_caching().has_enabled() && scheduler.prefix_caching().enabled()) ||
         std::find(swept.begin(), swept.end(), true) != swept.end();
}

}  // namespace

void check_beam_widths(const FieldChecker& root, const Catalog& catalog) {
  const auto& m = static_cast<const s::ServingScenario&>(root.message());
  const s::ServingRuntime* runtime = serving_runtime(m, catalog);  // null: reported elsewhere
  const int widest = runtime && runtime->has_max_beam_width() ? runtime->max_beam_width() : 1;
  const auto check = [&](const FieldChecker& owner) {
    if (!owner.has("beam_width") || !owner.at_least("beam_width", 1) || runtime == nullptr) return;
    const int beams = static_cast<int>(owner.number("beam_width"));
    const std::string& name = runtime->name();
    if (beams > widest) {
      owner.error("beam_width",
                  widest == 1 ? "serving runtime \"" + name + "\" does no beam search (its "
                                "max_beam_width is absent): remove it or set it to 1"
                              : std::to_string(beams) + " beams are more than serving runtime \"" +
                                    name + "\" takes (max_beam_width " + std::to_string(widest) +
                                    ")");
    } else if (beams > 1 && m.deployment().has_disaggregation()) {
      owner.error("beam_width", "beam search on a disaggregated deployment is not simulated (its "
                                "prefill-to-decode hand-off carries one sequence's KV cache): "
                                "serve it on colocated replicas");
    } else if (beams > 1 && m.deployment().has_speculative_decoding()) {
      owner.error("beam_width", "beam search with speculative decoding is not simulated (a "
                                "verification keeps one sequence's accepted drafts): drop one");
    } else if (beams > 1 && asks_prefix_caching(m)) {
      // NVIDIA/TensorRT-LLM@002ba6a7 kvCacheManager.cpp BlockManager::releaseBlocks stores a
      // sequence's blocks for reuse only at beam width 1.
      owner.error("beam_width", "prefix caching does not apply to beam search (TensorRT-LLM "
                                "keeps blocks for reuse at beam width 1 only): drop "
                                "scheduler.prefix_caching.enabled or sweep.prefix_caching, or "
                                "the beams");
    }
  };
  if (m.has_traffic()) check(root.child("traffic"));
  for (int i = 0; i < m.benchmark_size(); ++i) check(root.child("benchmark", i));
}

}  // namespace clustersim
