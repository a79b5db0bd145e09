// Creating or recovering a sweep's journal, and comparing the interrupted sweep's identity with
// the resumed one's.
#include "sim/sweep/sweep_resume.h"

#include <filesystem>

namespace clustersim {

std::unique_ptr<SweepJournal> open_sweep_journal(const std::string& out, bool resume,
                                                 const std::vector<ResultColumn>& columns,
                                                 const SweepJournal::RowVisitor& visit,
                                                 SweepSummary* summary, std::string* notice,
                                                 std::string* error) {
  const std::string path = journal_path(out);
  if (!resume) {
    if (std::filesystem::exists(path)) {
      // Starting over discarded the interrupted sweep's rows (hours of a large sweep), silently.
      *error = path + " holds an interrupted sweep: add --resume to continue it, or delete it to " +
               "start over";
      return nullptr;
    }
    return SweepJournal::create(out, *summary, error, columns);
  }
  SweepSummary before;
  std::string cut;
  std::unique_ptr<SweepJournal> journal =
      SweepJournal::recover(out, &before, visit, error, columns, &cut);
  if (!journal) return nullptr;
  if (const std::string changes = sweep_identity_changes(before, *summary); !changes.empty()) {
    *error = path + " is the journal of another sweep: since it was interrupted, " + changes +
             " changed (resume with the inputs it had, or delete it to start over)";
    return nullptr;
  }
  *summary = before;
  *notice = (cut.empty() ? "" : cut + "\n") + "resuming after " +
            std::to_string(summary->configurations) + " configurations";
  return journal;
}

}  // namespace clustersim
