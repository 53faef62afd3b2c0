#pragma once
// Host side of the query uploads: a copy into page-locked staging memory by several threads
// (one core's memcpy is slower than the copy engine reading page-locked memory).
#include <cstddef>

namespace knn::cuda {

void parallel_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace knn::cuda
