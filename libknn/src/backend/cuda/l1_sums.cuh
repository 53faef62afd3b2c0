#pragma once
// l1's approximate values: the float sums of |q_i - t_i| of a tile of queries against all training
// rows (docs/exactness.md#l1 bounds them), in place of a product.
#include <cuda_runtime.h>

#include <cstdint>

namespace knn::cuda {

/// out[i * n + j] = the float l1 sum of query i and training row j, on st.
void l1_sums(const float* q, const float* t, std::int64_t qt, std::int64_t n, int d, float* out, cudaStream_t st);

}  // namespace knn::cuda
