#include "knn/metric.hpp"

#include "arith/distance.hpp"
#include "knn/error.hpp"

namespace knn {

Metric parse_metric(const std::string& text) {
  if (text == "l2" || text == "euclidean") return Metric::l2;
  if (text == "l1" || text == "manhattan") return Metric::l1;
  if (text == "cosine") return Metric::cosine;
  throw Error::parameter("metric", "unknown metric " + quote(text) + " (expected l2, l1 or cosine)");
}

const char* to_string(Metric m) {
  switch (m) {
    case Metric::l2: return "l2";
    case Metric::l1: return "l1";
    case Metric::cosine: return "cosine";
  }
  return "?";
}

double distance(const float* a, const float* b, std::size_t dims, Metric metric) {
  return arith::defined_distance(a, b, dims, metric);
}

}  // namespace knn
