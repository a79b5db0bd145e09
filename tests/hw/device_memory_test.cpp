// The GPU memory the memory checks compare against: the label capped by what the driver exposes to
// CUDA (topologies/gpus.textproto cuda_total_memory_gib).
#include "sim/hw/device_memory.h"

#include <catch2/catch.hpp>

#include "sim/parallel/memory_model.h"
#include "sim/util/units.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::shipped_catalog;
using testing::shipped_instance;

const schema::Gpu& catalog_gpu(const std::string& name) {
  return *shipped_catalog().gpus().find(name)->value;
}

// allocatable_gpu_bytes in GiB.
double allocatable_gib(const schema::InstanceType& instance, const std::string& gpu) {
  return allocatable_gpu_bytes(instance, catalog_gpu(gpu)) / kBytesPerGibibyte;
}

TEST_CASE("a GPU with a CUDA total gets it, one without keeps its label") {
  schema::InstanceType bare;  // no provider figure
  CHECK(labelled_gpu_bytes(bare, catalog_gpu("H100-SXM5-80GB")) == 80 * kBytesPerGibibyte);
  CHECK(allocatable_gib(bare, "H100-SXM5-80GB") == Approx(79.11));
  CHECK(allocatable_gib(bare, "H200-SXM-141GB") == Approx(139.8));
  CHECK(allocatable_gib(bare, "GH200-96GB") == 96);
}

TEST_CASE("a provider's figure stands for the label, still capped by the CUDA total") {
  // EC2 reports p5's H100 as 80 GiB and g4dn's T4 as 16 GiB: CUDA allocates 79.11 and 14.75.
  CHECK(allocatable_gib(shipped_instance("aws.p5.48xlarge"), "H100-SXM5-80GB") == Approx(79.11));
  CHECK(allocatable_gib(shipped_instance("aws.g4dn.xlarge"), "T4-PCIE-16GB") == Approx(14.75));
  // A provider's figure below the CUDA total is kept.
  schema::InstanceType small;
  small.set_gpu_memory_gib(70);
  CHECK(allocatable_gib(small, "H100-SXM5-80GB") == 70);
}

TEST_CASE("a need between the CUDA total and the label no longer fits an H100") {
  const schema::Gpu& h100 = catalog_gpu("H100-SXM5-80GB");
  MemoryEstimate need;
  need.weights_bytes = 79.5 * kBytesPerGibibyte;
  need.capacity_bytes = h100.memory_gib() * kBytesPerGibibyte;
  CHECK(need.fits());
  need.capacity_bytes = allocatable_gpu_bytes(schema::InstanceType(), h100);
  CHECK_FALSE(need.fits());
  CHECK(need.missing_bytes() / kBytesPerGibibyte == Approx(79.5 - 79.11));
}

}  // namespace
}  // namespace clustersim
