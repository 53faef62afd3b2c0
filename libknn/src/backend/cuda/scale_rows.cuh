#pragma once
// Scaling rows in device memory with a fitted scaler's parameters: the host's arithmetic
// (arith::scaled_value), for training rows and for queries as they arrive.
#include <cuda_runtime.h>

#include <cstddef>

namespace knn::cuda {

/// Scaler::transform's arithmetic on rows x cols floats in device memory, in place, on `st`
/// (cuda_scale.cu): offset and scale are the scaler's, cols doubles each in device memory. bad
/// gets the smallest flat index (row-major, counted from row 0 of the whole matrix, of which x
/// starts at first_row) of a value not finite once scaled, through atomicMin; such values become
/// 0. Start bad at ~0ull.
void scale_rows(float* x, std::size_t rows, std::size_t cols, const double* offset, const double* scale, std::size_t first_row,
                unsigned long long* bad, cudaStream_t st);

}  // namespace knn::cuda
