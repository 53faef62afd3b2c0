#include "knn/matrix.hpp"

#include <algorithm>

namespace knn {

Matrix take_rows(const Matrix& m, const std::vector<std::size_t>& rows) {
  Matrix out(rows.size(), m.cols);
  for (std::size_t i = 0; i < rows.size(); ++i) std::copy_n(m.row(rows[i]), m.cols, out.row(i));
  return out;
}

}  // namespace knn
