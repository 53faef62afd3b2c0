#pragma once
// Host side of the query uploads: a copy into page-locked staging memory by several threads
// (one core's memcpy is slower than the copy engine reading page-locked memory).
#include <cstddef>

namespace knn::cuda {

void parallel_copy(void* dst, const void* src, std::size_t bytes);

/// The largest Euclidean (l2) and l1 norm of a row of the rows x cols matrix x, in double.
struct RowNorms {
  double l2 = 0.0, l1 = 0.0;
};
RowNorms largest_row_norms(const float* x, std::size_t rows, std::size_t cols);

}  // namespace knn::cuda
