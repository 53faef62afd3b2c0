#include "backend/cuda/host_staging.hpp"

#include <algorithm>
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

}  // namespace knn::cuda
