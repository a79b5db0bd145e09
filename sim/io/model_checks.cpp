// Checks of model entries: transformer shapes and CNN layer lists (shapes must flow end to end).
#include <cmath>

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
  if (!m.has_head_dim()) check_divides(t, "num_attention_heads", "hidden_size");
  if (m.has_num_kv_heads() && m.num_kv_heads() > 0 && m.num_attention_heads() % m.num_kv_heads()) {
    t.error("num_kv_heads", "must divide num_attention_heads (" +
                                std::to_string(m.num_attention_heads()) + "), got " +
                                std::to_string(m.num_kv_heads()));
  }
  if (m.pretraining_heads() && m.kind() != s::ENCODER) {
    t.error("pretraining_heads", "applies to ENCODER models only");
  }
  if (t.has("moe")) {
    const FieldChecker moe = t.child("moe");
    moe.require("num_experts") && moe.at_least("num_experts", 1);
    if (moe.require("experts_per_token") && moe.at_least("experts_per_token", 1) &&
        m.moe().experts_per_token() > m.moe().num_experts()) {
      moe.error("experts_per_token",
                "must not exceed num_experts (" + std::to_string(m.moe().num_experts()) + ")");
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

void check_cnn(const FieldChecker& cnn) {
  bool ok = true;
  for (const char* f : {"input_height", "input_width", "input_channels"}) {
    ok = cnn.require(f) && cnn.at_least(f, 1) && ok;
  }
  if (!cnn.require("layer") || !ok) return;
  const auto& m = static_cast<const s::Cnn&>(cnn.message());
  CnnShape shape{m.input_channels(), m.input_height(), m.input_width()};
  check_cnn_layers(cnn, "layer", &shape);
}

// Requires: the model's shape passed its checks.
// The shape must reproduce the published parameter count: exactly, or to the published rounding
// (half a unit in the last significant digit). A larger gap means a wrong field.
void check_published_count(const FieldChecker& model) {
  const auto& m = static_cast<const s::Model&>(model.message());
  if (!m.has_published_parameter_count() || !model.positive("published_parameter_count")) return;
  if (!model.in_range("published_significant_digits", 1, 18)) return;
  const int64_t derived = parameter_count(m);
  const int64_t published = m.published_parameter_count();
  double tolerance = 0;
  if (m.has_published_significant_digits()) {
    const int magnitude = static_cast<int>(std::floor(std::log10(static_cast<double>(published))));
    tolerance = 0.5 * std::pow(10.0, magnitude - m.published_significant_digits() + 1);
  }
  if (std::abs(static_cast<double>(derived - published)) > tolerance) {
    model.error("published_parameter_count",
                "the shape gives " + std::to_string(derived) + " parameters, " +
                    format_fixed(100.0 * (static_cast<double>(derived) / published - 1), 3) +
                    "% off the published " + std::to_string(published));
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
  if (model.diagnostics()->error_count() == errors_before) check_published_count(model);
  check_source(model);
}

}  // namespace clustersim
