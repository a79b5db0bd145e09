// A chart's configuration labels: each row's layout, and its other choices where they vary.
#include "sim/sweep/configuration_labels.h"

#include <functional>
#include <set>

#include "sim/sweep/pool_placement.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

std::string number_words(const ResultRow& r, const char* key) {
  return format_number(row_number(r, result_column(key)));
}

const std::string& text_of(const ResultRow& r, const char* key) {
  return row_text(r, result_column(key));
}

using Choice = std::function<std::string(const ResultRow&)>;

// A row's choices beyond its layout, in words, in label order ("": the row has none of it).
const std::vector<Choice>& choices() {
  static const std::vector<Choice> all = {
      [](const ResultRow& r) {
        const std::string role = pool_role(text_of(r, "pool_placement"));
        return role.empty() ? "" : "pools as " + role;
      },
      [](const ResultRow& r) {
        return row_number(r, result_column("distributed_optimizer")) == 1
                   ? std::string("dist opt")
                   : "ZeRO " + number_words(r, "zero_stage");
      },
      [](const ResultRow& r) { return text_of(r, "recompute"); },
      [](const ResultRow& r) { return text_of(r, "schedule"); },
      [](const ResultRow& r) {
        return row_number(r, result_column("sequence_parallel")) == 1 ? "SP" : "no SP";
      },
      [](const ResultRow& r) {
        const std::string& tier = text_of(r, "storage_tier");
        return tier.empty() ? "" : tier + " " + number_words(r, "storage_capacity_gib") + " GiB";
      },
      [](const ResultRow& r) {
        return text_of(r, "storage_tier").empty()
                   ? ""
                   : number_words(r, "dataloader_workers_per_gpu") + " workers/GPU";
      },
      [](const ResultRow& r) {
        const std::string& volume = text_of(r, "checkpoint_storage");
        return volume.empty() ? "" : "checkpoints on " + volume;
      },
  };
  return all;
}

void append(std::string* words, const std::string& more) {
  if (more.empty()) return;
  *words += (words->empty() ? "" : ", ") + more;
}

}  // namespace

ConfigurationLabels configuration_labels(const std::vector<ResultRow>& rows) {
  ConfigurationLabels out;
  for (const ResultRow& r : rows) {
    const std::string stages = number_words(r, "virtual_stages");
    out.labels.push_back(describe_layout(r) + (stages == "1" ? "" : " v " + stages));
  }
  for (const Choice& words : choices()) {
    std::set<std::string> seen;
    for (const ResultRow& r : rows) seen.insert(words(r));
    if (rows.size() > 1 && seen.size() == 1) {
      append(&out.shared, *seen.begin());
      continue;
    }
    for (size_t i = 0; i < rows.size(); ++i) append(&out.labels[i], words(rows[i]));
  }
  return out;
}

}  // namespace clustersim
