// A storage volume in words.
#include "sim/io/volume_words.h"

#include <cmath>

#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {

std::string volume_words(const schema::StorageVolume& volume) {
  std::string words = volume.tier() + " " + format_number(volume.capacity_gib()) + " GiB";
  if (volume.has_provisioned_throughput_mb_per_s()) {
    // To a thousandth of a MiB/s: 1048.576 MB/s reads "1000", not a rounding's 999.9999999.
    const double mib_per_s = volume.provisioned_throughput_mb_per_s() / kMegabytesPerMebibyte;
    words += " " + format_number(std::round(mib_per_s * 1e3) / 1e3) + " MiB/s";
  }
  if (volume.has_provisioned_iops())
    words += " " + format_number(volume.provisioned_iops()) + " IOPS";
  return words;
}

}  // namespace clustersim
