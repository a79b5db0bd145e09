// Compute beside overlapped collectives: the closed form T S / (S - c) of a compute wholly beside
// a collective on GPUs of different SM counts, no slowdown without one or on an accelerator
// without CUDA SMs, a collective that ends partway, collectives holding every SM of a small GPU
// (the compute waits), when a compute reaches a share of its work beside them, the work done
// beside the collectives' last spell without a gap, and a gather hidden under the forwards it
// slows; a stage's work carries its GPU's SMs from the catalog.
#include "sim/parallel/collective_sm_contention.h"

#include <catch2/catch.hpp>

#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

Picoseconds at_us(int64_t n) { return Picoseconds::from_microseconds(static_cast<double>(n)); }

constexpr int kH100Sms = 132, kB200Sms = 148;  // topologies/gpus.textproto

TEST_CASE("compute wholly beside a collective takes T S / (S - c)") {
  CollectiveSmContention h100(kH100Sms);
  CHECK(!h100.add_ctas(at_us(0), kNcclCollectiveCtas));  // no compute yet
  // 1000 us on 100 of the 132 SMs: 1320 us.
  CHECK(h100.start(at_us(0), at_us(1000)) == at_us(1320));
  CHECK(h100.ends_at(at_us(1320)));
  // On 116 of a B200's 148 SMs: 1000 x 148 / 116 = 1275.862... us, rounded up to the picosecond.
  CollectiveSmContention b200(kB200Sms);
  b200.add_ctas(at_us(0), kNcclCollectiveCtas);
  CHECK(b200.start(at_us(0), at_us(1000)) == Picoseconds(1275862069));
}

TEST_CASE("compute without a collective beside it keeps its duration") {
  CollectiveSmContention stream(kH100Sms);
  CHECK(stream.start(at_us(5), at_us(1000)) == at_us(1005));
  stream.finish();
  // A collective that ran and ended before the compute leaves it alone too.
  CHECK(!stream.add_ctas(at_us(1010), kNcclCollectiveCtas));
  CHECK(!stream.add_ctas(at_us(1100), -kNcclCollectiveCtas));
  CHECK(stream.start(at_us(1200), at_us(300)) == at_us(1500));
}

TEST_CASE("an accelerator without CUDA SMs is not slowed by its collectives") {
  CollectiveSmContention npu(0);
  npu.add_ctas(at_us(0), kNcclCollectiveCtas);
  CHECK(npu.start(at_us(0), at_us(1000)) == at_us(1000));
  CHECK(exposed_beside_compute(at_us(660), at_us(1000), 0) == Picoseconds());
  CHECK(exposed_beside_compute(at_us(1320), at_us(1000), 0) == at_us(320));
}

TEST_CASE("a collective beside part of a compute delays it by its share of that part") {
  CollectiveSmContention stream(kH100Sms);
  CHECK(stream.start(at_us(0), at_us(1000)) == at_us(1000));
  // From 100 us the 900 us left would take 900 x 132 / 100 = 1188 us beside the collective; it
  // ends after 132 us, which did 100 us of the work: the end moves by 32 us.
  CHECK(stream.add_ctas(at_us(100), kNcclCollectiveCtas) == at_us(1288));
  CHECK(stream.add_ctas(at_us(232), -kNcclCollectiveCtas) == at_us(1032));
  CHECK(stream.ends_at(at_us(1032)));
  CHECK(!stream.ends_at(at_us(1000)));  // the first end is stale
}

TEST_CASE("a compute reaches a share of its work at the pace the collectives leave it") {
  CollectiveSmContention stream(kH100Sms);
  stream.start(at_us(0), at_us(1000));
  // Alone: 400 us of work done at 400 us.
  CHECK(stream.reaches(at_us(0), at_us(400)) == at_us(400));
  // A collective from 100 us: 300 us more of work take 300 x 132 / 100 = 396 us.
  stream.add_ctas(at_us(100), kNcclCollectiveCtas);
  CHECK(stream.reaches(at_us(100), at_us(400)) == at_us(496));
  // At 232 us (100 + 132 x 100 / 100 us of work beside it): 200 us done, 200 more take 264 us.
  CHECK(stream.reaches(at_us(232), at_us(400)) == at_us(496));
  // Work already done is reached now.
  CHECK(stream.reaches(at_us(232), at_us(150)) == at_us(232));
  // With every SM held nothing is reached until a collective ends.
  CollectiveSmContention l4(58);
  l4.start(at_us(0), at_us(1000));
  l4.add_ctas(at_us(0), 2 * kNcclCollectiveCtas);
  CHECK(!l4.reaches(at_us(10), at_us(500)));
}

TEST_CASE("collectives holding every SM stop the compute until one ends") {
  constexpr int kL4Sms = 58;  // topologies/gpus.textproto
  CollectiveSmContention stream(kL4Sms);
  CHECK(stream.start(at_us(0), at_us(1000)) == at_us(1000));
  // One collective: 26 of 58 SMs left; 900 us of work left at 100 us takes 900 x 58 / 26.
  CHECK(stream.add_ctas(at_us(100), kNcclCollectiveCtas) == Picoseconds(2107692308));
  // A second: 64 CTAs, every SM held, no end; the first end is stale.
  CHECK(!stream.add_ctas(at_us(360), kNcclCollectiveCtas));
  CHECK(!stream.ends_at(Picoseconds(2107692308)));
  // 260 us at 26/58 did 116.55 us of work; nothing more until one collective ends at 500 us,
  // then 783.45 us left on 26 SMs: 500 + 783.45 x 58 / 26 = 2247.692... us.
  CHECK(stream.add_ctas(at_us(500), -kNcclCollectiveCtas) == Picoseconds(2247692308));
  CHECK(stream.ends_at(Picoseconds(2247692308)));
  // Started while every SM is held, a compute has no end until one is freed.
  stream.finish();
  CHECK(!stream.add_ctas(at_us(2250), kNcclCollectiveCtas));
  CHECK(!stream.start(at_us(2300), at_us(100)));
  // 100 us of work on 26 of 58 SMs from 2400 us: 223.076924 us (rounded up).
  CHECK(stream.add_ctas(at_us(2400), -kNcclCollectiveCtas) == Picoseconds(2623076924));
  // A gather beside forwards on a GPU of no more SMs than its CTAs: the forwards wait it out.
  CHECK(exposed_beside_compute(at_us(660), at_us(1000), 32) == at_us(660));
}

TEST_CASE("the work beside the collectives counts from their last spell without a gap") {
  CollectiveSmContention stream(kH100Sms);
  stream.start(at_us(0), at_us(1000));
  stream.record_work_beside_spell(at_us(50));  // none in flight: nothing recorded
  CHECK(stream.work_beside_collectives() == Picoseconds(0));
  // A spell from 100 us (100 us of work done): one collective to 232 us, the next from the same
  // instant (no gap). At 400 us, 200 + 168 x 100 / 132 us of work done, rounded to the
  // picosecond: 227.272727 us of it beside the spell.
  stream.add_ctas(at_us(100), kNcclCollectiveCtas);
  stream.add_ctas(at_us(232), -kNcclCollectiveCtas);
  stream.add_ctas(at_us(232), kNcclCollectiveCtas);
  stream.record_work_beside_spell(at_us(400));
  CHECK(stream.work_beside_collectives() == Picoseconds(227272727));
  // It ends at 500 us; none in flight at 550 us adds nothing; a collective from 600 us begins a
  // new spell, after a gap: at 700 us, 100 x 100 / 132 us more beside it.
  stream.add_ctas(at_us(500), -kNcclCollectiveCtas);
  stream.record_work_beside_spell(at_us(550));
  CHECK(stream.work_beside_collectives() == Picoseconds(227272727));
  stream.add_ctas(at_us(600), kNcclCollectiveCtas);
  stream.record_work_beside_spell(at_us(700));
  CHECK(stream.work_beside_collectives().seconds() * 1e6 ==
        Approx(227.272727 + 100.0 * 100 / 132).epsilon(1e-8));
  // The compute finishes beside the spell: all of its work since 600 us (1000 less 200 +
  // 268 x 100 / 132 + 100 us) ran beside it, the part since 700 us not yet recorded, and the
  // stream idle after adds nothing.
  const Picoseconds end = *stream.reaches(at_us(700), at_us(1000));
  stream.finish();
  stream.record_work_beside_spell(end + at_us(50));
  CHECK(stream.work_beside_collectives().seconds() * 1e6 ==
        Approx(227.272727 + 1000 - (300 + 268.0 * 100 / 132)).epsilon(1e-8));
}

TEST_CASE("a chain's record counts from the chain's start, never work an earlier record holds") {
  CollectiveSmContention stream;  // no SMs taken: work done at the clock's pace
  stream.start(at_us(0), at_us(1000));
  stream.add_ctas(at_us(50), kNcclCollectiveCtas);  // a spell from 50 us
  // A chain begun at 100 us of work, recorded at 300 us: 200 us; recorded again at 450 us, only
  // the 150 us since; another chain begun at 500 us, recorded at 600 us: 100 us more; the spell
  // in flight since 50 us, recorded at 700 us: only the 100 us no record holds.
  stream.record_work_beside(at_us(300), at_us(100));
  CHECK(stream.work_beside_collectives() == at_us(200));
  stream.record_work_beside(at_us(450), at_us(100));
  CHECK(stream.work_beside_collectives() == at_us(350));
  stream.record_work_beside(at_us(600), stream.work_done(at_us(500)));
  CHECK(stream.work_beside_collectives() == at_us(450));
  stream.record_work_beside_spell(at_us(700));
  CHECK(stream.work_beside_collectives() == at_us(550));
}

TEST_CASE("a gather beside forwards adds its slowdown, or what outlasts them") {
  // 660 us of gather beside 1000 us of forwards: 660 x 32 / 132 = 160 us more.
  CHECK(exposed_beside_compute(at_us(660), at_us(1000), kH100Sms) == at_us(160));
  // On a B200 the same gather takes 32 of 148 SMs: 660 x 32 / 148 = 142.703 us more.
  CHECK(exposed_beside_compute(at_us(660), at_us(1000), kB200Sms) == Picoseconds(142702703));
  // 1320 us of gather outlasts the slowed forwards (1000 x 132 / 100 = 1320): 320 us exposed.
  CHECK(exposed_beside_compute(at_us(1320), at_us(1000), kH100Sms) == at_us(320));
  CHECK(exposed_beside_compute(at_us(2000), at_us(1000), kH100Sms) == at_us(1000));
  CHECK(exposed_beside_compute(Picoseconds(), at_us(1000), kH100Sms) == Picoseconds());
}

TEST_CASE("a stage's work carries the SMs of its GPU in the catalog") {
  CHECK(testing::llama8b_b200_fp8_stage("").gpu_sms == kB200Sms);
}

}  // namespace
}  // namespace clustersim
