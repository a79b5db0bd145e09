// Small valid catalog entries in text format, for tests that break one field at a time.
#pragma once

#include <string>

namespace clustersim::testing {

inline const std::string kSource = R"(source { citation: "test fixture" confidence: READ })";

inline std::string gpu_entry(const std::string& extra = "") {
  return R"(gpu {
  name: "TestGPU-80GB"
  form_factor: SXM
  memory_gib: 80
  memory_bandwidth_gb_per_s: 2000
  peak_tflops { fp32: 19.5 bf16: 312 fp16: 312 }
  nvlink { generation: 3 links: 12 per_direction_gb_per_s: 300 }
  )" + kSource +
         "\n" + extra + "\n}\n";
}

inline std::string instance_entry(const std::string& fields) {
  return "instance {\n" + fields + "\n  " + kSource + "\n}\n";
}

// A valid 8-GPU instance of TestGPU-80GB; `override_fields` replaces nothing, it is appended, so
// tests pass fields that are not in the base.
inline std::string test_instance_fields(const std::string& name = "onprem.test8",
                                        const std::string& gpu = "TestGPU-80GB",
                                        const std::string& gpu_count = "8") {
  return "  name: \"" + name + "\"\n  provider: ONPREM\n  gpu: \"" + gpu +
         "\"\n  gpu_count: " + gpu_count +
         "\n  gpu_interconnect: NVSWITCH\n  vcpus: 96\n  host_memory_gib: 1024\n"
         "  network { kind: INFINIBAND total_gbit_per_s: 1600 nic_count: 8 }\n"
         "  price { billing: ON_DEMAND currency: USD per_hour: 20 region: \"x\" }";
}

inline std::string transformer_model(const std::string& name, const std::string& shape_extra = "",
                                     const std::string& model_extra = "") {
  return "model {\n  name: \"" + name + R"("
  transformer {
    kind: DECODER num_layers: 32 hidden_size: 4096 num_attention_heads: 32
    ffn_hidden_size: 11008 mlp_activation: SWIGLU normalization: RMSNORM
    position_embedding: ROTARY vocab_size: 32000 max_sequence_length: 4096
    )" + shape_extra +
         "\n  }\n  " + model_extra + "\n  " + kSource + "\n}\n";
}

}  // namespace clustersim::testing
