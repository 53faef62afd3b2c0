#pragma once
// A neighbour's weight from its defined distance (docs/design.md#weights). Both backends call
// weight(); the rule for queries with neighbours at distance 0 (only those count) and the
// fallback to uniform weights sit beside their callers, which apply them to whole lists.
#include <cmath>

#include "arith/host_device.hpp"
#include "knn/weights.hpp"

namespace knn::arith {

/// Weights::Kind and its parameter as plain values, for device code.
struct WeightRule {
  Weights::Kind kind;
  double param;
};

/// uniform 1; distance 1/d; gaussian exp(-d^2 / (2 sigma^2)); inverse 1/(d + c); subtract
/// max(c - d, 0). exp() may differ by an ulp between the host's and the device's libraries: the
/// GPU's vote allows for that (docs/exactness.md#votes).
KNN_HD inline double weight(const WeightRule& r, double d) {
  switch (r.kind) {
    case Weights::Kind::uniform: return 1.0;
    case Weights::Kind::distance: return div(1.0, d);
    case Weights::Kind::gaussian: return exp(div(-mul(d, d), mul(mul(2.0, r.param), r.param)));
    case Weights::Kind::inverse: return div(1.0, add(d, r.param));
    case Weights::Kind::subtract: {
      const double v = sub(r.param, d);
      return v < 0.0 ? 0.0 : v;
    }
  }
  return 1.0;
}

}  // namespace knn::arith
