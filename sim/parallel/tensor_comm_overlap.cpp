// Chunked overlap of tensor-parallel collectives with GEMMs: the pipeline of chunks, step by step.
#include "sim/parallel/tensor_comm_overlap.h"

#include <algorithm>

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

}  // namespace clustersim
