#pragma once
// Neighbour weights (docs/design.md#weights). A query whose weights sum to zero falls back to uniform weights.
#include <cstddef>
#include <string>

namespace knn {

struct Weights {
  enum class Kind { uniform, distance, gaussian, inverse, subtract };
  Kind kind = Kind::uniform;
  /// gaussian: sigma (default 1); inverse: c (default 0.1); subtract: c (default 1). Always > 0.
  double param = 0.0;

  /// "uniform", "distance", "gaussian[:SIGMA]", "inverse[:C]", "subtract[:C]". Throws knn::Error
  /// for an unknown name or a parameter that is not a finite number > 0.
  static Weights parse(const std::string& text);
  std::string to_string() const;

  /// Weight of one neighbour at distance d, ignoring the zero-distance rule of Kind::distance.
  double weight(double d) const;
};

/// Weights of a query's neighbours (distances ascending). Kind::distance: 1/d, or, when some
/// distances are 0, 1 for those and 0 for the rest (scikit-learn's rule). Any weights summing to
/// 0 are replaced by 1 each. `out` has k elements.
void neighbor_weights(const Weights& w, const double* distances, std::size_t k, double* out);

}  // namespace knn
