#include "backend/cuda/l1_sums.cuh"

#include "backend/cuda/cuda_check.cuh"

namespace knn::cuda {

namespace {

// float l1 sums of a tile of queries against all training rows: 16 x 16 pairs per block.
__global__ void l1_sums_kernel(const float* q, const float* t, std::int64_t qt, std::int64_t n, int d, float* out) {
  __shared__ float qs[16][33];
  __shared__ float ts[16][33];
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.y) * 16 + threadIdx.y;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * 16 + threadIdx.x;
  const std::int64_t jt = static_cast<std::int64_t>(blockIdx.x) * 16 + threadIdx.y;  // row this thread loads
  float s = 0.0f;
  for (int f0 = 0; f0 < d; f0 += 32) {
    for (int f = threadIdx.x; f < 32; f += 16) {
      const int ff = f0 + f;
      qs[threadIdx.y][f] = (i < qt && ff < d) ? q[i * d + ff] : 0.0f;
      ts[threadIdx.y][f] = (jt < n && ff < d) ? t[jt * d + ff] : 0.0f;
    }
    __syncthreads();
    for (int f = 0; f < 32; ++f) s += fabsf(qs[threadIdx.y][f] - ts[threadIdx.x][f]);
    __syncthreads();
  }
  if (i < qt && j < n) out[i * n + j] = s;
}

}  // namespace

void l1_sums(const float* q, const float* t, std::int64_t qt, std::int64_t n, int d, float* out, cudaStream_t st) {
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((qt + 15) / 16));
  l1_sums_kernel<<<grid, dim3(16, 16), 0, st>>>(q, t, qt, n, d, out);
  KNN_LAUNCHED(l1_sums);
}

}  // namespace knn::cuda
