// Chunked tensor-parallel overlap: the pipeline of chunks against hand-counted schedules.
#include "sim/parallel/tensor_comm_overlap.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

Picoseconds us(int64_t n) { return Picoseconds::from_microseconds(static_cast<double>(n)); }

TEST_CASE("a ring exchange hides a collective no slower than the GEMM chunks") {
  // 4 ranks, 10 us per chunk GEMM, 30 us collective: 3 transfers of 10 us, each beside a GEMM.
  const OverlappedTime t = ring_exchange_overlap(us(10), us(30), 4);
  CHECK(t.compute == us(40));
  CHECK(t.exposed == Picoseconds());
}

TEST_CASE("a ring exchange exposes what the transfers outlast the GEMM chunks by") {
  // 3 transfers of 30 us: 10 + 3 x 30 = 100 us, of which 40 us GEMMs.
  const OverlappedTime t = ring_exchange_overlap(us(10), us(90), 4);
  CHECK(t.compute == us(40));
  CHECK(t.exposed == us(60));
}

TEST_CASE("a pipelined reduce-scatter leaves its last chunk's transfer exposed") {
  // 4 chunks of 10 us: 10 + 3 x max(10, 40/4) + 10, the last chunk sent after its GEMM.
  CHECK(pipelined_overlap(us(10), us(40), 4).compute == us(40));
  CHECK(pipelined_overlap(us(10), us(40), 4).exposed == us(10));
  // Transfers of 30 us: 10 + 3 x 30 + 30 = 130.
  CHECK(pipelined_overlap(us(10), us(120), 4).exposed == us(90));
}

TEST_CASE("a bulk overlap exposes only what outlasts the GEMM beside it") {
  CHECK(bulk_overlap_exposed(us(30), us(50)) == Picoseconds());
  CHECK(bulk_overlap_exposed(us(80), us(50)) == us(30));
}

TEST_CASE("a GEMM on the SMs a communication kernel leaves takes SMs / (SMs - reserved) longer") {
  // H100 SXM's 132 SMs, 24 reserved (v3.0's proj_fprop): 108 us x 132 / 108.
  CHECK(on_sms_left(us(108), 132, 24) == us(132));
  CHECK(on_sms_left(us(108), 132, 0) == us(108));
  // No SM count known: unchanged.
  CHECK(on_sms_left(us(108), 0, 24) == us(108));
}

}  // namespace
}  // namespace clustersim
