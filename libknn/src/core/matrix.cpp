#include "knn/matrix.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace knn {

namespace {

// An empty vector with room for n values, asked to sit on huge pages when it is large. The advice
// must come before the first touch, so the room is reserved, advised, and only then written.
std::vector<float> reserved(std::size_t n) {
  std::vector<float> v;
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{1} << 21;
  const auto first = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(v.data() + n)) & ~(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return v;
}

}  // namespace

Matrix::Matrix(std::size_t r, std::size_t c) : rows(r), cols(c), values(reserved(r * c)) { values.resize(r * c); }

Matrix::Matrix(std::size_t r, std::size_t c, const float* data) : rows(r), cols(c), values(reserved(r * c)) {
  values.assign(data, data + r * c);
}

Matrix::Matrix(const MatrixView& view) : Matrix(view.rows, view.cols, view.data) {}

Matrix::Matrix(const Matrix& other) : rows(other.rows), cols(other.cols), values(reserved(other.values.size())) {
  values.assign(other.values.begin(), other.values.end());
}

Matrix& Matrix::operator=(const Matrix& other) {
  if (this != &other) *this = Matrix(other);
  return *this;
}

Matrix take_rows(MatrixView m, const std::vector<std::size_t>& rows) {
  Matrix out(rows.size(), m.cols);
  for (std::size_t i = 0; i < rows.size(); ++i) std::copy_n(m.row(rows[i]), m.cols, out.row(i));
  return out;
}

}  // namespace knn
