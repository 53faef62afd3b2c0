#pragma once
// Feature scaling fitted on training rows only and applied to queries with the same parameters.
// Values are computed in double and rounded to float once, so every backend sees the same inputs.
#include <string>
#include <vector>

#include "knn/error.hpp"
#include "knn/communicator.hpp"
#include "knn/matrix.hpp"

namespace knn {

enum class Scaling { none, minmax, standard };

Scaling parse_scaling(const std::string& text);  // "minmax" | "standard" | "none"
const char* to_string(Scaling s);

/// Thrown by Scaler::transform when a value overflows float32 once scaled (a query far outside a
/// tiny training range). Callers that know the file turn it into an error naming line and column.
class ScaleOverflow : public Error {
 public:
  ScaleOverflow(std::size_t r, std::size_t c, float v, const std::string& message)
      : Error(message), row(r), col(c), value(v) {}
  /// The message every backend gives: row and feature (1-based), the value and the scaler's kind.
  ScaleOverflow(std::size_t r, std::size_t c, float v, Scaling kind);
  std::size_t row, col;  // 0-based, in the matrix given to transform()
  float value;           // the value before scaling
  /// The same problem, named at FILE:LINE:COLUMN.
  Error at(const std::string& file, std::size_t line, std::size_t column) const;
};

class Scaler {
 public:
  /// `kept`: per column, left as it is (offset 0, scale 1) whatever the kind: one-hot columns.
  explicit Scaler(Scaling kind = Scaling::minmax, std::vector<bool> kept = {}) : kind_(kind), kept_(std::move(kept)) {}

  /// Min-max: offset = column minimum, scale = max - min. Standard: offset = mean, scale =
  /// population standard deviation. A column of zero range or variance gets scale 1.
  void fit(MatrixView train);
  /// The same over the rows of every rank (each passes its shard; a shard may be empty): minima
  /// and maxima are reduced, and standard scaling's sums run through the ranks in order, so the
  /// result is bit-identical to fit() on all rows in one process.
  void fit(MatrixView shard, const Communicator& comm);
  /// Min-max parameters from column minima and maxima (fit()'s, or a GPU's reduction):
  /// offset = lo, scale = hi - lo, or 1 where that is not above 0. With the training
  /// rows' minima and maxima this is the scaler fit() makes, provided a column whose minimum is
  /// zero passes the sign of its first zero in row order (fit() keeps the first of equal values).
  /// The scaler must be of kind minmax, and lo and hi of one size.
  void set_min_max(const std::vector<double>& lo, const std::vector<double>& hi);
  /// x -> (x - offset) / scale in double, rounded to float. Out-of-range values are not clipped.
  void transform(Matrix& m) const;
  /// The same into a new matrix, `m` unchanged: the scaled rows are written once, on every core,
  /// where copying them first and scaling in place would take two passes, the copy on one core.
  Matrix transformed(MatrixView m) const;
  /// fit(), then transformed(): the host's whole fit, which every backend's fit_scaler matches.
  Matrix fit_transform(MatrixView m) {
    fit(m);
    return transformed(m);
  }

  /// Rebuilds a fitted scaler (a model file's): per column, kept, offset and scale.
  static Scaler from_parts(Scaling kind, std::vector<bool> kept, std::vector<double> offset, std::vector<double> scale);

  Scaling kind() const { return kind_; }
  const std::vector<bool>& kept() const { return kept_; }
  const std::vector<double>& offset() const { return offset_; }
  const std::vector<double>& scale() const { return scale_; }

 private:
  void keep_columns();  // offset 0 and scale 1 for the kept columns
  Scaling kind_;
  std::vector<bool> kept_;
  std::vector<double> offset_;
  std::vector<double> scale_;
};

}  // namespace knn
