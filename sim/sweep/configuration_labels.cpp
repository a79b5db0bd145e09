// A configuration in words: its layout, and its other choices where they are not at their
// default or vary.
#include "sim/sweep/configuration_labels.h"

#include <functional>
#include <set>

#include "sim/util/number_format.h"

namespace clustersim {
namespace {

std::string number_words(const ResultRow& r, const char* key) {
  return format_number(row_number(r, result_column(key)));
}

int whole(const ResultRow& r, const char* key) {
  return static_cast<int>(row_number(r, result_column(key)));
}

const std::string& text_of(const ResultRow& r, const char* key) {
  return row_text(r, result_column(key));
}

// "aws.p5.48xlarge x 2": the first pool of a mix's instance column ("A x 2 + B x 4").
std::string first_pool(const ResultRow& r) {
  const std::string& pools = text_of(r, "instance");
  return pools.substr(0, pools.find(" + "));
}

// One choice beyond a row's layout: the columns that set it (their indices, looked up once), its
// words ("": the row has none of it) and the words of its default.
struct Choice {
  std::vector<int> columns;
  std::function<std::string(const ResultRow&)> words;
  std::string default_words;
};

// In label order.
const std::vector<Choice>& choices() {
  static const std::vector<Choice> all = {
      {{result_column("pools_as")},
       [](const ResultRow& r) {
         const std::string& placement = text_of(r, "pools_as");
         if (placement == "PIPELINE_ACROSS_POOLS") {
           return "pools as pipeline stages (first on " + first_pool(r) + ")";
         }
         return placement.empty() ? std::string() : "pools as data-parallel replicas";
       },
       "pools as data-parallel replicas"},
      {{result_column("distributed_optimizer"), result_column("zero_stage")},
       [](const ResultRow& r) {
         return row_number(r, result_column("distributed_optimizer")) == 1
                    ? std::string("dist opt")
                    : "ZeRO " + number_words(r, "zero_stage");
       },
       "ZeRO 0"},
      {{result_column("recompute")},
       [](const ResultRow& r) { return text_of(r, "recompute"); },
       "RECOMPUTE_NONE"},
      {{result_column("schedule")},
       [](const ResultRow& r) { return text_of(r, "schedule"); },
       "ONE_F_ONE_B"},
      {{result_column("sequence_parallel")},
       [](const ResultRow& r) {
         return row_number(r, result_column("sequence_parallel")) == 1 ? "SP" : "no SP";
       },
       "no SP"},
      {{result_column("storage_tier"), result_column("storage_capacity_gib")},
       [](const ResultRow& r) {
         const std::string& tier = text_of(r, "storage_tier");
         return tier.empty() ? "" : tier + " " + number_words(r, "storage_capacity_gib") + " GiB";
       },
       ""},
      {{result_column("dataloader_workers_per_gpu")},
       [](const ResultRow& r) {
         return text_of(r, "storage_tier").empty()
                    ? ""
                    : number_words(r, "dataloader_workers_per_gpu") + " workers/GPU";
       },
       ""},
      {{result_column("checkpoint_storage")},
       [](const ResultRow& r) {
         const std::string& volume = text_of(r, "checkpoint_storage");
         return volume.empty() ? "" : "checkpoints on " + volume;
       },
       ""},
  };
  return all;
}

void append(std::string* words, const std::string& more) {
  if (more.empty()) return;
  *words += (words->empty() ? "" : ", ") + more;
}

// "TP 1 CP 2 PP 1 DP 64 shard 16 EP 8 mbs 1 v 2": CP, the hybrid-sharding group, EP and virtual
// stages only where they split anything.
std::string parallel_layout_words(const ResultRow& r) {
  const auto word = [&](const char* name, const char* key) {
    return " " + std::string(name) + " " + std::to_string(whole(r, key));
  };
  const auto above_one = [&](const char* name, const char* key) {
    return whole(r, key) > 1 ? word(name, key) : "";
  };
  const bool hybrid = whole(r, "data_parallel_shard") < whole(r, "data_parallel");
  return "TP " + std::to_string(whole(r, "tensor_parallel")) +
         above_one("CP", "context_parallel") + word("PP", "pipeline_parallel") +
         word("DP", "data_parallel") + (hybrid ? word("shard", "data_parallel_shard") : "") +
         above_one("EP", "expert_parallel") + word("mbs", "micro_batch_size") +
         above_one("v", "virtual_stages");
}

}  // namespace

void ChoiceSpread::note(const ResultRow& row) {
  if (first_.empty()) {
    first_ = row;
    varies_.assign(choices().size(), false);
    return;
  }
  for (size_t i = 0; i < choices().size(); ++i) {
    if (varies_[i]) continue;
    for (const int c : choices()[i].columns) varies_[i] = varies_[i] || row[c] != first_[c];
  }
}

ChoiceSpread choice_spread(const std::vector<const ResultRow*>& rows) {
  ChoiceSpread spread;
  for (const ResultRow* row : rows) spread.note(*row);
  return spread;
}

std::string describe_layout(const ResultRow& r) {
  const std::string& instance = text_of(r, "instance");
  const std::string cluster =
      whole(r, "pools") > 1 ? instance : instance + " x " + number_words(r, "nodes");
  return cluster + ", " + parallel_layout_words(r);
}

std::string describe_configuration(const ResultRow& r, const ChoiceSpread& spread) {
  std::string words = describe_layout(r);
  for (size_t i = 0; i < choices().size(); ++i) {
    const Choice& choice = choices()[i];
    const std::string said = choice.words(r);
    if (spread.varies(i) || said != choice.default_words) append(&words, said);
  }
  append(&words, text_of(r, "billing"));
  return words;
}

ConfigurationLabels configuration_labels(const std::vector<ResultRow>& rows) {
  ConfigurationLabels out;
  for (const ResultRow& r : rows) out.labels.push_back(describe_layout(r));
  for (const Choice& choice : choices()) {
    std::set<std::string> seen;
    for (const ResultRow& r : rows) seen.insert(choice.words(r));
    if (rows.size() > 1 && seen.size() == 1) {
      append(&out.shared, *seen.begin());
      continue;
    }
    for (size_t i = 0; i < rows.size(); ++i) append(&out.labels[i], choice.words(rows[i]));
  }
  return out;
}

}  // namespace clustersim
