// A ranking's best entry and its runner-up, the best entry of another configuration: the pair a
// tie note weighs (accuracy_evidence.h tie_note; two billing modes of one configuration are not
// two choices). Kept while entries stream past in any order, in constant memory, so the runner-up
// is known however few rows a ranking keeps or prints (--limit). `sweep` keeps one per ranking
// (TopRows::leaders), `cost` one each for its cost and time rankings.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace clustersim {

// `Entry` is what is kept of the two (a ResultRow, a pointer to a command's row); it is copied
// when kept. Not thread-safe: one thread offers.
template <typename Entry>
class RankingLeaders {
 public:
  // A place in the ranking, smaller first; of equal keys the entry offered first ranks first.
  using Key = std::pair<double, double>;

  // Offers `entry` of configuration `configuration` at `key`. Requires: no NaN in `key`.
  void offer(const Key& key, int64_t configuration, const Entry& entry) {
    if (!best_ || key < best_->key) {
      // The old best leads every other configuration, unless it is the new best's.
      if (best_ && best_->configuration != configuration) runner_up_ = std::move(best_);
      best_ = Kept{key, configuration, entry};
    } else if (configuration != best_->configuration && (!runner_up_ || key < runner_up_->key)) {
      runner_up_ = Kept{key, configuration, entry};
    }
  }

  // The best entry; null before one is offered.
  const Entry* best() const { return best_ ? &best_->entry : nullptr; }
  // The best entry of a configuration other than best()'s; null when there is none.
  const Entry* runner_up() const { return runner_up_ ? &runner_up_->entry : nullptr; }

 private:
  struct Kept {
    Key key;
    int64_t configuration;
    Entry entry;
  };
  std::optional<Kept> best_, runner_up_;
};

}  // namespace clustersim
