// Field checks of cost settings and price overrides, reported at file:line with the field path.
#include "sim/cost/cost_checks.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <set>
#include <utility>

#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/interruption_rate.h"
#include "sim/cost/run_simulation.h"
#include "sim/io/catalog_reference.h"
#include "sim/io/entry_checks.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/util/closest_name.h"
#include "sim/util/lower_case.h"

namespace clustersim {
namespace {

namespace s = schema;

// The most checkpoints a volume keeps: far beyond practice (a handful), so that keep x a
// checkpoint's size stays a finite capacity to compare.
constexpr int kMaxCheckpointsKept = 1000;

bool has_spot(const s::Cost& cost) {
  for (int billing : cost.billing()) {
    if (billing == s::SPOT) return true;
  }
  return false;
}

// The most nodes a configuration of the scenario has: its largest node count, or its largest
// pools together.
int64_t most_nodes(const s::Scenario& m) {
  int64_t most = m.cluster().nodes();
  for (int n : m.sweep().nodes()) most = std::max<int64_t>(most, n);
  int64_t pools = 0;
  for (const s::Pool& pool : m.cluster().pool()) pools += pool.nodes();
  most = std::max(most, pools);
  pools = 0;
  for (const s::PoolAxis& pool : m.sweep().pool()) {
    int64_t largest = 0;
    for (int n : pool.nodes()) largest = std::max<int64_t>(largest, n);
    pools += largest;
  }
  return std::max<int64_t>({most, pools, 1});
}

// The volume holds the `keep` checkpoints kept: a shared file system the whole of each, a block
// volume (one per node) its node's share, at least that of the most nodes the scenario tries (each
// configuration's own share is checked when it is costed: plan_checkpoints). A volume of 1 GiB took
// Llama-2-7B's 88 GiB checkpoint, timed at the tier's rate; the dataset's volume is refused
// likewise.
void check_checkpoint_fits(const FieldChecker& volume, const s::StorageTier& tier,
                           const LoadedScenario& scenario, int keep) {
  const s::TrainingJob& job = scenario.scenario().job();
  if (scenario.model == nullptr || job.precision() == s::PRECISION_UNSPECIFIED) return;
  const std::string problem =
      checkpoint_volume_problem(*scenario.model, job, most_nodes(scenario.scenario()), keep, tier,
                                volume.number("capacity_gib"), ", the most the scenario has");
  if (!problem.empty()) volume.error("capacity_gib", problem);
}

// One volume per provider, and one for the provider of every candidate instance; each holds the
// checkpoints kept (`keep`; 0: unknown, keep is in error).
void check_volumes(const FieldChecker& checkpoint, const Catalog& catalog,
                   const LoadedScenario& scenario, int keep) {
  std::set<int> providers;
  for (int i = 0; i < checkpoint.size("volume"); ++i) {
    const s::StorageTier* tier = resolve_storage_volume(checkpoint.child("volume", i), catalog);
    if (tier != nullptr && keep > 0) {
      check_checkpoint_fits(checkpoint.child("volume", i), *tier, scenario, keep);
    }
    if (tier != nullptr && !providers.insert(tier->provider()).second) {
      checkpoint.error("volume", "a second volume of " + s::Provider_Name(tier->provider()), i);
    }
  }
  if (providers.size() != static_cast<size_t>(checkpoint.size("volume"))) return;
  for (const s::InstanceType* instance : scenario.instances) {
    if (!providers.count(instance->provider())) {
      checkpoint.error("volume", "has none of provider " + s::Provider_Name(instance->provider()) +
                                     " for \"" + instance->name() + "\"");
      return;
    }
  }
}

// A preemption saved in its notice needs spot preemptions, and a candidate instance whose provider
// states a notice (else the setting changes nothing).
void check_notice_save(const FieldChecker& checkpoint, const s::Cost& m, const Catalog& catalog,
                       const LoadedScenario& scenario) {
  if (!has_spot(m)) {
    checkpoint.error("save_on_preemption_notice",
                     "needs SPOT billing (only spot instances are preempted), which billing omits");
    return;
  }
  if (m.preemptions_per_instance_hour() <= 0) {
    checkpoint.warning("save_on_preemption_notice",
                       "changes nothing: no preemptions (preemptions_per_instance_hour is 0)");
    return;
  }
  for (const s::InstanceType* instance : scenario.instances) {
    const CatalogEntry<s::ProviderTerms>* terms =
        catalog.providers().find(lower_case(s::Provider_Name(instance->provider())));
    if (terms != nullptr && terms->value->has_spot_interruption_notice_s()) return;
  }
  checkpoint.warning("save_on_preemption_notice",
                     "changes nothing: the catalog states no spot interruption notice for the "
                     "provider of any candidate instance (a provider entry's "
                     "spot_interruption_notice_s)");
}

// The checkpoints a volume must hold (checkpoints_kept), or 0 where `keep` is out of range
// (check_checkpoint reports it): the volumes are then checked without the capacity they need.
int checkable_checkpoints_kept(const s::Checkpoint& checkpoint) {
  const bool keep_valid = !checkpoint.has_keep() ||
                          (checkpoint.keep() >= 1 && checkpoint.keep() <= kMaxCheckpointsKept);
  return keep_valid ? checkpoints_kept(checkpoint) : 0;
}

void check_checkpoint(const FieldChecker& checkpoint, const Catalog& catalog,
                      const LoadedScenario& scenario, bool interrupted) {
  if (checkpoint.has("keep")) checkpoint.in_range("keep", 1, kMaxCheckpointsKept);
  const int keep =
      checkable_checkpoints_kept(static_cast<const s::Checkpoint&>(checkpoint.message()));
  // sweep.checkpoint_storage replaces the volumes (check_checkpoint_storage checks its values);
  // any given beside it are checked all the same.
  const bool swept = scenario.scenario().sweep().checkpoint_storage_size() > 0;
  if (swept ? checkpoint.has("volume") : checkpoint.require("volume")) {
    check_volumes(checkpoint, catalog, scenario, keep);
  }
  // Beyond the most work a run may hold, an interval is never reached (1e300 was printed whole).
  if (checkpoint.positive("interval_s")) checkpoint.in_range("interval_s", 0, kMaxRunWorkSeconds);
  if (!interrupted && !checkpoint.has("interval_s")) {
    checkpoint.error("interval_s",
                     "is required when nothing interrupts a run (the optimum is computed for an "
                     "interruptions_per_node_hour > 0, or a preemptions_per_instance_hour > 0 "
                     "with SPOT billing)");
  }
}

// A rate of interruptions a scenario states: 0, or within the simulated range. False when not.
bool check_rate(const FieldChecker& cost, std::string_view field) {
  if (!cost.non_negative(field)) return false;
  return cost.number(field) == 0 ||
         cost.in_range(field, kMinPreemptionsPerInstanceHour, kMaxPreemptionsPerInstanceHour);
}

// What interrupts a scenario's runs (at least one of spot preemptions and faults), for the
// error that asks for their restart.
std::string interruption_causes(bool preempted, bool faults, bool fault_rate_stated) {
  const std::string fault_text = fault_rate_stated ? "faults"
                                                   : "faults (interruptions_per_node_hour "
                                                     "absent: the default rate, Llama 3's; 0 "
                                                     "models none)";
  if (preempted && faults) return "spot preemptions and " + fault_text;
  return preempted ? "spot preemptions" : fault_text;
}

// A region some catalog price names: a misspelt one would leave every ambiguous price ambiguous
// and every other price where it is, silently.
void check_region(const FieldChecker& prices, const Catalog& catalog) {
  if (!prices.has("region")) return;
  const std::string& region = static_cast<const s::PriceFile&>(prices.message()).region();
  std::set<std::string> regions;
  for (const auto& [name, entry] : catalog.instances().all()) {
    for (const s::Price& p : entry.value->price()) {
      if (!p.region().empty()) regions.insert(p.region());
    }
  }
  if (regions.count(region)) return;
  std::string listed;
  for (const std::string& r : regions) listed += (listed.empty() ? "" : ", ") + r;
  prices.error("region", "\"" + region + "\" is named by no catalog price" +
                             did_you_mean(region, {regions.begin(), regions.end()}) +
                             " (regions: " + listed + ")");
}

}  // namespace

void check_price_file(const FieldChecker& prices, const Catalog& catalog) {
  const auto& m = static_cast<const s::PriceFile&>(prices.message());
  // An empty --prices file (or one of comments only: a wrong or unsaved file) priced everything
  // at the catalog's prices without a word.
  if (m.ByteSizeLong() == 0) {
    prices.error_here(
        "lists no prices: it sets none of price, report_currency, exchange_rate and region");
    return;
  }
  // CURRENCY_UNSPECIFIED left every configuration without a price, silently.
  if (prices.has("report_currency")) prices.require_enum("report_currency");
  check_region(prices, catalog);
  std::set<std::pair<std::string, int>> seen;
  for (int i = 0; i < m.price_size(); ++i) {
    const FieldChecker entry = prices.child("price", i);
    const s::PriceOverride& o = m.price(i);
    if (entry.require("instance")) {
      resolve_reference(entry, "instance", -1, o.instance(), catalog.instances(), "instance type");
    }
    if (!entry.require("price")) continue;
    check_price(entry.child("price"));
    if (o.price().billing() == s::ON_DEMAND && o.price().has_discount_fraction()) {
      entry.child("price").error("discount_fraction",
                                 "applies to other billing modes than "
                                 "ON_DEMAND: give per_hour");
    }
    if (!seen.emplace(o.instance(), o.price().billing()).second) {
      entry.error("price", "a second " + s::BillingMode_Name(o.price().billing()) +
                               " price for \"" + o.instance() + "\"");
    }
  }
  std::set<int> currencies;
  for (int i = 0; i < m.exchange_rate_size(); ++i) {
    const FieldChecker rate = prices.child("exchange_rate", i);
    rate.require_enum("currency");
    rate.require("in_report_currency") &&
        rate.in_range("in_report_currency", kMinExchangeRate, kMaxExchangeRate);
    if (!currencies.insert(m.exchange_rate(i).currency()).second) {
      rate.error("currency", "has a second exchange rate");
    }
    if (m.has_report_currency() && m.exchange_rate(i).currency() == m.report_currency()) {
      rate.error("currency", "is the report currency itself");
    }
    // A rate is a day's rate: one that says where it comes from says when too.
    if (rate.has("source")) {
      check_source(rate);
      if (!rate.child("source").has("date")) {
        rate.child("source").warning("date", "is missing: an exchange rate is the rate of a day");
      }
    }
  }
}

void warn_unread_prices(const FieldChecker& prices, const PriceBook& book, const Catalog& catalog,
                        s::Currency report, const std::vector<s::BillingMode>& compared) {
  const auto& m = static_cast<const s::PriceFile&>(prices.message());
  for (int i = 0; i < m.exchange_rate_size(); ++i) {
    if (report == s::CURRENCY_UNSPECIFIED || m.exchange_rate(i).currency() != report ||
        m.report_currency() == report) {  // the last: an error of check_price_file
      continue;
    }
    prices.child("exchange_rate", i)
        .warning("currency", s::Currency_Name(report) +
                                 " is the currency costs are reported in, so this rate is never "
                                 "used: to report in another, set report_currency");
  }
  std::string modes;
  for (s::BillingMode mode : compared) {
    modes += (modes.empty() ? "" : ", ") + s::BillingMode_Name(mode);
  }
  for (int i = 0; i < m.price_size(); ++i) {
    const s::PriceOverride& o = m.price(i);
    const CatalogEntry<s::InstanceType>* instance = catalog.instances().find(o.instance());
    if (instance == nullptr ||
        book.reads_override(*instance->value, o.price().billing(), compared)) {
      continue;
    }
    prices.child("price", i)
        .child("price")
        .warning("billing", s::BillingMode_Name(o.price().billing()) +
                                " is not among the billing modes priced (" + modes +
                                "), so this price is never used");
  }
}

void check_checkpoint_storage(const FieldChecker& root, const Catalog& catalog,
                              const LoadedScenario& scenario) {
  const s::Scenario& m = scenario.scenario();
  if (m.sweep().checkpoint_storage_size() == 0) return;
  const FieldChecker sweep = root.child("sweep");
  if (!m.cost().has_checkpoint()) {
    sweep.error("checkpoint_storage",
                "sweeps where checkpoints go, which needs cost.checkpoint (its interval, keep and "
                "notice apply to every value)");
    return;
  }
  const int keep = checkable_checkpoints_kept(m.cost().checkpoint());
  for (int i = 0; i < m.sweep().checkpoint_storage_size(); ++i) {
    const FieldChecker value = sweep.child("checkpoint_storage", i);
    if (value.require("volume")) check_volumes(value, catalog, scenario, keep);
  }
}

void warn_checkpoint_volume_replaced(const FieldChecker& root, const s::Scenario& scenario) {
  const s::Checkpoint& checkpoint = scenario.cost().checkpoint();
  if (checkpoint.volume_size() == 0 || scenario.sweep().checkpoint_storage_size() == 0) return;
  s::CheckpointVolumes fixed;
  *fixed.mutable_volume() = checkpoint.volume();
  for (const s::CheckpointVolumes& value : scenario.sweep().checkpoint_storage()) {
    if (google::protobuf::util::MessageDifferencer::Equals(value, fixed)) return;
  }
  root.child("cost")
      .child("checkpoint")
      .warning("volume",
               "is never simulated: sweep.checkpoint_storage replaces it in every configuration");
}

void check_cost(const FieldChecker& cost, const Catalog& catalog, const LoadedScenario& scenario) {
  const auto& m = static_cast<const s::Cost&>(cost.message());
  for (int i = 0; i < m.billing_size(); ++i) {
    if (m.billing(i) == s::BILLING_MODE_UNSPECIFIED) {
      cost.error("billing", "must be set to a value other than BILLING_MODE_UNSPECIFIED", i);
    }
  }
  cost.distinct_lists();  // billing modes
  if (m.has_prices()) check_price_file(cost.child("prices"), catalog);
  const bool preemptions_valid = check_rate(cost, "preemptions_per_instance_hour");
  const bool faults_valid = check_rate(cost, "interruptions_per_node_hour");
  const bool preempted = preemptions_valid && has_spot(m) && m.preemptions_per_instance_hour() > 0;
  // Faults at the stated rate, or at the default one where checkpoints are modelled.
  const bool faults = faults_valid && faults_modelled(m);
  if (m.has_preemptions_per_instance_hour() && !has_spot(m)) {
    cost.warning("preemptions_per_instance_hour", "applies to SPOT billing, which billing omits");
  }
  for (const char* field : {"restart", "restart_after_fault"}) {
    if (!cost.has(field)) continue;
    const FieldChecker restart = cost.child(field);
    restart.in_range("acquisition_s", 0, kMaxRestartSeconds);
    restart.in_range("container_start_s", 0, kMaxRestartSeconds);
  }
  if (m.has_restart_after_fault()) {
    const FieldChecker restart = cost.child("restart_after_fault");
    if (faults) {
      restart.require("acquisition_s");
      restart.require("container_start_s");
    } else if (faults_valid) {
      cost.warning("restart_after_fault",
                   "is never paid: no faults are modelled (interruptions_per_node_hour is 0, or "
                   "absent without a checkpoint)");
    }
  }
  // Faults pay restart_after_fault where given: then `restart` is for preemptions alone.
  const bool restart_paid = preempted || (faults && !m.has_restart_after_fault());
  if (restart_paid) {
    if (!m.has_restart()) {
      const bool preempted_only = preempted && m.has_restart_after_fault();
      cost.error("restart",
                 "is required: runs are interrupted by " +
                     interruption_causes(preempted, faults && !preempted_only,
                                         m.has_interruptions_per_node_hour()));
    } else {
      const FieldChecker restart = cost.child("restart");
      restart.require("acquisition_s");
      restart.require("container_start_s");
    }
  }
  if (preempted || faults) {
    if (!m.has_checkpoint() && preempted) {
      cost.error("checkpoint",
                 "is required with spot preemptions: without it every preemption "
                 "restarts the run from the beginning");
    } else if (!m.has_checkpoint()) {
      cost.error("interruptions_per_node_hour",
                 "needs a checkpoint: without one every fault restarts the run from the beginning");
    }
  }
  if (m.has_checkpoint()) {
    check_checkpoint(cost.child("checkpoint"), catalog, scenario, preempted || faults);
    if (m.checkpoint().save_on_preemption_notice()) {
      check_notice_save(cost.child("checkpoint"), m, catalog, scenario);
    }
  }
  cost.in_range("trials", 1, kMaxTrials);
}

}  // namespace clustersim
