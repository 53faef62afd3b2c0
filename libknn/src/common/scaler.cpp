#include "knn/scaler.hpp"

#include <algorithm>
#include <cmath>

#include "knn/error.hpp"

namespace knn {

Scaling parse_scaling(const std::string& text) {
  if (text == "minmax") return Scaling::minmax;
  if (text == "standard") return Scaling::standard;
  if (text == "none") return Scaling::none;
  throw Error::option("scale", "unknown scaling " + quote(text) + " (expected minmax, standard or none)");
}

const char* to_string(Scaling s) {
  switch (s) {
    case Scaling::minmax: return "minmax";
    case Scaling::standard: return "standard";
    case Scaling::none: return "none";
  }
  return "?";
}

void Scaler::fit(const Matrix& train) {
  const std::size_t d = train.cols, n = train.rows;
  offset_.assign(d, 0.0);
  scale_.assign(d, 1.0);
  if (kind_ == Scaling::none || n == 0) return;
  if (kind_ == Scaling::minmax) {
    std::vector<double> lo(train.row(0), train.row(0) + d), hi = lo;
    for (std::size_t i = 1; i < n; ++i) {
      const float* r = train.row(i);
      for (std::size_t j = 0; j < d; ++j) {
        lo[j] = std::min(lo[j], static_cast<double>(r[j]));
        hi[j] = std::max(hi[j], static_cast<double>(r[j]));
      }
    }
    for (std::size_t j = 0; j < d; ++j) {
      offset_[j] = lo[j];
      const double range = hi[j] - lo[j];
      scale_[j] = range > 0.0 ? range : 1.0;
    }
    return;
  }
  // Standard: two passes in double (mean, then centred squares) for accuracy.
  std::vector<double> sum(d, 0.0), sq(d, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) sum[j] += train(i, j);
  for (std::size_t j = 0; j < d; ++j) offset_[j] = sum[j] / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const double c = train(i, j) - offset_[j];
      sq[j] += c * c;
    }
  for (std::size_t j = 0; j < d; ++j) {
    const double sd = std::sqrt(sq[j] / static_cast<double>(n));
    scale_[j] = sd > 0.0 ? sd : 1.0;
  }
}

void Scaler::transform(Matrix& m) const {
  if (kind_ == Scaling::none) return;
  if (m.cols != offset_.size())
    throw Error("scaler fitted on " + std::to_string(offset_.size()) + " features, given " +
                std::to_string(m.cols));
  const std::size_t d = m.cols;
  std::ptrdiff_t bad_row = -1;
#pragma omp parallel for schedule(static) reduction(max : bad_row)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(m.rows); ++i) {
    float* r = m.row(static_cast<std::size_t>(i));
    bool finite = true;
    for (std::size_t j = 0; j < d; ++j) {
      r[j] = static_cast<float>((static_cast<double>(r[j]) - offset_[j]) / scale_[j]);
      finite = finite && std::isfinite(r[j]);
    }
    if (!finite) bad_row = std::max(bad_row, i);
  }
  // A query far outside a tiny training range can overflow float once scaled: never a silent inf.
  if (bad_row >= 0)
    throw Error("row " + std::to_string(bad_row + 1) + ": a value overflows float32 once scaled by the " +
                to_string(kind_) + " scaler fitted on the training rows");
}

}  // namespace knn
