// Cartesian expansion of sweep axes and the structural validity of each configuration.
#include "sim/sweep/configuration_space.h"

#include <functional>

namespace clustersim {
namespace {

namespace s = schema;

// The values of one axis: the sweep's list if non-empty, else the base value.
template <class T, class List>
std::vector<T> axis(const List& swept, T base) {
  if (swept.empty()) return {base};
  return std::vector<T>(swept.begin(), swept.end());
}

// Base parallelism with the documented defaults filled in.
s::Parallelism base_parallelism(const s::Scenario& scenario) {
  s::Parallelism p = scenario.parallelism();
  if (!p.has_tensor_parallel()) p.set_tensor_parallel(1);
  if (!p.has_pipeline_parallel()) p.set_pipeline_parallel(1);
  if (!p.has_micro_batch_size()) p.set_micro_batch_size(1);
  if (!p.has_schedule() || p.schedule() == s::PIPELINE_SCHEDULE_UNSPECIFIED) {
    p.set_schedule(s::ONE_F_ONE_B);
  }
  if (!p.has_virtual_stages()) p.set_virtual_stages(1);
  if (!p.has_zero_stage()) p.set_zero_stage(0);
  if (!p.has_sequence_parallel()) p.set_sequence_parallel(false);
  if (!p.has_distributed_optimizer()) p.set_distributed_optimizer(false);
  if (!p.has_overlap_gradient_reduce()) p.set_overlap_gradient_reduce(true);
  if (!p.has_overlap_parameter_gather()) p.set_overlap_parameter_gather(true);
  if (!p.has_overlap_pipeline_communication()) p.set_overlap_pipeline_communication(true);
  if (!p.has_recompute() || p.recompute() == s::RECOMPUTE_UNSPECIFIED) {
    p.set_recompute(s::RECOMPUTE_NONE);
  }
  return p;
}

// Calls `visit` for every combination of axis values, last axis fastest.
void for_each_combination(const std::vector<size_t>& sizes,
                          const std::function<void(const std::vector<size_t>&)>& visit) {
  for (size_t size : sizes) {
    if (size == 0) return;
  }
  std::vector<size_t> index(sizes.size(), 0);
  while (true) {
    visit(index);
    size_t axis = sizes.size();
    while (true) {
      if (axis == 0) return;
      --axis;
      if (++index[axis] < sizes[axis]) break;
      index[axis] = 0;
    }
  }
}

}  // namespace

std::string configuration_problem(const Configuration& c, const LoadedScenario& scenario) {
  const s::Parallelism& p = c.parallelism;
  const int model_parallel = p.tensor_parallel() * p.pipeline_parallel();
  if (c.gpus() % model_parallel != 0) {
    return "tensor x pipeline parallel does not divide the GPUs";
  }
  if (p.data_parallel() * model_parallel != c.gpus()) {
    return "tensor x pipeline x data parallel differs from the GPUs";
  }
  const int64_t per_step = int64_t{p.micro_batch_size()} * p.data_parallel();
  if (scenario.scenario().job().global_batch_size() % per_step != 0) {
    return "micro-batch x data parallel does not divide the global batch";
  }
  const bool interleaved = p.schedule() == s::INTERLEAVED_ONE_F_ONE_B;
  if (interleaved != (p.virtual_stages() > 1)) {
    return "virtual stages > 1 if and only if the schedule is interleaved";
  }
  if (scenario.model->has_transformer()) {
    const int layers = scenario.model->transformer().num_layers();
    if (p.pipeline_parallel() * p.virtual_stages() > layers) {
      return "more pipeline chunks than layers";
    }
    if (interleaved && layers % (p.pipeline_parallel() * p.virtual_stages()) != 0) {
      return "interleaving needs layers divisible by pipeline stages x virtual stages";
    }
  }
  if (p.sequence_parallel() && p.tensor_parallel() == 1) {
    return "sequence parallelism needs tensor parallel > 1";
  }
  return "";
}

ConfigurationSpace expand_configurations(const LoadedScenario& scenario) {
  const s::Scenario& sc = scenario.scenario();
  const s::Sweep& sw = sc.sweep();
  const s::Parallelism base = base_parallelism(sc);
  const auto nodes = axis<int>(sw.nodes(), sc.cluster().nodes());
  const auto tp = axis<int>(sw.tensor_parallel(), base.tensor_parallel());
  const auto pp = axis<int>(sw.pipeline_parallel(), base.pipeline_parallel());
  const auto mbs = axis<int>(sw.micro_batch_size(), base.micro_batch_size());
  const auto zero = axis<int>(sw.zero_stage(), base.zero_stage());
  const auto recompute = axis<int>(sw.recompute(), base.recompute());
  const auto schedule = axis<int>(sw.schedule(), base.schedule());
  const auto sp = axis<bool>(sw.sequence_parallel(), base.sequence_parallel());
  const auto vs = axis<int>(sw.virtual_stages(), base.virtual_stages());

  ConfigurationSpace space;
  for_each_combination(
      {scenario.instances.size(), nodes.size(), tp.size(), pp.size(), mbs.size(), zero.size(),
       recompute.size(), schedule.size(), sp.size(), vs.size()},
      [&](const std::vector<size_t>& i) {
        Configuration c{scenario.instances[i[0]], nodes[i[1]], base};
        s::Parallelism& p = c.parallelism;
        p.set_tensor_parallel(tp[i[2]]);
        p.set_pipeline_parallel(pp[i[3]]);
        p.set_micro_batch_size(mbs[i[4]]);
        p.set_zero_stage(zero[i[5]]);
        p.set_recompute(static_cast<s::Recompute>(recompute[i[6]]));
        p.set_schedule(static_cast<s::PipelineSchedule>(schedule[i[7]]));
        p.set_sequence_parallel(sp[i[8]]);
        p.set_virtual_stages(vs[i[9]]);
        if (!base.has_data_parallel()) {
          p.set_data_parallel(c.gpus() / (p.tensor_parallel() * p.pipeline_parallel()));
        }
        ++space.total;
        const std::string problem = configuration_problem(c, scenario);
        if (problem.empty()) {
          space.valid.push_back(std::move(c));
        } else {
          ++space.pruned[problem];
        }
      });
  return space;
}

}  // namespace clustersim
