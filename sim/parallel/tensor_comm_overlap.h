// Tensor-parallel collectives run beside the GEMMs they feed or drain (Megatron-Core's
// --tp-comm-overlap through Transformer Engine's userbuffers), under sequence parallelism:
//   ring exchange: an all-gather in front of a GEMM is split into one chunk per rank; the GEMM of
//     the chunk a rank holds runs while the next chunk arrives, so the pair takes
//     g + (r-1) max(g, c/(r-1)), g one chunk's GEMM, c the whole collective, r the ranks;
//   pipelined: a GEMM split into k chunks reduce-scatters each chunk's result while the next is
//     computed; the last chunk's is left over: g + (k-1) max(g, c/k) + c/k;
//   bulk: a collective runs whole beside an independent GEMM (the backward's weight gradient);
//     only what outlasts it is exposed.
// Every chunk is a GEMM of its own: 1/r (1/k) of the rows, its own tile quantization and overhead.
// A pipelined reduce-scatter configured with an SM margin (Transformer Engine's ub config
// set_sm_margin: the GEMM launched with an SM-count target of the GPU's SMs less the
// communication kernel's num_sm, comm_gemm_overlap.h UbufCommOverlap _math_sms, release_v0.8 on)
// runs its GEMM chunks on the SMs left (on_sms_left). Not modelled: the SMs the communication
// kernels share with a GEMM launched without a margin (TE's default, 16 for pipeline and bulk).
#pragma once

#include "sim/util/units.h"

namespace clustersim {

struct OverlappedTime {
  Picoseconds compute;  // the GEMM chunks on the compute stream
  Picoseconds exposed;  // communication the GEMM chunks do not cover
};

// `chunk_gemm`: one chunk's GEMM; `collective`: the whole collective alone.
// Requires: ranks >= 2; chunks >= 1.
OverlappedTime ring_exchange_overlap(Picoseconds chunk_gemm, Picoseconds collective, int ranks);
OverlappedTime pipelined_overlap(Picoseconds chunk_gemm, Picoseconds collective, int chunks);
// Exposed time of `collective` run whole beside `beside`.
Picoseconds bulk_overlap_exposed(Picoseconds collective, Picoseconds beside);
// A compute-bound GEMM of `gemm` on all `sms` SMs of the GPU, run on the `sms` - `reserved` left
// to it: its waves of tiles spread over fewer SMs, gemm x sms / (sms - reserved). `sms` 0 (no
// SM count known) or `reserved` 0: unchanged. Requires: 0 <= reserved < sms, or sms 0.
Picoseconds on_sms_left(Picoseconds gemm, int sms, int reserved);

}  // namespace clustersim
