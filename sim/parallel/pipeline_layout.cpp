// Layer counts per pipeline stage and model chunk (Megatron-Core's TransformerConfig rules, and
// explicit counts per stage or per model chunk).
#include "sim/parallel/pipeline_layout.h"

#include <cstdint>
#include <numeric>

#include "sim/parallel/dualpipe_schedule.h"
#include "sim/util/check.h"
#include "sim/util/even_share.h"

namespace clustersim {
namespace {

namespace s = schema;

int chunks_of(const s::Parallelism& p) {
  return p.schedule() == s::INTERLEAVED_ONE_F_ONE_B ? p.virtual_stages() : 1;
}

// DualPipe's pieces as the stages of a pipeline without interleaving.
s::Parallelism dualpipe_pieces(const s::Parallelism& p) {
  s::Parallelism pieces = p;
  pieces.set_schedule(s::ONE_F_ONE_B);
  if (p.schedule() == s::DUALPIPE_V) pieces.set_pipeline_parallel(2 * p.pipeline_parallel());
  return pieces;
}

std::string count(int64_t n, const char* what) { return std::to_string(n) + " " + what; }

// Layers per stage when the first and/or last stage's are given; empty with *why set when the
// rest does not split evenly.
std::vector<int> uneven_stage_layers(int layers, const s::Parallelism& p, std::string* why) {
  const int pp = p.pipeline_parallel();
  const bool first = p.has_first_stage_layers(), last = p.has_last_stage_layers();
  const int given = (first ? p.first_stage_layers() : 0) + (last ? p.last_stage_layers() : 0);
  const int others = pp - (first ? 1 : 0) - (last ? 1 : 0);
  if (given > layers) {
    *why = "first and last stage layers (" + std::to_string(given) + ") exceed the model's " +
           count(layers, "layers");
    return {};
  }
  if (others <= 0 && given != layers) {
    *why = "the first and last stages must hold all " + count(layers, "layers") + " with " +
           count(pp, "stages");
    return {};
  }
  if (others > 0 && (layers - given) % others != 0) {
    *why = "the " + count(layers - given, "layers") + " left after the first and last stages do " +
           "not split evenly over the other " + count(others, "stages");
    return {};
  }
  std::vector<int> stage(pp, others > 0 ? (layers - given) / others : 0);
  if (first) stage.front() = p.first_stage_layers();
  if (last) stage.back() = p.last_stage_layers();
  return stage;
}

// Whether p lists its layers per model chunk (pipeline_parallel x virtual_stages counts, in
// virtual-stage order) rather than per stage.
bool listed_per_chunk(const s::Parallelism& p) {
  const int v = chunks_of(p);
  return v > 1 && p.stage_layers_size() == int64_t{p.pipeline_parallel()} * v;
}

// Why explicit stage (or model chunk) layer counts cannot lay out `layers` layers on p's stages
// and chunks.
std::string listed_stage_layers_problem(int layers, const s::Parallelism& p) {
  const int pp = p.pipeline_parallel(), v = chunks_of(p);
  const bool per_chunk = listed_per_chunk(p);
  if (p.stage_layers_size() != pp && !per_chunk) {
    return count(p.stage_layers_size(), "stage layer counts") + " for " + count(pp, "stages") +
           (v > 1 ? " (or " + count(int64_t{pp} * v, "model chunks") + ")" : "");
  }
  std::vector<int> stage(pp, 0);
  for (int i = 0; i < p.stage_layers_size(); ++i) stage[i % pp] += p.stage_layers(i);
  int sum = 0;
  for (int n : stage) {
    if (n < 1) return "every stage needs at least 1 layer";
    if (!per_chunk && n % v != 0)
      return count(n, "layers") + " of a stage do not split into " + count(v, "model chunks");
    sum += n;
  }
  if (sum != layers) {
    return "the stages' " + count(sum, "layers") + " differ from the model's " +
           std::to_string(layers);
  }
  return "";
}

}  // namespace

int PipelineLayout::stage_layers(int stage) const {
  return std::accumulate(layers[stage].begin(), layers[stage].end(), 0);
}

int PipelineLayout::first_layer(int stage, int chunk) const {
  int first = 0;
  if (!pieces.empty()) {  // DualPipe holds each piece twice: its layers counted once
    std::vector<int> piece_layers(pieces[0][1] + 1, 0);
    for (int r = 0; r < stages(); ++r) {
      for (int c = 0; c < chunks(); ++c) piece_layers[pieces[r][c]] = layers[r][c];
    }
    for (int k = 0; k < pieces[stage][chunk]; ++k) first += piece_layers[k];
    return first;
  }
  for (int c = 0; c <= chunk; ++c) {
    for (int r = 0; r < stages() && (c < chunk || r < stage); ++r) first += layers[r][c];
  }
  return first;
}

bool PipelineLayout::holds_embedding(int stage, int chunk) const {
  if (!pieces.empty()) return pieces[stage][chunk] == 0;
  return stage == 0 && chunk == 0;
}

bool PipelineLayout::holds_output(int stage, int chunk) const {
  if (!pieces.empty()) return pieces[stage][chunk] == pieces[0][1];  // the last piece
  return stage == stages() - 1 && chunk == chunks() - 1;
}

bool PipelineLayout::stage_holds_embedding(int stage) const {
  for (int c = 0; c < chunks(); ++c) {
    if (holds_embedding(stage, c)) return true;
  }
  return false;
}

bool PipelineLayout::stage_holds_output(int stage) const {
  for (int c = 0; c < chunks(); ++c) {
    if (holds_output(stage, c)) return true;
  }
  return false;
}

std::string pipeline_layout_problem(int layers, const s::Parallelism& p) {
  if (is_dualpipe(p.schedule())) return pipeline_layout_problem(layers, dualpipe_pieces(p));
  const int pp = p.pipeline_parallel(), v = chunks_of(p);
  const bool uneven = p.has_first_stage_layers() || p.has_last_stage_layers();
  const bool accounted = p.embedding_in_pipeline_split() || p.loss_in_pipeline_split();
  if (p.stage_layers_size() > 0) {
    if (uneven || accounted) {
      return "stage layer counts exclude first/last stage layers and embedding/loss in the split";
    }
    return listed_stage_layers_problem(layers, p);
  }
  if (uneven && accounted) {
    return "first/last stage layer counts and embedding/loss in the pipeline split exclude each "
           "other";
  }
  if (uneven) {
    if (pp < 2) return "first/last stage layer counts need pipeline parallel > 1";
    std::string why;
    const std::vector<int> stage = uneven_stage_layers(layers, p, &why);
    for (int n : stage) {
      if (n % v != 0) return count(n, "layers") + " of a stage do not split into " +
                             count(v, "model chunks");
    }
    return why;
  }
  const int slots = layers + p.embedding_in_pipeline_split() + p.loss_in_pipeline_split();
  const int64_t chunks = int64_t{pp} * v;  // each up to 2^31 - 1: a 32-bit product wraps
  if ((accounted || v > 1) && slots % chunks != 0) {
    return count(slots, accounted ? "layers (with embedding/loss)" : "layers") +
           " do not split evenly over " + count(chunks, "model chunks");
  }
  if (chunks > slots) return "more pipeline chunks than layers";
  return "";
}

PipelineLayout pipeline_layout(int layers, const s::Parallelism& p) {
  CLUSTERSIM_CHECK(pipeline_layout_problem(layers, p).empty(), "an invalid pipeline layout");
  if (is_dualpipe(p.schedule())) {
    const PipelineLayout split = pipeline_layout(layers, dualpipe_pieces(p));
    const int count = split.stages();
    PipelineLayout layout;
    for (int r = 0; r < p.pipeline_parallel(); ++r) {
      layout.layers.push_back({split.layers[r][0], split.layers[count - 1 - r][0]});
      layout.pieces.push_back({r, count - 1 - r});
    }
    return layout;
  }
  const int pp = p.pipeline_parallel(), v = chunks_of(p);
  PipelineLayout layout;
  layout.layers.assign(pp, std::vector<int>(v, 0));
  if (listed_per_chunk(p)) {
    for (int i = 0; i < pp * v; ++i) layout.layers[i % pp][i / pp] = p.stage_layers(i);
    return layout;
  }
  if (p.stage_layers_size() > 0) {
    for (int r = 0; r < pp; ++r) layout.layers[r].assign(v, p.stage_layers(r) / v);
    return layout;
  }
  if (p.has_first_stage_layers() || p.has_last_stage_layers()) {
    std::string unused;
    const std::vector<int> stage = uneven_stage_layers(layers, p, &unused);
    for (int r = 0; r < pp; ++r) layout.layers[r].assign(v, stage[r] / v);
    return layout;
  }
  const bool accounted = p.embedding_in_pipeline_split() || p.loss_in_pipeline_split();
  if (accounted || v > 1) {
    const int per_chunk =
        (layers + p.embedding_in_pipeline_split() + p.loss_in_pipeline_split()) / (pp * v);
    for (std::vector<int>& chunks : layout.layers) chunks.assign(v, per_chunk);
    if (p.embedding_in_pipeline_split()) --layout.layers.front().front();
    if (p.loss_in_pipeline_split()) --layout.layers.back().back();
    return layout;
  }
  for (int r = 0; r < pp; ++r) layout.layers[r][0] = even_share(layers, pp, r);
  return layout;
}

}  // namespace clustersim
