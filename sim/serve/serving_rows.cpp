// The serving result columns and the rows of one evaluated deployment.
#include "sim/serve/serving_rows.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;
using Kind = ResultColumn::Kind;
using Drift = ResultColumn::Drift;

Table::Cell number(double value) { return Table::Cell(value); }

}  // namespace

const std::vector<ResultColumn>& serving_columns() {
  static const std::vector<ResultColumn> columns = {
      identity_column("index", "#", Kind::kInteger),
      configuration_column("instance", "instance", Kind::kText),
      configuration_column("nodes", "nodes", Kind::kInteger),
      configuration_column("gpus", "GPUs", Kind::kInteger),
      configuration_column("tensor_parallel", "TP", Kind::kInteger),
      configuration_column("pipeline_parallel", "PP", Kind::kInteger),
      configuration_column("replicas", "replicas", Kind::kInteger),
      configuration_column("prefill_instance", "P instance", Kind::kText),
      configuration_column("prefill_replicas", "P replicas", Kind::kInteger),
      configuration_column("prefill_tensor_parallel", "P TP", Kind::kInteger),
      configuration_column("prefill_pipeline_parallel", "P PP", Kind::kInteger),
      configuration_column("weights", "weights", Kind::kText),
      configuration_column("activations", "act", Kind::kText),
      configuration_column("kv_cache", "KV", Kind::kText),
      configuration_column("batching", "batching", Kind::kText),
      configuration_column("max_batch_size", "max batch", Kind::kInteger),
      configuration_column("max_tokens_per_iteration", "tokens/iter", Kind::kInteger),
      configuration_column("concurrency", "users", Kind::kInteger),
      configuration_column("billing", "billing", Kind::kText),
      identity_column("status", "status", Kind::kText),
      figure_column("memory_gib", "mem GiB", 1),
      figure_column("capacity_gib", "cap GiB", 1),
      figure_column("kv_cache_tokens", "KV tokens", 0),
      figure_column("prefill_memory_gib", "P mem GiB", 1),
      figure_column("prefill_kv_cache_tokens", "P KV tokens", 0),
      figure_column("ttft_mean_ms", "TTFT mean", 1),
      figure_column("ttft_p50_ms", "TTFT p50", 1),
      figure_column("ttft_p90_ms", "TTFT p90", 1),
      figure_column("ttft_p99_ms", "TTFT p99", 1),
      figure_column("tpot_mean_ms", "TPOT mean", 2),
      figure_column("tpot_p50_ms", "TPOT p50", 2),
      figure_column("tpot_p90_ms", "TPOT p90", 2),
      figure_column("tpot_p99_ms", "TPOT p99", 2),
      figure_column("e2e_mean_ms", "E2E mean", 0),
      figure_column("e2e_p50_ms", "E2E p50", 0),
      figure_column("e2e_p90_ms", "E2E p90", 0),
      figure_column("e2e_p99_ms", "E2E p99", 0),
      figure_column("kv_transfer_p50_ms", "KV xfer p50", 2),
      figure_column("kv_transfer_p99_ms", "KV xfer p99", 2),
      figure_column("output_tokens_per_s", "tokens/s", 0),
      figure_column("requests_per_s", "req/s", 2),
      // The share of time the replicas run an iteration, however small its batch (not the share
      // of the GPU's compute or bandwidth it uses): "iterating", not "utilization".
      {"gpu_utilization", "iterating", Kind::kReal, 3, Drift::kAbsolute, 1e-4},
      {"kv_cache_utilization", "KV used", Kind::kReal, 3, Drift::kAbsolute, 1e-4},
      figure_column("preemptions", "preempt", 0),
      figure_column("max_rate_per_s", "max req/s", 2),
      figure_column("price_per_hour", "price/h", 2),
      identity_column("currency", "cur", Kind::kText),
      identity_column("price_region", "region", Kind::kText),  // of the price paid (prices.region)
      // How far the prices paid can be relied on (price_book.h price_confidence): "read",
      // "user" (a user's price of no stated confidence) or "unverified" (second-hand: check it
      // before relying on the cost); empty where the row pays none.
      identity_column("price_confidence", "price src", Kind::kText),
      figure_column("cost_per_million_tokens", "per M tok", 3),
      identity_column("limiting", "limiting", Kind::kText),
      identity_column("calibrated", "calibrated", Kind::kBool),
      configuration_column("expert_parallel", "EP", Kind::kInteger),
      // Prefix caching: on or off, and the shares of prompt tokens and of requests found in the
      // cache (empty when no request carries a shared prefix).
      configuration_column("prefix_caching", "prefix cache", Kind::kBool),
      {"prefix_hit_tokens", "hit tok", Kind::kReal, 3, Drift::kAbsolute, 1e-4},
      {"prefix_hit_requests", "hit req", Kind::kReal, 3, Drift::kAbsolute, 1e-4},
      // Speculative decoding: draft tokens per iteration (0: off) and the tokens a sequence
      // kept per iteration on average.
      configuration_column("draft_tokens", "draft k", Kind::kInteger),
      figure_column("accepted_per_iteration", "accepted/iter", 2),
      // Attention data parallelism (each GPU its own requests; attention_data_parallel.h).
      configuration_column("attention_data_parallel", "attn DP", Kind::kBool),
      // Replicas (with prefill ones) sent any request, and the most with a request outstanding
      // at once: far below the replicas, the deployment is larger than its traffic needs.
      figure_column("replicas_used", "used", 0),
      figure_column("peak_busy_replicas", "busy peak", 0),
  };
  return columns;
}

const std::vector<ResultColumn>& sampled_serving_columns() {
  static const std::vector<ResultColumn> columns = [] {
    std::vector<ResultColumn> sampled = serving_columns();
    sampled.push_back(identity_column("samples", "samples", Kind::kInteger));
    sampled.push_back(figure_column("samples_meeting_slo", "met on", 0));
    sampled.push_back(figure_column("ttft_p99_worst_ms", "TTFT p99 worst", 1));
    sampled.push_back(figure_column("tpot_p99_worst_ms", "TPOT p99 worst", 2));
    sampled.push_back(figure_column("e2e_p99_worst_ms", "E2E p99 worst", 0));
    return sampled;
  }();
  return columns;
}

const std::vector<ResultColumn>& serving_columns(int samples) {
  return samples > 1 ? sampled_serving_columns() : serving_columns();
}

int serving_column(std::string_view key) {
  const int i = column_index(sampled_serving_columns(), key);
  CLUSTERSIM_CHECK(i >= 0, "unknown serving column");
  return i;
}

const char* verdict_ttft_p99_key(int samples) {
  return samples > 1 ? "ttft_p99_worst_ms" : "ttft_p99_ms";
}

int rows_samples(const std::vector<ResultRow>& rows) {
  const int column = serving_column("samples");
  for (const ResultRow& row : rows) {  // one sample's rows end before the samples column
    if (static_cast<int>(row.size()) <= column) continue;
    const double samples = row_number(row, column);
    if (samples > 1) return static_cast<int>(samples);
  }
  return 1;
}

std::vector<ResultRow> make_serving_rows(const ServingConfiguration& c, const ServingEvaluation& e,
                                         const ServingPrices& prices,
                                         std::optional<double> max_rate_per_s) {
  CLUSTERSIM_CHECK(e.error.empty(), "a row of a deployment that could not be built");
  ResultRow base(serving_columns(e.spread ? e.spread->samples : 1).size());
  const auto set = [&](const char* key, Table::Cell cell) { base[serving_column(key)] = cell; };
  const s::Scheduler& sc = c.scheduler;
  set("index", number(static_cast<double>(c.index)));
  set("instance", c.instance->name());
  set("nodes", number(c.nodes()));
  set("gpus", number(c.gpus()));
  set("tensor_parallel", number(c.tensor_parallel));
  set("pipeline_parallel", number(c.pipeline_parallel));
  set("replicas", number(c.replicas));
  set("expert_parallel", number(c.expert_parallel));
  set("attention_data_parallel", c.attention_data_parallel);
  const PoolShape none{0, 0, 0};  // colocated: no prefill pool
  const PoolShape& prefill = c.prefill ? *c.prefill : none;
  if (c.prefill) set("prefill_instance", c.prefill->instance->name());
  set("prefill_replicas", number(prefill.replicas));
  set("prefill_tensor_parallel", number(prefill.tensor_parallel));
  set("prefill_pipeline_parallel", number(prefill.pipeline_parallel));
  if (e.prefill_memory) {
    set("prefill_memory_gib", e.prefill_memory->used_bytes() / kBytesPerGibibyte);
    set("prefill_kv_cache_tokens",
        number(static_cast<double>(e.prefill_kv_blocks * sc.kv_block_tokens())));
  }
  set("weights", s::Precision_Name(e.formats.weights));
  set("activations", s::Precision_Name(e.formats.activations));
  set("kv_cache", s::Precision_Name(e.formats.kv_cache));
  set("batching", s::Batching_Name(sc.batching()));
  set("max_batch_size", number(sc.max_batch_size()));
  set("max_tokens_per_iteration", number(sc.max_tokens_per_iteration()));
  set("concurrency", number(c.concurrency));  // 0: open-loop traffic
  set("draft_tokens", number(c.draft_tokens));
  set("memory_gib", e.memory.used_bytes() / kBytesPerGibibyte);
  set("capacity_gib", e.memory.capacity_bytes / kBytesPerGibibyte);
  // A replica's KV tokens: under attention data parallelism its GPUs' pools together.
  const int64_t kv_pools = c.attention_data_parallel ? c.tensor_parallel : 1;
  if (e.kv_blocks > 0) {
    set("kv_cache_tokens",
        number(static_cast<double>(e.kv_blocks * sc.kv_block_tokens() * kv_pools)));
  }
  set("currency", s::Currency_Name(prices.currency));
  set("calibrated", e.calibrated);
  set("prefix_caching", e.prefix_caching);
  set("status", kStatusOk);
  if (e.spread) set("samples", number(e.spread->samples));
  if (!e.metrics) {
    set("status", kStatusOutOfMemory);
    set("limiting", e.out_of_memory);
  } else {
    const ServingMetrics& m = *e.metrics;
    const std::pair<const char*, const Percentiles*> series[] = {
        {"ttft", &m.ttft_ms}, {"tpot", &m.tpot_ms}, {"e2e", &m.e2e_ms}};
    for (const auto& [name, p] : series) {
      set((std::string(name) + "_mean_ms").c_str(), p->mean);
      set((std::string(name) + "_p50_ms").c_str(), p->p50);
      set((std::string(name) + "_p90_ms").c_str(), p->p90);
      set((std::string(name) + "_p99_ms").c_str(), p->p99);
    }
    if (m.kv_transfer_ms) {
      set("kv_transfer_p50_ms", m.kv_transfer_ms->p50);
      set("kv_transfer_p99_ms", m.kv_transfer_ms->p99);
    }
    set("output_tokens_per_s", m.output_tokens_per_s);
    set("requests_per_s", m.requests_per_s);
    set("gpu_utilization", m.gpu_utilization);
    set("kv_cache_utilization", m.kv_cache_utilization);
    set("preemptions", number(static_cast<double>(m.preemptions)));
    set("replicas_used", number(static_cast<double>(m.replicas_used)));
    set("peak_busy_replicas", number(static_cast<double>(m.peak_busy_replicas)));
    if (m.shared_prefixes) {
      set("prefix_hit_tokens", m.prefix_hit_tokens);
      set("prefix_hit_requests", m.prefix_hit_requests);
    }
    if (c.draft_tokens > 0) set("accepted_per_iteration", m.accepted_per_iteration);
    if (max_rate_per_s) set("max_rate_per_s", *max_rate_per_s);
    if (e.spread) {
      set("samples_meeting_slo", number(e.spread->meeting_slo));
      set("ttft_p99_worst_ms", e.spread->ttft_p99_worst_ms);
      set("tpot_p99_worst_ms", e.spread->tpot_p99_worst_ms);
      set("e2e_p99_worst_ms", e.spread->e2e_p99_worst_ms);
    }
    if (m.overloaded) {
      set("status", kStatusOverloaded);
      set("limiting", overload_text(m));
    } else if (!e.slo_violation.empty()) {
      set("status", kStatusMissesSlo);
      set("limiting", e.slo_violation);
    }
  }
  std::vector<ResultRow> rows;
  for (s::BillingMode billing : prices.billing_modes) {
    ResultRow& row = rows.emplace_back(base);
    row[serving_column("billing")] = s::BillingMode_Name(billing);
    const std::string region = deployment_price_region(prices, c, billing);
    if (!region.empty()) row[serving_column("price_region")] = region;  // read back as no cell
    const std::string confidence = deployment_prices_confidence(prices, c, billing);
    if (!confidence.empty()) row[serving_column("price_confidence")] = confidence;
    const std::optional<double> per_hour = deployment_per_hour(prices, c, billing);
    if (!per_hour) continue;
    row[serving_column("price_per_hour")] = *per_hour;
    if (e.metrics && e.metrics->output_tokens_per_s > 0) {
      row[serving_column("cost_per_million_tokens")] =
          cost_per_million_tokens(*per_hour, e.metrics->output_tokens_per_s);
    }
  }
  return rows;
}

std::vector<std::string> serving_summary_columns(bool closed_loop, bool speculative,
                                                 int samples) {
  // Latency against concurrency, as serving benchmarks tabulate it (their tables give means:
  // genai-perf's and trtllm-bench's averages, vLLM's mean and median).
  static const std::vector<std::string> by_concurrency = {"index",
                                                          "instance",
                                                          "replicas",
                                                          "prefill_replicas",
                                                          "tensor_parallel",
                                                          "weights",
                                                          "max_batch_size",
                                                          "concurrency",
                                                          "billing",
                                                          "status",
                                                          "ttft_mean_ms",
                                                          "ttft_p50_ms",
                                                          "ttft_p99_ms",
                                                          "tpot_mean_ms",
                                                          "tpot_p50_ms",
                                                          "tpot_p99_ms",
                                                          "e2e_p50_ms",
                                                          "e2e_p99_ms",
                                                          "output_tokens_per_s",
                                                          "requests_per_s",
                                                          "gpu_utilization",
                                                          "cost_per_million_tokens",
                                                          "currency",
                                                          "price_region",
                                                          "limiting"};
  static const std::vector<std::string> keys = {"index",
                                                "instance",
                                                "replicas",
                                                "tensor_parallel",
                                                "prefill_replicas",
                                                "pipeline_parallel",
                                                "weights",
                                                "batching",
                                                "max_batch_size",
                                                "billing",
                                                "status",
                                                "ttft_p99_ms",
                                                "tpot_p99_ms",
                                                "e2e_p99_ms",
                                                "output_tokens_per_s",
                                                "gpu_utilization",
                                                "kv_cache_utilization",
                                                "price_per_hour",
                                                "cost_per_million_tokens",
                                                "currency",
                                                "price_region",
                                                "limiting"};
  std::vector<std::string> shown = closed_loop ? by_concurrency : keys;
  if (speculative) {  // beside the latencies
    const auto at = std::find(shown.begin(), shown.end(), "output_tokens_per_s");
    shown.insert(shown.insert(at, "accepted_per_iteration"), "draft_tokens");
  }
  if (samples > 1) {
    shown.insert(shown.end() - 1, {"samples_meeting_slo", "samples", "ttft_p99_worst_ms",
                                   "tpot_p99_worst_ms"});
  }
  return shown;
}

Table serving_table(const std::vector<std::string>& keys, const std::vector<ResultRow>& rows) {
  return column_table(sampled_serving_columns(), keys, rows);
}

std::string describe_deployment(const ResultRow& r) {
  const auto n = [&](const char* key) { return format_number(row_number(r, serving_column(key))); };
  const auto t = [&](const char* key) { return row_text(r, serving_column(key)); };
  const bool disaggregated = row_number(r, serving_column("prefill_replicas")) > 0;
  // "x 1 replica", not "x 1 replicas".
  const bool one = row_number(r, serving_column("replicas")) == 1;
  const std::string replicas =
      n("replicas") + (disaggregated ? " decode" : "") + (one ? " replica" : " replicas");
  const std::string pools =
      disaggregated ? n("prefill_replicas") + " prefill (" + t("prefill_instance") + ", TP " +
                          n("prefill_tensor_parallel") + " PP " + n("prefill_pipeline_parallel") +
                          ") + " + replicas + ", TP "
                    : replicas + ", TP ";
  const bool closed_loop = row_number(r, serving_column("concurrency")) > 0;
  const bool expert_parallel = row_number(r, serving_column("expert_parallel")) > 1;
  const bool attention_dp = row_number(r, serving_column("attention_data_parallel")) > 0;
  const bool shared_prefixes = !std::isnan(row_number(r, serving_column("prefix_hit_tokens")));
  const bool caching = row_number(r, serving_column("prefix_caching")) > 0;
  const double draft_tokens = row_number(r, serving_column("draft_tokens"));
  return t("instance") + " x " + pools + n("tensor_parallel") + " PP " +
         n("pipeline_parallel") + (expert_parallel ? " EP " + n("expert_parallel") : "") +
         (attention_dp ? " attention DP" : "") + ", " + t("weights") + ", " + t("batching") +
         " batch " + n("max_batch_size") + ", " + t("billing") +
         (closed_loop ? ", " + n("concurrency") + " concurrent users" : "") +
         (shared_prefixes ? caching ? ", prefix caching on" : ", prefix caching off" : "") +
         (draft_tokens > 0 ? ", speculative k " + n("draft_tokens") : "");
}

}  // namespace clustersim
