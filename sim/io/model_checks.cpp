// Checks of model entries: transformer shapes and CNN layer lists (shapes must flow end to end).
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "sim/io/entry_checks.h"
#include "sim/io/schema/model.pb.h"
#include "sim/util/number_format.h"
#include "sim/workload/cnn_shape.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {
namespace {

namespace s = schema;

void check_divides(const FieldChecker& c, const char* divisor, const char* dividend) {
  if (!c.has(divisor) || !c.has(dividend) || c.number(divisor) <= 0) return;
  const auto d = static_cast<int64_t>(c.number(divisor));
  const auto n = static_cast<int64_t>(c.number(dividend));
  if (n % d != 0) {
    c.error(divisor, "must divide " + std::string(dividend) + " (" + std::to_string(n) + "), got " +
                         std::to_string(d));
  }
}

void check_moe(const FieldChecker& moe, const s::Transformer& t) {
  const s::MixtureOfExperts& m = t.moe();
  moe.require("num_experts") && moe.at_least("num_experts", 1);
  if (moe.require("experts_per_token") && moe.at_least("experts_per_token", 1) &&
      m.experts_per_token() > m.num_experts()) {
    moe.error("experts_per_token",
              "must not exceed num_experts (" + std::to_string(m.num_experts()) + ")");
  }
  moe.at_least("expert_ffn_hidden_size", 1);
  moe.non_negative("num_shared_experts");
  if (moe.non_negative("first_dense_layers") && m.first_dense_layers() >= t.num_layers() &&
      t.num_layers() > 0) {
    moe.error("first_dense_layers", "must be less than num_layers (" +
                                        std::to_string(t.num_layers()) + "): no layer has experts");
  }
  if (moe.at_least("layer_interval", 1) && m.layer_interval() > t.num_layers() &&
      t.num_layers() > 0) {
    moe.error("layer_interval", "must not exceed num_layers (" + std::to_string(t.num_layers()) +
                                    "): no layer has experts");
  } else if (m.layer_interval() >= 1 && m.first_dense_layers() > 0 &&
             m.first_dense_layers() < t.num_layers() &&
             t.num_layers() / m.layer_interval() * m.layer_interval() <= m.first_dense_layers()) {
    // The last layer with experts, 0-based, is the last multiple of the interval minus 1.
    moe.error("layer_interval", "leaves no layer with experts after the " +
                                    std::to_string(m.first_dense_layers()) +
                                    " first_dense_layers of " + std::to_string(t.num_layers()));
  }
  if (moe.non_negative("hash_routed_layers") && m.hash_routed_layers() > 0) {
    if (m.hash_routed_layers() > t.num_layers() && t.num_layers() > 0) {
      moe.error("hash_routed_layers", "must not exceed num_layers (" +
                                          std::to_string(t.num_layers()) + ")");
    } else if (m.first_dense_layers() > 0 || m.layer_interval() > 1) {
      moe.error("hash_routed_layers",
                "routes the first layers' experts: needs every layer with experts "
                "(first_dense_layers 0, layer_interval 1)");
    }
  }
}

void check_latent_attention(const FieldChecker& t) {
  const FieldChecker mla = t.child("latent_attention");
  for (const char* f : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
    mla.require(f) && mla.at_least(f, 1);
  }
  mla.at_least("q_lora_rank", 1);
  for (const char* f : {"num_kv_heads", "head_dim", "qk_norm", "qkv_bias"}) {
    if (t.has(f)) t.error(f, "does not apply with latent_attention (its own head dimensions)");
  }
}

// DeepSeek V4's attention: its shape, one compress ratio a layer (0, 4 or 128), the indexer when
// a layer has ratio 4, and none of the other attentions' fields.
void check_compressed_sparse_attention(const FieldChecker& t) {
  const auto& m = static_cast<const s::Transformer&>(t.message());
  const FieldChecker csa = t.child("compressed_sparse_attention");
  const s::CompressedSparseAttention& c = m.compressed_sparse_attention();
  for (const char* f : {"q_lora_rank", "head_dim", "qk_rope_head_dim", "o_lora_rank", "o_groups",
                        "window_tokens"}) {
    csa.require(f) && csa.at_least(f, 1);
  }
  // A window, or an indexer's top-k, past the longest sequence is the whole sequence: 2^31 - 1
  // was taken so, silently (tools/input_audit.py).
  const auto within_context = [&](const char* f, int64_t value) {
    if (m.max_sequence_length() > 0 && value > m.max_sequence_length()) {
      csa.error(f, std::to_string(value) + " is more than max_sequence_length (" +
                       std::to_string(m.max_sequence_length()) + ") tokens");
    }
  };
  within_context("window_tokens", c.window_tokens());
  if (c.qk_rope_head_dim() >= c.head_dim() && c.head_dim() > 0) {
    csa.error("qk_rope_head_dim",
              "must be less than head_dim (" + std::to_string(c.head_dim()) + "), got " +
                  std::to_string(c.qk_rope_head_dim()));
  }
  if (c.o_groups() > 0 && m.num_attention_heads() % c.o_groups() != 0) {
    csa.error("o_groups", "must divide num_attention_heads (" +
                              std::to_string(m.num_attention_heads()) + "), got " +
                              std::to_string(c.o_groups()));
  }
  if (csa.size("compress_ratios") != m.num_layers()) {
    csa.error("compress_ratios", "has " + std::to_string(csa.size("compress_ratios")) +
                                     " entries, one a layer: num_layers is " +
                                     std::to_string(m.num_layers()));
  }
  bool indexed = false;
  for (int i = 0; i < c.compress_ratios_size(); ++i) {
    const int ratio = c.compress_ratios(i);
    if (ratio != 0 && ratio != 4 && ratio != 128) {
      csa.error("compress_ratios",
                "is " + std::to_string(ratio) +
                    ": 0 (window only), 4 (indexed compressed keys) or 128 (all compressed keys)",
                i);
    }
    indexed = indexed || ratio == 4;
  }
  for (const char* f : {"index_n_heads", "index_head_dim", "index_topk"}) {
    if (indexed) {
      csa.require(f) && csa.at_least(f, 1);
      if (std::string_view(f) == "index_topk") within_context(f, c.index_topk());
    } else if (csa.has(f)) {
      csa.error(f, "applies to the indexer of ratio-4 layers, and compress_ratios has none");
    }
  }
  for (const char* f : {"latent_attention", "num_kv_heads", "head_dim", "qk_norm", "qkv_bias",
                        "sliding_window", "hybrid_layer_pattern", "parallel_attention_mlp"}) {
    if (t.has(f)) t.error(f, "does not apply with compressed_sparse_attention");
  }
  if (m.kind() == s::ENCODER) {
    t.error("compressed_sparse_attention", "applies to DECODER models only (causal windows)");
  }
}

void check_hyper_connections(const FieldChecker& t) {
  const FieldChecker hc = t.child("hyper_connections");
  hc.require("streams") && hc.at_least("streams", 2);
  hc.require("sinkhorn_iterations") && hc.at_least("sinkhorn_iterations", 1);
  if (t.has("hybrid_layer_pattern")) {
    t.error("hyper_connections", "is not simulated with hybrid_layer_pattern");
  }
}

void check_mamba(const FieldChecker& mamba, int64_t max_sequence_length) {
  for (const char* f : {"num_heads", "head_dim", "state_dim", "num_groups"}) {
    mamba.require(f) && mamba.at_least(f, 1);
  }
  mamba.at_least("conv_kernel", 1);
  // A chunk past the longest sequence is the whole sequence (2^31 - 1 was taken so, silently;
  // tools/input_audit.py).
  const auto& m = static_cast<const s::Mamba2&>(mamba.message());
  if (mamba.at_least("chunk_size", 1) && max_sequence_length > 0 &&
      m.chunk_size() > max_sequence_length) {
    mamba.error("chunk_size", std::to_string(m.chunk_size()) + " is more than max_sequence_length (" +
                                  std::to_string(max_sequence_length) + ") tokens");
  }
  check_divides(mamba, "num_groups", "num_heads");
}

// The letters of pattern `field`: each one of M * - E. False at the first that is not.
bool check_pattern_letters(const FieldChecker& t, const char* field, const std::string& pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      t.error(field, "letter " + std::to_string(i + 1) + " is '" + std::string(1, pattern[i]) +
                         "': one of 'M' (Mamba), '*' (attention), '-' (MLP), 'E' (experts)");
      return false;
    }
  }
  return true;
}

// A hybrid model's multi-token-prediction layers: a non-empty pattern of its blocks, given when
// and only when it has such layers.
void check_multi_token_prediction_pattern(const FieldChecker& t) {
  const auto& m = static_cast<const s::Transformer&>(t.message());
  const bool modules = m.multi_token_prediction_layers() > 0;
  if (modules && !m.has_multi_token_prediction_pattern()) {
    t.error("multi_token_prediction_layers",
            "needs multi_token_prediction_pattern with hybrid_layer_pattern (the blocks of each "
            "module, e.g. \"*E\")");
  }
  if (!m.has_multi_token_prediction_pattern()) return;
  if (!modules) {
    t.error("multi_token_prediction_pattern", "applies with multi_token_prediction_layers > 0");
  } else if (m.multi_token_prediction_pattern().empty()) {
    t.error("multi_token_prediction_pattern", "is empty: one letter a block of each module");
  }
}

// A hybrid pattern: num_layers letters of M * - E, each with the block it names described (those
// of the multi-token-prediction pattern too).
void check_hybrid_pattern(const FieldChecker& t) {
  const auto& m = static_cast<const s::Transformer&>(t.message());
  const std::string& pattern = m.hybrid_layer_pattern();
  if (static_cast<int>(pattern.size()) != m.num_layers()) {
    t.error("hybrid_layer_pattern", "has " + std::to_string(pattern.size()) +
                                        " letters, one a layer: num_layers is " +
                                        std::to_string(m.num_layers()));
  }
  if (!check_pattern_letters(t, "hybrid_layer_pattern", pattern)) return;
  check_multi_token_prediction_pattern(t);
  const std::string& mtp = m.multi_token_prediction_pattern();
  if (!check_pattern_letters(t, "multi_token_prediction_pattern", mtp)) return;
  const std::pair<const char*, const std::string*> patterns[] = {
      {"hybrid_layer_pattern", &pattern}, {"multi_token_prediction_pattern", &mtp}};
  for (const auto& [field, letters] : patterns) {
    if (letters->find('M') != std::string::npos && !m.has_mamba()) {
      t.error(field, "has 'M' layers: needs mamba");
    }
    if (letters->find('E') != std::string::npos && !m.has_moe()) {
      t.error(field, "has 'E' layers: needs moe");
    }
  }
  if (m.has_moe() && pattern.find('E') == std::string::npos) {
    t.error("moe", "applies to a hybrid pattern's 'E' layers, and it has none");
  }
  for (const char* f : {"first_dense_layers", "layer_interval"}) {
    if (m.has_moe() && t.child("moe").has(f)) {
      t.child("moe").error(f, "does not apply with hybrid_layer_pattern");
    }
  }
  for (const char* f : {"sliding_window", "parallel_attention_mlp"}) {
    if (t.has(f)) t.error(f, "is not simulated with hybrid_layer_pattern yet");
  }
}

void check_transformer(const FieldChecker& t) {
  const auto& m = static_cast<const s::Transformer&>(t.message());
  t.require_enum("kind");
  for (const char* f : {"num_layers", "hidden_size", "num_attention_heads", "ffn_hidden_size",
                        "vocab_size", "max_sequence_length"}) {
    t.require(f) && t.at_least(f, 1);
  }
  t.at_least("num_kv_heads", 1);
  t.at_least("head_dim", 1);
  t.non_negative("token_type_vocab_size");
  t.require_enum("mlp_activation");
  t.require_enum("normalization");
  t.require_enum("position_embedding");
  if (!m.has_head_dim() && !m.has_latent_attention()) {
    check_divides(t, "num_attention_heads", "hidden_size");
  }
  if (m.has_num_kv_heads() && m.num_kv_heads() > 0 && m.num_attention_heads() % m.num_kv_heads()) {
    t.error("num_kv_heads", "must divide num_attention_heads (" +
                                std::to_string(m.num_attention_heads()) + "), got " +
                                std::to_string(m.num_kv_heads()));
  }
  if (m.qkv_bias() && m.linear_bias()) {
    t.error("qkv_bias", "is part of linear_bias (every projection's bias): set one");
  }
  if (m.pretraining_heads() && m.kind() != s::ENCODER) {
    t.error("pretraining_heads", "applies to ENCODER models only");
  }
  if (t.has("moe")) check_moe(t.child("moe"), m);
  if (t.has("mamba")) {
    check_mamba(t.child("mamba"), m.max_sequence_length());
    if (!t.has("hybrid_layer_pattern")) t.error("mamba", "applies with hybrid_layer_pattern");
  }
  if (t.has("hybrid_layer_pattern")) check_hybrid_pattern(t);
  if (t.has("moe_latent_size") && t.at_least("moe_latent_size", 1) && !t.has("moe")) {
    t.error("moe_latent_size", "applies with moe");
  }
  if (t.has("latent_attention")) check_latent_attention(t);
  if (t.has("compressed_sparse_attention")) check_compressed_sparse_attention(t);
  if (t.has("hyper_connections")) check_hyper_connections(t);
  // Each module is one layer more: more modules than the model has layers is no model (2^31 - 1
  // of them aborted the step; tools/input_audit.py).
  if (t.non_negative("multi_token_prediction_layers") &&
      m.multi_token_prediction_layers() > m.num_layers() && m.num_layers() > 0) {
    t.error("multi_token_prediction_layers",
            std::to_string(m.multi_token_prediction_layers()) + " modules are more than the " +
                std::to_string(m.num_layers()) + " layers of the model (each module is one layer)");
  }
  if (t.has("multi_token_prediction_pattern") && !t.has("hybrid_layer_pattern")) {
    t.error(
        "multi_token_prediction_pattern",
        "applies with hybrid_layer_pattern (a non-hybrid module is one layer of the last kind)");
  }
  for (const char* f : {"multi_token_prediction_shared", "multi_token_prediction_sixteen_bit"}) {
    if (t.has(f) && m.multi_token_prediction_layers() <= 0) {
      t.error(f, "applies with multi_token_prediction_layers > 0");
    }
  }
  if (t.positive("activation_clamp") && t.has("activation_clamp") && m.has_mlp_activation() &&
      m.mlp_activation() != s::SWIGLU && m.mlp_activation() != s::GEGLU) {
    t.error("activation_clamp", "applies to gated activations (SWIGLU, GEGLU) only");
  }
  if (t.positive("glu_gate_sigmoid_scale") && t.has("glu_gate_sigmoid_scale") &&
      m.mlp_activation() != s::SWIGLU) {
    t.error("glu_gate_sigmoid_scale", "applies to SWIGLU only");
  }
  if (t.has("yarn_rotary_factor") &&
      !(m.yarn_rotary_factor() > 1 && std::isfinite(m.yarn_rotary_factor()))) {
    t.error("yarn_rotary_factor", "must be finite and > 1 (a factor of 1 is no YaRN scaling), got " +
                                      format_number(m.yarn_rotary_factor()));
  } else if (t.has("yarn_rotary_factor") && m.position_embedding() != s::ROTARY) {
    t.error("yarn_rotary_factor", "applies with position_embedding ROTARY only");
  } else if (t.has("yarn_rotary_factor") && m.has_latent_attention()) {
    // Its eager rotation is costed on the query and key heads of multi-head / grouped-query
    // attention only (layer_ops.cpp), not on latent attention's decoupled rotary part.
    t.error("yarn_rotary_factor", "is not simulated with latent_attention");
  }
  if (t.has("sliding_window")) {
    // The window's kernels and pairs are those of a causal mask (layer_ops.h).
    if (m.kind() == s::ENCODER) t.error("sliding_window", "applies to DECODER models only");
    const FieldChecker window = t.child("sliding_window");
    window.require("window_tokens") && window.at_least("window_tokens", 1);
    // Past the model's layers or its longest sequence, every layer would attend fully (2^31 - 1
    // of either was taken so, silently; tools/input_audit.py).
    if (window.has("full_attention_every") && window.at_least("full_attention_every", 2) &&
        m.sliding_window().full_attention_every() > m.num_layers() && m.num_layers() > 0) {
      window.error("full_attention_every",
                   std::to_string(m.sliding_window().full_attention_every()) +
                       " is more than the model's " + std::to_string(m.num_layers()) +
                       " layers: no layer would attend fully (omit it for that)");
    }
    if (m.sliding_window().window_tokens() > m.max_sequence_length() &&
        m.max_sequence_length() > 0) {
      window.error("window_tokens",
                   std::string(m.sliding_window().chunked() ? "a chunk" : "a window") +
                       " must not exceed max_sequence_length (" +
                       std::to_string(m.max_sequence_length()) + ")");
    }
  }
}

// Walks the layers, reporting the first layer (and its line) whose shape does not work out.
bool check_cnn_layers(const FieldChecker& owner, const char* field, CnnShape* shape);

bool check_cnn_layer(const FieldChecker& layer, CnnShape* shape) {
  const auto& m = static_cast<const s::CnnLayer&>(layer.message());
  const int errors_before = layer.diagnostics()->error_count();
  if (m.has_conv()) {
    const FieldChecker conv = layer.child("conv");
    conv.require("out_channels") && conv.at_least("out_channels", 1);
    conv.require("kernel") && conv.at_least("kernel", 1);
    conv.at_least("stride", 1);
    conv.non_negative("padding");
  } else if (m.has_pool()) {
    layer.child("pool").require_enum("kind");
  } else if (m.has_linear()) {
    layer.child("linear").require("out_features") &&
        layer.child("linear").at_least("out_features", 1);
  } else if (m.has_residual()) {
    const FieldChecker block = layer.child("residual");
    block.at_least("repeat", 1);
    if (!block.require("body")) return false;
    CnnShape body = *shape, shortcut = *shape;
    if (!check_cnn_layers(block, "body", &body) ||
        !check_cnn_layers(block, "shortcut", &shortcut)) {
      return false;
    }
  }
  if (layer.diagnostics()->error_count() != errors_before) return false;
  std::string why;
  auto out = cnn_layer_output(m, *shape, &why);
  if (!out) {
    layer.error_here(why);
    return false;
  }
  *shape = *out;
  return true;
}

bool check_cnn_layers(const FieldChecker& owner, const char* field, CnnShape* shape) {
  for (int i = 0; i < owner.size(field); ++i) {
    if (!check_cnn_layer(owner.child(field, i), shape)) return false;
  }
  return true;
}

constexpr double kMaxCnnInputSide = 1 << 16;  // pixels, or channels

void check_cnn(const FieldChecker& cnn) {
  bool ok = true;
  // At most 65,536: sides of a gigapixel image, far past any CNN's training inputs (ImageNet's
  // 224); 2^31 - 1 was taken, a step's FLOPs then out of any sense (tools/input_audit.py).
  for (const char* f : {"input_height", "input_width", "input_channels"}) {
    ok = cnn.require(f) && cnn.in_range(f, 1, kMaxCnnInputSide) && ok;
  }
  if (!cnn.require("layer") || !ok) return;
  const auto& m = static_cast<const s::Cnn&>(cnn.message());
  CnnShape shape{m.input_channels(), m.input_height(), m.input_width()};
  check_cnn_layers(cnn, "layer", &shape);
}

// Requires: the model's shape passed its checks.
// The shape must reproduce a published parameter count (`field`, rounded to `digits_field`
// significant digits when present): exactly, or to the published rounding (half a unit in the last
// significant digit). A larger gap means a wrong field.
void check_published(const FieldChecker& model, const char* field, const char* digits_field,
                     int64_t derived) {
  if (!model.has(field) || !model.positive(field)) return;
  if (!model.in_range(digits_field, 1, 18)) return;
  const auto published = static_cast<int64_t>(model.number(field));
  double tolerance = 0;
  if (model.has(digits_field)) {
    const int magnitude = static_cast<int>(std::floor(std::log10(static_cast<double>(published))));
    tolerance = 0.5 * std::pow(10.0, magnitude - model.number(digits_field) + 1);
  }
  if (std::abs(static_cast<double>(derived - published)) > tolerance) {
    model.error(field, "the shape gives " + std::to_string(derived) + " parameters, " +
                           format_fixed(100.0 * (static_cast<double>(derived) / published - 1), 3) +
                           "% off the published " + std::to_string(published));
  }
}

void check_published_counts(const FieldChecker& model) {
  const auto& m = static_cast<const s::Model&>(model.message());
  check_published(model, "published_parameter_count", "published_significant_digits",
                  parameter_count(m));
  check_published(model, "published_active_parameter_count", "published_active_significant_digits",
                  active_parameter_count(m, !m.published_active_excludes_embedding()));
  for (const char* f :
       {"published_active_significant_digits", "published_active_excludes_embedding"}) {
    if (model.has(f) && !model.has("published_active_parameter_count")) {
      model.error(f, "applies with published_active_parameter_count, which is not given");
    }
  }
}

}  // namespace

void check_model(const FieldChecker& model) {
  const auto& m = static_cast<const s::Model&>(model.message());
  model.require("name");
  const int errors_before = model.diagnostics()->error_count();
  if (m.has_transformer()) {
    check_transformer(model.child("transformer"));
  } else if (m.has_cnn()) {
    check_cnn(model.child("cnn"));
  } else {
    model.error_here("needs a transformer or a cnn");
  }
  if (model.diagnostics()->error_count() == errors_before) check_published_counts(model);
  check_source(model);
}

}  // namespace clustersim
