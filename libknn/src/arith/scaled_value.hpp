#pragma once
// A scaled feature value (docs/design.md#scaling): (x - offset) / scale in double, rounded to
// float once. The host's Scaler and the GPU's scaling kernels both compute it here.
#include "arith/host_device.hpp"

namespace knn::arith {

KNN_HD inline float scaled_value(float x, double offset, double scale) {
  return static_cast<float>(div(sub(static_cast<double>(x), offset), scale));
}

}  // namespace knn::arith
