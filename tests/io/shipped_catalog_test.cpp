// Tests of the catalog that ships in models/ and topologies/: it loads cleanly, its entries agree
// with the reference data they were transcribed from, and every file survives a round trip.
#include "tests/testing/shipped_catalog.h"

#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "sim/io/catalog.h"
#include "sim/serve/serving_scenario.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/scenario.pb.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::shipped_catalog;
using testing::source_path;

TEST_CASE("the shipped catalog loads without errors or warnings and has every required entry") {
  const Catalog& c = shipped_catalog();
  for (const char* gpu :
       {"V100-SXM2-32GB",  "A100-SXM4-40GB",   "A100-SXM4-80GB",   "A800-SXM4-80GB",
        "H100-SXM5-80GB",  "H100-PCIE-80GB",   "H800-SXM5-80GB",   "H20-SXM-96GB",
        "H200-SXM-141GB",  "H100-SXM5-96GB",   "A10-PCIE-24GB",    "A10G-24GB",        "L4-PCIE-24GB",
        "L20-PCIE-48GB",   "L40S-PCIE-48GB",   "T4-PCIE-16GB",     "RTX4090-24GB",
        "B200-SXM-180GB",  "B300-SXM-268GB",   "GB200-186GB",      "GB300-268GB",
        "Ascend-910-32GB", "Ascend-910B-64GB", "Ascend-910C-128GB"}) {
    INFO(gpu);
    CHECK(c.gpus().find(gpu) != nullptr);
  }
  for (const char* family : {"aws.g4dn.",
                             "aws.g5.",
                             "aws.g6.",
                             "aws.g6e.",
                             "aws.p3.",
                             "aws.p4d.",
                             "aws.p4de.",
                             "aws.p5.",
                             "aws.p5e.",
                             "aws.p5en.",
                             "aws.p6-b200.",
                             "aws.p6-b300.",
                             "aws.p6e-gb200.",
                             "onprem.dgx-b",
                             "onprem.gb200-",
                             "onprem.gb300-",
                             "aliyun.ecs.gn6i-",
                             "aliyun.ecs.gn6e-",
                             "aliyun.ecs.gn6v-",
                             "aliyun.ecs.gn7-",
                             "aliyun.ecs.gn7i-",
                             "aliyun.ecs.gn7e-",
                             "aliyun.ecs.gn8is",
                             "aliyun.ecs.gn8v",
                             "aliyun.ecs.ebmgn",
                             "tencent.",
                             "huaweicloud.p2s.",
                             "huaweicloud.p2v.",
                             "huaweicloud.p3.",
                             "huaweicloud.pi2.",
                             "huaweicloud.modelarts."}) {
    INFO(family);
    const auto& all = c.instances().all();
    auto it = all.lower_bound(family);
    CHECK((it != all.end() && it->first.rfind(family, 0) == 0));
  }
  for (const char* model :
       {"gpt-1.7b",        "gpt-1t",       "gpt3-175b",     "llama2-7b",   "llama2-13b",
        "llama2-70b",      "llama3-8b",    "llama3-70b",    "llama3-405b", "bert-large",
        "resnet50",        "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b",
        "qwen3-235b-a22b", "gpt-oss-120b", "kimi-k2",       "qwen2.5-7b",  "qwen2.5-32b",
        "gpt-oss-20b"}) {
    INFO(model);
    CHECK(c.models().find(model) != nullptr);
  }
  for (const char* tier : {"aliyun.essd.pl0", "aliyun.essd.pl1", "aliyun.essd.pl2",
                           "aliyun.essd.pl3", "aliyun.essd.autopl", "aws.ebs.gp3"}) {
    INFO(tier);
    CHECK(c.storage().find(tier) != nullptr);
  }
}

TEST_CASE("aws.p5.48xlarge matches the reference data: 8 H100, 3200 Gbit/s EFA, 55.04 USD/h") {
  const s::InstanceType& p5 = *shipped_catalog().instances().find("aws.p5.48xlarge")->value;
  CHECK(p5.gpu() == "H100-SXM5-80GB");
  CHECK(p5.gpu_count() == 8);
  CHECK(p5.gpu_interconnect() == s::NVSWITCH);
  CHECK(p5.network().kind() == s::EFA);
  CHECK(p5.network().total_gbit_per_s() == 3200);
  bool found_on_demand = false;
  for (const s::Price& price : p5.price()) {
    if (price.billing() != s::ON_DEMAND) continue;
    found_on_demand = true;
    CHECK(price.currency() == s::USD);
    CHECK(price.per_hour() == Approx(55.04));
    CHECK(price.region() == "us-east-1");
  }
  CHECK(found_on_demand);
}

TEST_CASE("aws.p6-b200.48xlarge matches the EC2 API: 8 B200, 8 EFA of 400 Gbit/s, 113.93 USD/h") {
  const s::InstanceType& p6 = *shipped_catalog().instances().find("aws.p6-b200.48xlarge")->value;
  CHECK(p6.gpu() == "B200-SXM-180GB");
  CHECK(p6.gpu_count() == 8);
  CHECK(p6.gpu_memory_gib() == Approx(183359.0 / 1024));
  CHECK(p6.network().total_gbit_per_s() == 3200);
  CHECK(p6.network().nic_count() == 8);
  REQUIRE(p6.price_size() == 1);
  CHECK(p6.price(0).per_hour() == Approx(113.9328));
}

TEST_CASE("the NVL72 trays are 4 GPUs of one 72-GPU NVLink domain, a NIC per GPU") {
  for (const char* name : {"onprem.gb200-nvl72", "onprem.gb300-nvl72", "aws.p6e-gb200.36xlarge"}) {
    INFO(name);
    const s::InstanceType& tray = *shipped_catalog().instances().find(name)->value;
    CHECK(tray.gpu_count() == 4);
    CHECK(tray.nvlink_domain_gpus() == 72);
    CHECK(tray.network().nic_count() == 4);
  }
}

TEST_CASE("the Blackwell entries carry accelerators_2025.csv's dense peaks and are unverified") {
  const auto& gpus = shipped_catalog().gpus();
  struct Row {
    const char* name;
    double bf16, fp8, fp4;
  };
  for (const Row& r :
       {Row{"B200-SXM-180GB", 2250, 4500, 9000}, Row{"B300-SXM-268GB", 2250, 4500, 12600},
        Row{"GB200-186GB", 2500, 5000, 10000}, Row{"GB300-268GB", 2500, 5000, 15000}}) {
    INFO(r.name);
    const s::Gpu& g = *gpus.find(r.name)->value;
    CHECK(g.peak_tflops().bf16() == r.bf16);
    CHECK(g.peak_tflops().fp8() == r.fp8);
    CHECK(g.peak_tflops().fp4() == r.fp4);
    CHECK(g.memory_bandwidth_gb_per_s() == 8000);
    CHECK(g.nvlink().generation() == 5);
    CHECK(g.nvlink().per_direction_gb_per_s() == 900);
    CHECK(g.source().confidence() == s::UNVERIFIED);
  }
}

TEST_CASE("the H100 SXM entry carries the dense peaks of the reference data") {
  const s::Gpu& h100 = *shipped_catalog().gpus().find("H100-SXM5-80GB")->value;
  CHECK(h100.peak_tflops().bf16() == 989);
  CHECK(h100.peak_tflops().fp8() == 1979);
  CHECK(h100.memory_bandwidth_gb_per_s() == 3350);
  CHECK(h100.nvlink().per_direction_gb_per_s() == 450);
}

// Issue 14: the Grand Teton H100 of torchtitan's benchmarks, as Meta describes it
// (pytorch/torchtitan@d4c86e3 docs/performance.md): 96 GB HBM2e at 2.4 TB/s, 500 W; the H100
// SXM5's die otherwise, so its peaks, links and fitted attention entries.
TEST_CASE("the Grand Teton H100 carries Meta's memory, bandwidth and power limit and the SXM5's die") {
  const auto& gpus = shipped_catalog().gpus();
  const s::Gpu& gt = *gpus.find("H100-SXM5-96GB")->value;
  const s::Gpu& sxm = *gpus.find("H100-SXM5-80GB")->value;
  CHECK(gt.memory_gib() == 96);
  CHECK(gt.memory_type() == "HBM2e");
  CHECK(gt.memory_bandwidth_gb_per_s() == 2400);
  CHECK(gt.tdp_w() == 500);
  CHECK(gt.peak_tflops().bf16() == sxm.peak_tflops().bf16());
  CHECK(gt.peak_tflops().fp8() == sxm.peak_tflops().fp8());
  CHECK(gt.streaming_multiprocessors() == sxm.streaming_multiprocessors());
  CHECK(gt.nvlink().per_direction_gb_per_s() == sxm.nvlink().per_direction_gb_per_s());
  REQUIRE(gt.attention_efficiency_size() == sxm.attention_efficiency_size());
  CHECK(gt.attention_efficiency(0).max_fraction() == sxm.attention_efficiency(0).max_fraction());
  const s::InstanceType& host = *shipped_catalog().instances().find("onprem.grand-teton-h100")->value;
  CHECK(host.gpu() == "H100-SXM5-96GB");
  CHECK(host.gpu_count() == 8);
  CHECK(host.gpu_interconnect() == s::NVSWITCH);
  CHECK(host.network().total_gbit_per_s() == 3200);  // 400 Gb/s of RDMA per GPU
}

// Issue 17: Huawei Cloud's GPU flavors as the Huawei-built cloud's flavor table prints them, and
// the Ascend NPUs with their second-hand figures, unverified, and priors for efficiencies.
TEST_CASE("the catalog lists Huawei Cloud GPU flavors with their published figures") {
  const auto& instances = shipped_catalog().instances();
  const s::InstanceType& p3 = *instances.find("huaweicloud.p3.16xlarge.8")->value;
  CHECK(p3.provider() == s::HUAWEICLOUD);
  CHECK(p3.gpu() == "A100-PCIE-80GB");  // "80 GB HBM2 ... 1,935": the PCIe part
  CHECK(p3.gpu_count() == 8);
  CHECK(p3.vcpus() == 64);
  CHECK(p3.host_memory_gib() == 512);
  CHECK(p3.network().total_gbit_per_s() == 30);  // assured; maximum 36
  const s::InstanceType& p2v = *instances.find("huaweicloud.p2v.16xlarge.8")->value;
  CHECK(p2v.gpu() == "V100-SXM2-16GB");
  CHECK(p2v.gpu_interconnect() == s::NVLINK_HYBRID_CUBE_MESH);
  REQUIRE(p2v.price_size() == 1);
  CHECK(p2v.price(0).per_hour() == 131.5);
  CHECK(p2v.price(0).currency() == s::CNY);
  CHECK(p2v.price(0).source().confidence() == s::UNVERIFIED);
  CHECK(instances.find("huaweicloud.p2s.16xlarge.8")->value->gpu() == "V100-PCIE-32GB");
  CHECK(instances.find("huaweicloud.pi2.16xlarge.4")->value->gpu_count() == 8);
  for (const auto& [name, entry] : instances.all()) {
    if (entry.value->provider() != s::HUAWEICLOUD) continue;
    INFO(name);
    CHECK(entry.value->source().confidence() == s::UNVERIFIED);
  }
}

TEST_CASE("the Ascend NPUs carry their second-hand peaks, HCCS links and priors, unverified") {
  const auto& gpus = shipped_catalog().gpus();
  struct Row {
    const char* name;
    double fp16, memory_gib, hbm_gb_per_s, hccs_gb_per_s;
  };
  for (const Row& r :
       {Row{"Ascend-910-32GB", 256, 32, 1200, 90}, Row{"Ascend-910B-64GB", 280, 64, 1600, 196},
        Row{"Ascend-910C-128GB", 800, 128, 3200, 196}}) {
    INFO(r.name);
    const s::Gpu& g = *gpus.find(r.name)->value;
    CHECK(g.vendor() == "Huawei");
    CHECK(g.peak_tflops().fp16() == r.fp16);
    CHECK(g.memory_gib() == r.memory_gib);
    CHECK(g.memory_bandwidth_gb_per_s() == r.hbm_gb_per_s);
    CHECK_FALSE(g.has_nvlink());
    CHECK(g.hccs().per_direction_gb_per_s() == r.hccs_gb_per_s);
    CHECK(g.source().confidence() == s::UNVERIFIED);
    CHECK(efficiencies_are_priors(g));
  }
  CHECK_FALSE(gpus.find("Ascend-910B-64GB")->value->peak_tflops().has_bf16());  // FP16 only
  CHECK(gpus.find("Ascend-910C-128GB")->value->peak_tflops().bf16() == 780);
  CHECK_FALSE(efficiencies_are_priors(*gpus.find("A100-SXM4-80GB")->value));  // fitted
  const s::InstanceType& node =
      *shipped_catalog().instances().find("huaweicloud.modelarts.bm.npu.arm.8snt9b2.d")->value;
  CHECK(node.gpu() == "Ascend-910B-64GB");
  CHECK(node.gpu_count() == 8);
  CHECK(node.gpu_interconnect() == s::HCCS);
  CHECK(node.network().kind() == s::ROCE);
  CHECK(shipped_catalog().link_classes().find("hccs")->value->source().confidence() ==
        s::UNVERIFIED);
}

TEST_CASE("every Alibaba price is marked unverified (there is no authoritative price list)") {
  int prices = 0;
  for (const auto& [name, entry] : shipped_catalog().instances().all()) {
    if (entry.value->provider() != s::ALIYUN) continue;
    for (const s::Price& price : entry.value->price()) {
      INFO(name);
      CHECK(price.source().confidence() == s::UNVERIFIED);
      ++prices;
    }
  }
  CHECK(prices > 0);
}

// Parses `text` as M, prints it back, parses that and checks both messages are equal.
template <class M>
void check_round_trip(const std::string& path) {
  Diagnostics diagnostics;
  auto file = read_text_file<M>(path, &diagnostics);
  REQUIRE(file != nullptr);
  std::string printed;
  REQUIRE(google::protobuf::TextFormat::PrintToString(file->message, &printed));
  M reparsed;
  google::protobuf::TextFormat::ParseInfoTree tree;
  REQUIRE(parse_text(path, printed, &reparsed, &tree, &diagnostics));
  CHECK(google::protobuf::util::MessageDifferencer::Equals(file->message, reparsed));
}

TEST_CASE("every shipped file survives a parse-print-parse round trip") {
  int files = 0;
  for (const char* dir : {"models", "topologies", "scenarios"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source_path(dir))) {
      if (entry.path().extension() != ".textproto") continue;
      INFO(entry.path());
      if (entry.path().parent_path().filename() == "prices") {
        check_round_trip<s::PriceFile>(entry.path());  // scenarios/prices: --prices files
      } else if (std::string(dir) == "scenarios" && is_serving_scenario_file(entry.path())) {
        check_round_trip<s::ServingScenario>(entry.path());
      } else if (std::string(dir) == "scenarios") {
        check_round_trip<s::Scenario>(entry.path());
      } else {
        check_round_trip<s::CatalogFile>(entry.path());
      }
      ++files;
    }
  }
  CHECK(files >= 10);
}

TEST_CASE("the spot interruption notices are the providers' documented ones") {
  const Catalog& catalog = testing::shipped_catalog();
  // AWS: two minutes (EC2 User Guide); Alibaba Cloud: released 5 minutes after the interruption;
  // Huawei Cloud: CCE's node problem detector alerts 5 minutes before; Tencent Cloud: none given.
  CHECK(catalog.providers().find("aws")->value->spot_interruption_notice_s() == 120);
  CHECK(catalog.providers().find("aliyun")->value->spot_interruption_notice_s() == 300);
  CHECK(catalog.providers().find("huaweicloud")->value->spot_interruption_notice_s() == 300);
  CHECK(catalog.providers().find("tencent") == nullptr);
  for (const auto& [name, entry] : catalog.providers().all()) {
    CHECK_THAT(entry.value->source().citation(), Catch::Contains("https://"));
  }
}

}  // namespace
}  // namespace clustersim
