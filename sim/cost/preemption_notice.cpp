// A preemption's checkpoint save against its provider's notice.
#include "sim/cost/preemption_notice.h"

#include "sim/util/number_format.h"

namespace clustersim {

NoticeSave notice_save(const CostModel& model, schema::Provider provider, double write_s) {
  NoticeSave save;
  save.enabled = model.settings->checkpoint().save_on_preemption_notice();
  save.write_s = write_s;
  const auto notice = model.spot_notice_s.find(provider);
  if (notice != model.spot_notice_s.end()) save.notice_s = notice->second;
  save.fits = save.enabled && save.notice_s && write_s <= *save.notice_s;
  return save;
}

std::string describe(const NoticeSave& save) {
  if (!save.enabled) return "";
  if (!save.notice_s) return "no: no notice known";
  const std::string write = format_fixed(save.write_s, 1) + " s";
  const std::string notice = format_number(*save.notice_s) + " s";
  return save.fits ? "yes: " + write + " in " + notice : "no: " + write + " > " + notice;
}

}  // namespace clustersim
