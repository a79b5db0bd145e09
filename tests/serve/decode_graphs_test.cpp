// Tests of sim/serve/decode_graphs: captured CUDA-graph batch sizes and padding to them.
#include "sim/serve/decode_graphs.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

// TensorRT-LLM 1.0's rule with padding: 1, 2, 4, 8, 16, ..., 128, then powers of two from 256.
schema::DecodeGraphs release_rule() {
  schema::DecodeGraphs g;
  for (const int32_t b : {1, 2, 4}) g.add_batch_sizes(b);
  for (int32_t b = 8; b <= 128; b += 8) g.add_batch_sizes(b);
  g.set_doubling_from(256);
  return g;
}

std::vector<int32_t> tail(const std::vector<int32_t>& sizes, size_t n) {
  return {sizes.end() - static_cast<std::ptrdiff_t>(n), sizes.end()};
}

TEST_CASE("captured decode batches: the listed sizes, powers of two p with 2p <= L, then L") {
  const schema::DecodeGraphs g = release_rule();
  const std::vector<int32_t> at_640 = captured_decode_batches(g, 640, 2048);
  CHECK(at_640.size() == 21);  // 19 listed, 256, 640
  CHECK(tail(at_640, 3) == std::vector<int32_t>{128, 256, 640});
  CHECK(tail(captured_decode_batches(g, 4096, 8192), 6) ==
        std::vector<int32_t>{128, 256, 512, 1024, 2048, 4096});
  // A token budget below the batch caps the largest graph; none above it.
  CHECK(tail(captured_decode_batches(g, 4096, 300), 2) == std::vector<int32_t>{128, 300});
  CHECK(captured_decode_batches(g, 100, 8192).back() == 100);
  CHECK(tail(captured_decode_batches(g, 100, 8192), 2) == std::vector<int32_t>{96, 100});
}

TEST_CASE("a decode batch pads to the smallest captured size holding it, else runs as it is") {
  const std::vector<int32_t> sizes = captured_decode_batches(release_rule(), 640, 2048);
  CHECK(padded_decode_batch(sizes, 3) == 4);
  CHECK(padded_decode_batch(sizes, 8) == 8);
  CHECK(padded_decode_batch(sizes, 129) == 256);
  CHECK(padded_decode_batch(sizes, 501) == 640);
  CHECK(padded_decode_batch({}, 501) == 501);
  CHECK(padded_decode_batch({1, 2, 4}, 5) == 5);
}

}  // namespace
}  // namespace clustersim
