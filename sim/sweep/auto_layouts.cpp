// ConfigurationSpace's auto enumeration of parallel layouts (sweep.auto_parallelism): every
// tensor, context, pipeline, micro-batch, interleaving and expert-parallel degree that splits a
// cluster's shape, a mix's pipelines across pools, and hybrid sharding's whole-node groups.
#include "sim/sweep/configuration_space.h"

#include <algorithm>
#include <vector>

#include "sim/io/degree_checks.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/expert_parallel.h"

namespace clustersim {
namespace {

namespace s = schema;

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) result.push_back(d);
  }
  return result;
}

int model_layers(const s::Model& model) {
  return model.has_transformer() ? model.transformer().num_layers() : 1;
}

}  // namespace

std::vector<int> auto_micro_batch_sizes(const s::AutoParallelism& automatic) {
  if (automatic.micro_batch_size().empty()) return {1, 2, 4, 8};
  return {automatic.micro_batch_size().begin(), automatic.micro_batch_size().end()};
}

int auto_max_virtual_stages(const s::AutoParallelism& automatic) {
  return automatic.has_max_virtual_stages() ? automatic.max_virtual_stages() : 1;
}

int auto_max_context_parallel(const s::AutoParallelism& automatic) {
  return automatic.has_max_context_parallel() ? automatic.max_context_parallel() : 1;
}

// The context-parallel degrees auto_parallelism tries with tensor parallel `tp` on `gpus`.
std::vector<int> ConfigurationSpace::auto_context_parallel(int tp, int gpus) const {
  const s::AutoParallelism& automatic = scenario_.scenario().sweep().auto_parallelism();
  const int max_cp = auto_max_context_parallel(automatic);
  std::vector<int> degrees;
  for (int cp : divisors(gpus / tp)) {
    if (cp > max_cp) break;
    if (context_parallel_problem(cp, tp, base_, scenario_.model, scenario_.scenario().job())
            .empty()) {
      degrees.push_back(cp);
    }
  }
  return degrees;
}

// The layouts of `pp` stages with `vs` chunks each: even (plain 1F1B also splits unevenly,
// pipeline_layout.h), and with auto_parallelism.uneven_pipeline_layouts, where the scenario fixes
// no uneven split and the layers do not divide, with the embedding and loss counted as layers if
// that makes the split even.
void ConfigurationSpace::add_pipeline_layouts(Layout layout, std::vector<Layout>* out) const {
  const int layers = model_layers(*scenario_.model);
  const int chunks = layout.pipeline_parallel * layout.virtual_stages;
  const bool fixed = base_.has_first_stage_layers() || base_.has_last_stage_layers() ||
                     base_.embedding_in_pipeline_split() || base_.loss_in_pipeline_split() ||
                     !scenario_.scenario().sweep().auto_parallelism().uneven_pipeline_layouts();
  if (layout.virtual_stages == 1 || layers % chunks == 0) out->push_back(layout);
  if (!fixed && layers % chunks != 0 && (layers + 2) % chunks == 0 && layers + 2 >= chunks) {
    layout.embedding_and_loss_in_split = true;
    out->push_back(layout);
  }
}


std::vector<ConfigurationSpace::Layout> ConfigurationSpace::auto_layouts(const Shape& shape) const {
  const s::AutoParallelism& automatic = scenario_.scenario().sweep().auto_parallelism();
  const std::vector<int> mbs_values = auto_micro_batch_sizes(automatic);
  const s::Model& model = *scenario_.model;
  const int layers = model_layers(model);
  const int max_pp = automatic.has_max_pipeline_parallel()
                         ? std::min(layers, automatic.max_pipeline_parallel())
                         : layers;
  const int max_vs = auto_max_virtual_stages(automatic);
  const int64_t batch = scenario_.scenario().job().global_batch_size();
  const int gpus = shape.divided_gpus;
  const s::PipelineSchedule plain = base_.schedule() == s::GPIPE ? s::GPIPE : s::ONE_F_ONE_B;
  std::vector<Layout> layouts;
  for (int tp : divisors(shape.span_gpus)) {
    if (!tensor_parallel_problem(tp, &model).empty()) continue;
    for (int cp : auto_context_parallel(tp, gpus)) {
      for (int pp : divisors(gpus / (tp * cp))) {
        if (pp > max_pp) break;
        const int64_t dp = shape.total_gpus / tp / cp / pp;
        for (int mbs : mbs_values) {
          const bool splits =
              shape.mix ? batch % mbs == 0 && batch / mbs >= dp : batch % (mbs * dp) == 0;
          if (!splits) continue;
          for (int ep : auto_expert_parallel(tp, gpus / pp)) {
            add_pipeline_layouts({tp, pp, mbs, 1, plain, cp, false, ep}, &layouts);
            // DualPipe is not simulated in a mix. A mix of data-parallel pools deals the
            // micro-batches by speed in groups of one per stage, at least one per replica.
            const int64_t micro_batches = batch / (mbs * dp);
            if (!shape.mix && automatic.dualpipe() &&
                dualpipe_problem(s::DUALPIPE, pp, micro_batches).empty()) {
              add_pipeline_layouts({tp, pp, mbs, 1, s::DUALPIPE, cp, false, ep}, &layouts);
            }
            const bool groups_of_stages = shape.mix
                                              ? (batch / mbs) % pp == 0 && batch / mbs / pp >= dp
                                              : micro_batches % pp == 0;
            for (int vs = 2; vs <= max_vs && pp > 1 && groups_of_stages; ++vs) {
              add_pipeline_layouts({tp, pp, mbs, vs, s::INTERLEAVED_ONE_F_ONE_B, cp, false, ep},
                                   &layouts);
            }
          }
        }
      }
    }
  }
  if (shape.mix) add_pipeline_across_pools(shape, mbs_values, &layouts);
  return with_hybrid_sharding(shape, std::move(layouts));
}

std::vector<ConfigurationSpace::Layout> ConfigurationSpace::with_hybrid_sharding(
    const Shape& shape, std::vector<Layout> layouts) const {
  const bool zero3 = std::any_of(options_.begin(), options_.end(),
                                 [](const Options& o) { return o.zero_stage == 3; });
  if (shape.mix || !zero3 || !scenario_.scenario().sweep().auto_parallelism().hybrid_sharding()) {
    return layouts;  // hybrid sharding's groups are not tried in a mix
  }
  std::vector<Layout> out;
  for (const Layout& layout : layouts) {
    out.push_back(layout);
    const int model_parallel =
        layout.tensor_parallel * layout.context_parallel * layout.pipeline_parallel;
    const int dp = shape.total_gpus / model_parallel;
    // A group's d consecutive replicas span d x TP x CP GPUs of each stage, whole replicas of
    // all the stages (d x TP x CP x PP GPUs) under TP_PP_DP.
    const int spread = base_.rank_order() == s::TP_DP_PP ? 1 : layout.pipeline_parallel;
    for (int d : divisors(dp)) {
      const int64_t group_gpus =
          int64_t{d} * layout.tensor_parallel * layout.context_parallel * spread;
      if (d == dp || group_gpus % shape.node_gpus != 0) continue;
      out.push_back(layout);
      out.back().data_parallel_shard = d;
    }
  }
  return out;
}

void ConfigurationSpace::add_pipeline_across_pools(const Shape& shape,
                                                   const std::vector<int>& mbs_values,
                                                   std::vector<Layout>* out) const {
  const s::AutoParallelism& automatic = scenario_.scenario().sweep().auto_parallelism();
  const int layers = model_layers(*scenario_.model);
  const int max_pp = automatic.has_max_pipeline_parallel()
                         ? std::min(layers, automatic.max_pipeline_parallel())
                         : layers;
  const int64_t batch = scenario_.scenario().job().global_batch_size();
  const int max_vs = auto_max_virtual_stages(automatic);
  const s::PipelineSchedule plain = base_.schedule() == s::GPIPE ? s::GPIPE : s::ONE_F_ONE_B;
  for (int tp : divisors(shape.span_gpus)) {
    if (!tensor_parallel_problem(tp, scenario_.model).empty()) continue;
    for (int cp : auto_context_parallel(tp, shape.divided_gpus)) {
      for (int dp : divisors(shape.divided_gpus / (tp * cp))) {
        const int pp = shape.total_gpus / (tp * cp * dp);
        if (pp > max_pp) continue;
        for (int mbs : mbs_values) {
          if (batch % (int64_t{mbs} * dp) != 0) continue;
          // Expert parallelism inside a stage's TP x CP x DP GPUs, so inside its pool.
          for (int ep : auto_expert_parallel(tp, tp * cp * dp)) {
            out->push_back({tp, pp, mbs, 1, plain, cp, false, ep, s::PIPELINE_ACROSS_POOLS});
            // The layers are split by speed, per chunk: no even split over the chunks needed.
            const bool groups_of_stages = (batch / (int64_t{mbs} * dp)) % pp == 0;
            for (int vs = 2; vs <= max_vs && pp > 1 && groups_of_stages; ++vs) {
              out->push_back({tp, pp, mbs, vs, s::INTERLEAVED_ONE_F_ONE_B, cp, false, ep,
                              s::PIPELINE_ACROSS_POOLS});
            }
          }
        }
      }
    }
  }
}

std::vector<int> ConfigurationSpace::auto_expert_parallel(int tp, int stage_gpus) const {
  const s::Model& model = *scenario_.model;
  if (!model.has_transformer() || !model.transformer().has_moe()) return {0};
  s::Parallelism p = base_;
  p.set_tensor_parallel(tp);
  const int etp = expert_layout(p).expert_tensor_parallel;
  std::vector<int> degrees;
  for (int ep : divisors(model.transformer().moe().num_experts())) {
    if (stage_gpus % (etp * ep) == 0) degrees.push_back(ep);
  }
  return degrees;
}

}  // namespace clustersim
