// Field checks of the parts of a serving scenario: traffic, scheduler, quantization, latency
// objectives, benchmarks. Each reports every problem at its field's line.
#pragma once

#include <string>

#include "sim/io/field_checker.h"
#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/instance.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {

// The longest length a distribution draws (0 when it is malformed: reported by check_traffic).
int max_length(const schema::LengthDistribution& lengths);

// The most distinct prefixes traffic.shared_prefix may have (each holds a length and a
// popularity; a million is beyond any deployment's cache).
inline constexpr int kMaxSharedPrefixes = 1 << 20;

// Traffic: exactly one kind of arrivals, positive rates and durations, well-formed length
// distributions whose longest request (shared prefix included) fits the model's context
// (`max_context` tokens).
void check_traffic(const FieldChecker& traffic, int max_context);

// A feature that needs continuous batching: static batching, in the deployment's scheduler or in
// the sweep's list, is an error at its line saying `why`.
void refuse_static_batching(const FieldChecker& root, const char* why);

// A scheduler's caps; `longest_prompt` tokens must fit the token budget without chunked prefill,
// and a KV-cache block holds at most one sequence of the model's `max_context` tokens.
void check_scheduler(const FieldChecker& scheduler, int longest_prompt, int max_context);

// Whether `gpu` has tensor-core math for matmul inputs of `precision` (a peak_tflops entry).
bool has_tensor_cores(const schema::Gpu& gpu, schema::Precision precision);

// Why `gpu` cannot run `q`'s matmuls ("GPU \"T4-PCIE-16GB\" has no FP8 support"), or "".
std::string quantization_problem(const schema::Quantization& q, const schema::Gpu& gpu);

// Quantization formats against one candidate GPU (the one of `instance_name`): each format must
// be one the role allows and, for the matmul inputs, one the GPU has tensor cores for.
// `gpu` null: the formats only (a swept quantization, checked per deployment).
void check_quantization(const FieldChecker& quantization, const schema::Gpu* gpu,
                        const std::string& instance_name);

void check_slo(const FieldChecker& slo);

// Benchmark runs: positive sizes and published figures; a context beyond the model's is a
// warning (published runs went beyond it).
void check_benchmark(const FieldChecker& benchmark, int max_context);

// The formats a Quantization message stands for once its defaults are applied, on `gpu`
// (absent weights: the GPU's 16-bit format, BF16 where it has one).
TensorFormats resolve_formats(const schema::Quantization& q, const schema::Gpu& gpu);

}  // namespace clustersim
