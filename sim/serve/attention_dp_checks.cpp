// Checks of deployment.attention_data_parallel and sweep.attention_data_parallel.
#include "sim/serve/attention_dp_checks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/serve/beam_search.h"

namespace clustersim {
namespace {

namespace s = schema;

template <typename List, typename Value>
bool lists_value(const List& list, const Value& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// deployment.moe_token_exchange: only with attention data parallelism; MOE_ALL_TO_ALL only
// where the replica's GPUs meet in an NVSwitch (the MNNVL kernels write into the peers' memory
// through it), on the deployment's instance and every swept one.
void check_moe_token_exchange(const FieldChecker& deployment, const Catalog& catalog,
                              const s::ServingScenario& m, bool attention_dp) {
  const s::Deployment& d = m.deployment();
  if (!d.has_moe_token_exchange()) return;
  if (!attention_dp) {
    deployment.error("moe_token_exchange",
                     "applies to attention data parallelism only (deployment."
                     "attention_data_parallel true, or sweep.attention_data_parallel listing it): "
                     "tensor-parallel MoE layers all-reduce their outputs");
    return;
  }
  if (d.moe_token_exchange() != s::MOE_ALL_TO_ALL) return;
  std::vector<std::string> instances(m.sweep().instance().begin(), m.sweep().instance().end());
  if (instances.empty()) instances.push_back(d.instance());
  for (const std::string& name : instances) {
    const CatalogEntry<s::InstanceType>* instance = catalog.instances().find(name);
    if (instance != nullptr && instance->value->gpu_interconnect() != s::NVSWITCH) {
      deployment.error("moe_token_exchange",
                       "MOE_ALL_TO_ALL needs the replica's GPUs on one NVSwitch (TensorRT-LLM's "
                       "MNNVL kernels write into the peers' memory through it); instance \"" +
                           name + "\" has gpu_interconnect " +
                           s::GpuInterconnect_Name(instance->value->gpu_interconnect()) +
                           ": MOE_ALL_GATHER");
      return;
    }
  }
}

}  // namespace

void check_attention_data_parallel(const FieldChecker& root, const Catalog& catalog,
                                   const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  const s::Deployment& d = m.deployment();
  const s::ServingSweep& w = m.sweep();
  const FieldChecker deployment = root.child("deployment");
  const FieldChecker sweep = root.child("sweep");
  const bool swept = lists_value(w.attention_data_parallel(), true);
  check_moe_token_exchange(deployment, catalog, m, d.attention_data_parallel() || swept);
  if (!d.attention_data_parallel() && !swept) return;
  // The field that turned it on: the deployment's, else the sweep's first "true".
  const auto fail = [&](const std::string& why) {
    if (d.attention_data_parallel()) {
      deployment.error("attention_data_parallel", why);
    } else {
      const auto on =
          std::find(w.attention_data_parallel().begin(), w.attention_data_parallel().end(), true);
      sweep.error("attention_data_parallel", why,
                  static_cast<int>(on - w.attention_data_parallel().begin()));
    }
  };
  if (loaded.model != nullptr && !loaded.model->transformer().has_moe()) {
    fail("needs a mixture of experts (\"" + m.model() +
         "\" has no moe block): without experts to share, GPUs with requests of their own are "
         "replicas (deployment.replicas)");
  }
  const bool tp_swept = w.tensor_parallel_size() > 0, ep_swept = w.expert_parallel_size() > 0;
  const int tp = d.has_tensor_parallel() ? d.tensor_parallel() : 1;
  if (!tp_swept && tp < 2) {
    fail("needs a replica of two GPUs or more (deployment.tensor_parallel " + std::to_string(tp) +
         "): each GPU runs its own requests and the experts split over them");
  } else if (!tp_swept && !ep_swept && d.expert_parallel() != tp) {
    fail("needs deployment.expert_parallel equal to tensor_parallel (" + std::to_string(tp) +
         "; it is " + (d.has_expert_parallel() ? std::to_string(d.expert_parallel()) : "absent") +
         "): the experts split over all the replica's GPUs, as TensorRT-LLM's DEP deployments");
  }
  const std::string unsupported = " is not simulated with attention data parallelism";
  const s::Scheduler& sc = d.scheduler();
  if (sc.batching() == s::STATIC || lists_value(w.batching(), s::STATIC)) {
    fail("static batching" + unsupported +
         " (TensorRT-LLM runs it in-flight): batching CONTINUOUS");
  }
  if (d.pipeline_parallel() > 1 ||
      std::any_of(w.pipeline_parallel().begin(), w.pipeline_parallel().end(),
                  [](int pp) { return pp > 1; })) {
    fail("pipeline parallelism" + unsupported);
  }
  if (m.has_traffic() && beam_width(m.traffic()) > 1) fail("beam search" + unsupported);
  if (d.has_speculative_decoding()) fail("speculative decoding" + unsupported);
  if (d.has_disaggregation()) fail("disaggregated serving" + unsupported);
  if (has_shared_prefixes(loaded)) {
    const s::ServingRuntime* runtime = serving_runtime(m, catalog);
    const bool on = sc.prefix_caching().has_enabled()
                        ? sc.prefix_caching().enabled()
                        : runtime != nullptr && runtime->prefix_caching();
    if (on || lists_value(w.prefix_caching(), true)) {
      fail("prefix caching" + unsupported +
           " and this traffic carries shared prefixes: set "
           "deployment.scheduler.prefix_caching.enabled false");
    }
  }
}

}  // namespace clustersim
