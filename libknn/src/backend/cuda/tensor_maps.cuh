#pragma once
// Tensor maps: how Hopper's copy engine (tma_copies.cuh) finds a tile of an array in global
// memory. Encoded on the host through the driver's entry point, which the runtime looks up, so
// the backend links no driver library; passed to kernels as __grid_constant__ parameters.
#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace knn::cuda {

/// `count` rows of `cols` halves from `rows` on, `pitch` halves from one row to the next (a
/// multiple of 8), read in boxes of 64 halves by `box_rows` rows: a box lands in shared memory as
/// box_rows rows of 128 bytes with the 128-byte swizzle that wgmma reads (wgmma_operand), zeros
/// past the last row and past `cols`.
CUtensorMap half_rows_map(const __half* rows, int cols, std::int64_t count, std::int64_t pitch, int box_rows);

/// `count` floats from `values` on, read in boxes of `box` floats (zeros past the last).
CUtensorMap floats_map(const float* values, std::int64_t count, int box);

}  // namespace knn::cuda
