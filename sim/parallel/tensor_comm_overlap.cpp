// Chunked overlap of tensor-parallel collectives with GEMMs: the pipeline of chunks, step by step.
#include "sim/parallel/tensor_comm_overlap.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// `chunks` GEMMs, with a transfer of `step` beside every GEMM but the first, and one more after
// the last when `trailing_transfer`.
OverlappedTime chunk_pipeline(Picoseconds chunk_gemm, Picoseconds step, int chunks,
                              bool trailing_transfer) {
  Picoseconds total = chunk_gemm;
  for (int i = 1; i < chunks; ++i) total += std::max(chunk_gemm, step);
  if (trailing_transfer) total += step;
  const Picoseconds compute(chunk_gemm.count() * chunks);
  return {compute, total - compute};
}

}  // namespace

OverlappedTime ring_exchange_overlap(Picoseconds chunk_gemm, Picoseconds collective, int ranks) {
  CLUSTERSIM_CHECK(ranks >= 2, "a ring exchange needs two ranks");
  return chunk_pipeline(chunk_gemm, Picoseconds(collective.count() / (ranks - 1)), ranks, false);
}

OverlappedTime pipelined_overlap(Picoseconds chunk_gemm, Picoseconds collective, int chunks) {
  CLUSTERSIM_CHECK(chunks >= 1, "a pipelined overlap needs a chunk");
  return chunk_pipeline(chunk_gemm, Picoseconds(collective.count() / chunks), chunks, true);
}

Picoseconds bulk_overlap_exposed(Picoseconds collective, Picoseconds beside) {
  return std::max(Picoseconds(), collective - beside);
}

Picoseconds on_sms_left(Picoseconds gemm, int sms, int reserved) {
  if (sms == 0 || reserved == 0) return gemm;
  CLUSTERSIM_CHECK(reserved > 0 && reserved < sms, "reserved SMs outside [0, the GPU's SMs)");
  return Picoseconds(static_cast<int64_t>(
      std::llround(static_cast<double>(gemm.count()) * sms / (sms - reserved))));
}

}  // namespace clustersim
