#include "cuda/host_staging.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

namespace knn::cuda {

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t block = std::size_t{1} << 20;
  const auto blocks = static_cast<std::ptrdiff_t>((bytes + block - 1) / block);
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (blocks <= 1) {
    std::memcpy(d, s, bytes);
    return;
  }
  // A few threads saturate the host's memory; more only contend with the caller's own.
  const int threads = static_cast<int>(std::min<std::ptrdiff_t>({blocks, 8, omp_get_max_threads()}));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::ptrdiff_t b = 0; b < blocks; ++b) {
    const std::size_t begin = static_cast<std::size_t>(b) * block;
    std::memcpy(d + begin, s + begin, std::min(block, bytes - begin));
  }
}

RowNorms largest_row_norms(const float* x, std::size_t rows, std::size_t cols) {
  double l2 = 0.0, l1 = 0.0;
#pragma omp parallel for schedule(static) reduction(max : l2, l1)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(rows); ++i) {
    const float* r = x + static_cast<std::size_t>(i) * cols;
    double sq = 0.0, ab = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = r[j];
      sq += v * v;
      ab += v < 0 ? -v : v;
    }
    l2 = std::max(l2, sq);
    l1 = std::max(l1, ab);
  }
  // Rounded up past the double sums' error (cols terms, each step within 2^-53) and the root's.
  const double up = 1.0 + static_cast<double>(cols + 4) * 0x1p-52;
  return {std::sqrt(l2) * up, l1 * up};
}

}  // namespace knn::cuda
