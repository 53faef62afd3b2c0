#pragma once
// A dense row-major float matrix: the one container for features, so every backend takes plain
// pointers, sizes and strides.
#include <cstddef>
#include <vector>

namespace knn {

struct MatrixView;

/// Matrices of 2 MiB and more are allocated on transparent huge pages where the system grants them
/// on request (Linux's madvise): touching a new 188 MB matrix page by page in 4 KiB pages took half
/// a second on a virtual machine, where huge pages took 30 ms.
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;  // rows * cols, row-major

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c);  // zeros
  /// A copy of r x c row-major values at `data` (another program's buffer).
  Matrix(std::size_t r, std::size_t c, const float* data);
  /// A copy of the viewed rows.
  explicit Matrix(const MatrixView& view);
  Matrix(const Matrix& other);
  Matrix(Matrix&&) = default;
  Matrix& operator=(const Matrix& other);
  Matrix& operator=(Matrix&&) = default;
  float* row(std::size_t i) { return values.data() + i * cols; }
  const float* row(std::size_t i) const { return values.data() + i * cols; }
  float& operator()(std::size_t i, std::size_t j) { return values[i * cols + j]; }
  float operator()(std::size_t i, std::size_t j) const { return values[i * cols + j]; }
};

/// Rows another owner keeps: a Matrix's, or a caller's buffer of rows * cols row-major floats (a
/// numpy array), read in place for as long as the call that takes the view runs. Searches and
/// fits read their rows through one, so a caller's buffer reaches them without a copy.
struct MatrixView {
  std::size_t rows = 0;
  std::size_t cols = 0;
  const float* data = nullptr;

  MatrixView() = default;
  MatrixView(std::size_t r, std::size_t c, const float* d) : rows(r), cols(c), data(d) {}
  MatrixView(const Matrix& m) : rows(m.rows), cols(m.cols), data(m.values.data()) {}  // NOLINT: implicit by design
  const float* row(std::size_t i) const { return data + i * cols; }
  float operator()(std::size_t i, std::size_t j) const { return data[i * cols + j]; }
  std::size_t size() const { return rows * cols; }
};

/// The rows of m at the given indices, in that order.
Matrix take_rows(MatrixView m, const std::vector<std::size_t>& rows);

}  // namespace knn
