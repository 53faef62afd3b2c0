#pragma once
// A search of device memory (DeviceSearchRequest): the checks of its pointers and query values,
// made before the search writes anything.
#include <cuda_runtime.h>

#include <cstddef>

#include "backend/cuda/staging.cuh"
#include "knn/matrix.hpp"

namespace knn::cuda {

struct GpuContext;

/// Throws knn::Error unless the queries and both lists are memory that `device` reads and writes
/// (its own device memory, or managed memory), and for the first query value that is not finite
/// (lowest row, then feature; named 1-based). Waits for `st`.
void check_device_request(GpuContext& ctx, int device, MatrixView queries, const DeviceLists& lists, cudaStream_t st);

}  // namespace knn::cuda
