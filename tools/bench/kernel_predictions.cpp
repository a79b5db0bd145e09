// The compute model's isolated kernel predictions against measured kernels: reads the CSV that
// tools/bench/gpu_kernels.py writes (GEMMs, fused attention, HBM rates measured on one GPU) and
// prints, as markdown tables, each row's measured and predicted rate and their ratio, with the
// mean ratio of each class (kernel, precision, pass). Predictions are the catalog GPU's isolated
// rates (sustained fraction 1), in the benchmark's conventions (gpu_kernels.py's header).
// Usage: kernel_predictions GPU CSV   (GPU: a catalog name or alias)
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/catalog.h"
#include "sim/parallel/collective_sm_contention.h"

namespace {

using namespace clustersim;
namespace s = schema;

// The comma-separated fields of one CSV line (double quotes around a field with commas).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (const char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

struct Row {
  std::string kernel, precision, shape, mask, pass;
  double measured = 0;  // TFLOP/s, or TB/s for the HBM rows
};

// The predicted rate of `row` in the measured column's unit; 0 for a row the model has no kernel
// for.
double predicted(const Row& row, const s::Gpu& gpu, const s::Runtime& runtime) {
  // Every row but the FP8 GEMMs' is BF16 (attention, HBM, permutations included).
  const ComputeModel model(gpu, row.precision == "BF16" ? s::BF16 : s::FP8, runtime,
                           KernelSetting::kIsolated);
  if (row.kernel == "gemm" || row.kernel == "gemm probe" ||
      row.kernel == "gemm beside resident CTAs") {
    long long m = 0, n = 0, k = 0;
    std::sscanf(row.shape.c_str(), "%lldx%lldx%lld", &m, &n, &k);
    CollectiveSmContention contention(gpu.streaming_multiprocessors());
    if (row.mask == "spin" || row.mask == "copy") {
      contention.add_ctas(Picoseconds(0), std::stoi(row.pass));
    }
    const std::optional<Picoseconds> end = contention.start(Picoseconds(0), model.matmul(m, n, k));
    return end ? 2.0 * m * n * k / end->seconds() / 1e12 : 0;  // 0: every SM held
  }
  if (row.kernel == "gemm tp chunks") {
    // The step times each chunk as a GEMM of its own, one after another on one stream
    // (sim/parallel/tensor_comm_overlap.h), whatever streams the row ran them on.
    long long m = 0, n = 0, k = 0;
    int chunks = 1;
    std::sscanf(row.shape.c_str(), "%lldx%lldx%lld", &m, &n, &k);
    std::sscanf(row.pass.c_str(), "chunks%d", &chunks);
    const double seconds = chunks * model.matmul(m / chunks, n, k).seconds();
    return 2.0 * m * n * k / seconds / 1e12;
  }
  if (row.kernel.rfind("attention steps ", 0) == 0) {
    long long queries = 0, keys = 0, heads = 0;
    int head_dim = 128;
    std::sscanf(row.shape.c_str(), "q%lld_k%lld_h%lld_hd%d", &queries, &keys, &heads, &head_dim);
    AttentionKernel kernel{heads, queries, keys, head_dim, row.mask == "causal"};
    if (row.kernel == "attention steps FlashAttention-2") kernel.library = s::FLASH_ATTENTION_2;
    const double forward_flops = 4.0 * heads * kernel.pairs() * head_dim;
    return row.pass == "fwd" ? forward_flops / model.attention_forward(kernel).seconds() / 1e12
                             : 2.5 * forward_flops / model.attention_backward(kernel).seconds() / 1e12;
  }
  if (row.kernel.rfind("expert gemm", 0) == 0) {
    long long g = 0, m = 0, n = 0, k = 0;
    std::sscanf(row.shape.c_str(), "%lldx%lldx%lldx%lld", &g, &m, &n, &k);
    const double seconds = row.kernel.rfind("expert gemm loop", 0) == 0
                               ? g * model.matmul(m, n, k).seconds()
                               : model.matmul(m, n, k, g).seconds();
    return 2.0 * g * m * n * k / seconds / 1e12;
  }
  if (row.kernel.rfind("attention ", 0) == 0) {
    int seq = 0, head_dim = 0;
    std::sscanf(row.shape.c_str(), "seq%d_hd%d", &seq, &head_dim);
    // FlashAttention's benchmark: 16,384 tokens a batch, model width 2048.
    AttentionKernel kernel{(16384 / seq) * (2048 / head_dim), seq, seq, head_dim,
                           row.mask == "causal"};
    if (row.kernel == "attention FlashAttention-2") kernel.library = s::FLASH_ATTENTION_2;
    const double forward_flops = 4.0 * (16384 / seq) * (2048 / head_dim) * double(seq) * seq *
                                 head_dim / (kernel.causal ? 2 : 1);
    const double forward_s = model.attention_forward(kernel).seconds();
    const double backward_s = model.attention_backward(kernel).seconds();
    if (row.pass == "fwd") return forward_flops / forward_s / 1e12;
    if (row.pass == "bwd") return 2.5 * forward_flops / backward_s / 1e12;
    return 3.5 * forward_flops / (forward_s + backward_s) / 1e12;
  }
  // HBM: bytes read plus written over the time, any kernel that only moves bytes.
  const double bytes = 1e12;
  return bytes / model.memory_bound(bytes).seconds() / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: kernel_predictions GPU CSV\n", stderr);
    return 2;
  }
  const std::string root = CLUSTERSIM_DEFAULT_ROOT;
  Diagnostics diagnostics;
  auto catalog = Catalog::load({root + "/models", root + "/topologies"}, &diagnostics);
  if (!catalog || catalog->gpus().find(argv[1]) == nullptr) {
    std::fprintf(stderr, "%sno GPU \"%s\"\n", diagnostics.to_string().c_str(), argv[1]);
    return 1;
  }
  const s::Gpu& gpu = *catalog->gpus().find(argv[1])->value;
  const s::Runtime& runtime = *catalog->runtimes().find("default")->value;
  std::ifstream in(argv[2]);
  std::string line;
  std::map<std::string, std::pair<double, int>> means;  // class: sum of ratios, rows
  std::printf(
      "| kernel | precision | shape | mask | pass | measured | predicted | ratio |\n"
      "|---|---|---|---|---|---:|---:|---:|\n");
  while (std::getline(in, line)) {
    const std::vector<std::string> f = fields(line);
    if (line.empty() || line[0] == '#' || f.size() != 7 || f[0] == "kernel") continue;
    const Row row{f[0], f[1], f[2], f[3], f[4], std::stod(f[6])};
    const double rate = predicted(row, gpu, runtime);
    const double ratio = row.measured / rate;
    std::printf("| %s | %s | %s | %s | %s | %.4g | %.4g | %.2f |\n", row.kernel.c_str(),
                row.precision.c_str(), row.shape.c_str(), row.mask.c_str(), row.pass.c_str(),
                row.measured, rate, ratio);
    // A class per pass, the GEMMs beside resident CTAs per what the CTAs do and their count
    // (their pass column also carries the clock read during the batches).
    const std::string pass = row.pass.substr(0, row.pass.find(" @"));
    const std::string kind = row.kernel == "gemm beside resident CTAs" ? " " + row.mask : "";
    auto& mean = means[row.kernel + " " + row.precision + kind + " " + pass];
    mean.first += ratio;
    mean.second += 1;
  }
  std::printf("\n| class | rows | mean measured / predicted |\n|---|---:|---:|\n");
  for (const auto& [name, mean] : means) {
    std::printf("| %s | %d | %.3f |\n", name.c_str(), mean.second, mean.first / mean.second);
  }
  return 0;
}
