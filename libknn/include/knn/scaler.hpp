#pragma once
// Feature scaling fitted on training rows only and applied to queries with the same parameters.
// Values are computed in double and rounded to float once, so every backend sees the same inputs.
#include <string>
#include <vector>

#include "knn/matrix.hpp"

namespace knn {

enum class Scaling { none, minmax, standard };

Scaling parse_scaling(const std::string& text);  // "minmax" | "standard" | "none"
const char* to_string(Scaling s);

class Scaler {
 public:
  explicit Scaler(Scaling kind = Scaling::minmax) : kind_(kind) {}

  /// Min-max: offset = column minimum, scale = max - min. Standard: offset = mean, scale =
  /// population standard deviation. A column of zero range or variance gets scale 1.
  void fit(const Matrix& train);
  /// x -> (x - offset) / scale in double, rounded to float. Out-of-range values are not clipped.
  void transform(Matrix& m) const;
  Matrix fit_transform(Matrix m) {
    fit(m);
    transform(m);
    return m;
  }

  Scaling kind() const { return kind_; }
  const std::vector<double>& offset() const { return offset_; }
  const std::vector<double>& scale() const { return scale_; }

 private:
  Scaling kind_;
  std::vector<double> offset_;
  std::vector<double> scale_;
};

}  // namespace knn
