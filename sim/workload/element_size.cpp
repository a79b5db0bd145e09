// Element sizes of the numeric formats.
#include "sim/workload/element_size.h"

namespace clustersim {

double bytes_per_element(schema::Precision precision) {
  switch (precision) {
    case schema::FP32:
    case schema::TF32:
      return 4;
    case schema::FP8:
    case schema::INT8:
      return 1;
    case schema::FP4:
    case schema::INT4:
      return 0.5;
    default:
      return 2;
  }
}

}  // namespace clustersim
