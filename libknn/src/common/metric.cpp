#include "knn/metric.hpp"

#include <cmath>

#include "knn/error.hpp"

namespace knn {

Metric parse_metric(const std::string& text) {
  if (text == "l2" || text == "euclidean") return Metric::l2;
  if (text == "l1" || text == "manhattan") return Metric::l1;
  if (text == "cosine") return Metric::cosine;
  throw Error::option("metric", "unknown metric " + quote(text) + " (expected l2, l1 or cosine)");
}

const char* to_string(Metric m) {
  switch (m) {
    case Metric::l2: return "l2";
    case Metric::l1: return "l1";
    case Metric::cosine: return "cosine";
  }
  return "?";
}

// This translation unit is compiled with -ffp-contract=off (see libknn/CMakeLists.txt): a fused
// multiply-add would round differently from the GPU's separately rounded products and sums.
double distance(const float* a, const float* b, std::size_t dims, Metric metric) {
  switch (metric) {
    case Metric::l2: {
      double s = 0.0;
      for (std::size_t i = 0; i < dims; ++i) {
        const double t = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        s += t * t;
      }
      return std::sqrt(s);
    }
    case Metric::l1: {
      double s = 0.0;
      for (std::size_t i = 0; i < dims; ++i)
        s += std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
      return s;
    }
    case Metric::cosine: {
      double ab = 0.0, aa = 0.0, bb = 0.0;
      for (std::size_t i = 0; i < dims; ++i) {
        const double x = a[i], y = b[i];
        ab += x * y;
        aa += x * x;
        bb += y * y;
      }
      if (aa == 0.0 || bb == 0.0) return 1.0;
      return 1.0 - ab / std::sqrt(aa * bb);
    }
  }
  return 0.0;
}

}  // namespace knn
