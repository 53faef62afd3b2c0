// The products (products.cuh): the TF32 and FP16 kernels (products_kernel.cuh,
// fp16_products_kernel.cuh, wgmma_products_kernel.cuh) at the search's tilings, and a float32 one.
#include "backend/cuda/products.cuh"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/fp16_products_kernel.cuh"
#include "backend/cuda/products_kernel.cuh"
#include "backend/cuda/wgmma_products_kernel.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

// The search's tiling: 128 x 128, four warps of 64 x 64, three stages, two blocks an SM.
using SearchTiling = Tf32Tiling<128, 128, 64, 64, 3, 2>;
// FP16: the same, 64 terms a stage (96 KiB of shared memory a block).
using SearchHalfTiling = Fp16Tiling<128, 128, 64, 64, 3, 2>;
static_assert(SearchHalfTiling::SmemBytes <= SearchTiling::SmemBytes, "tf32_products_fit covers the FP16 kernel");
// FP16 on Hopper's warpgroup instructions: 128 queries x 256 training rows a block of two
// warpgroups, four stages (193 KiB of shared memory, one block an SM). On an H100 it took 0.81x
// the time of SearchHalfTiling with 784 terms, 0.87x with 512 and 0.96x with 256, but 1.5x with
// 128, where the stores outweigh the multiplications (bench_products, bench/RESULTS.md): it
// takes long rows only.
using SearchWgmmaTiling = WgmmaTiling<128, 256, 4, 1>;
constexpr int kWgmmaMinTerms = 512;

// float32: 128 x 128 a block of 256 threads, 8 x 8 a thread (rows 4 ty + i and 64 + 4 ty + i, the
// same for columns with tx), 8 terms a step. Both operands are kept term-major in shared memory,
// so that a thread's four values of a term are one 16-byte load; rows padded to 132 floats so that
// the transposing stores of a warp fall in distinct banks.
constexpr int kSimtTile = 128, kSimtTerms = 8, kSimtPitch = kSimtTile + 4;

__global__ void __launch_bounds__(256) fp32_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
  __shared__ __align__(16) float qs[kSimtTerms][kSimtPitch];
  __shared__ __align__(16) float ts[kSimtTerms][kSimtPitch];
  const BlockTile tile = block_tile<kSimtTile, kSimtTile>(a, tiles_q, tiles_t);
  const std::int64_t q0 = tile.q0, t0 = tile.t0;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < a.kdim; k0 += kSimtTerms) {
    for (int i = threadIdx.x; i < kSimtTile * kSimtTerms; i += 256) {
      const int r = i / kSimtTerms, f = i % kSimtTerms, term = k0 + f;
      qs[f][r] = q0 + r < a.rows && term < a.kdim ? a.q[(q0 + r) * a.ldq + term] : 0.0f;
      ts[f][r] = t0 + r < a.cols && term < a.kdim ? a.t[(t0 + r) * a.ldt + term] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int f = 0; f < kSimtTerms; ++f) {
      float x[8], y[8];
      *reinterpret_cast<float4*>(x) = *reinterpret_cast<const float4*>(&qs[f][ty * 4]);
      *reinterpret_cast<float4*>(x + 4) = *reinterpret_cast<const float4*>(&qs[f][64 + ty * 4]);
      *reinterpret_cast<float4*>(y) = *reinterpret_cast<const float4*>(&ts[f][tx * 4]);
      *reinterpret_cast<float4*>(y + 4) = *reinterpret_cast<const float4*>(&ts[f][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(x[i], y[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::int64_t r = q0 + (i / 4) * 64 + ty * 4 + i % 4;
    if (r >= a.rows) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::int64_t col = t0 + (j / 4) * 64 + tx * 4 + j % 4;
      if (col < a.cols) a.c[r * a.ldc + col] = acc[i][j];
    }
  }
}

}  // namespace

bool tf32_products_fit(int device) {
  int major = 0, smem = 0;
  KNN_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KNN_CUDA(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return major >= 8 && static_cast<std::size_t>(smem) >= SearchTiling::SmemBytes;
}

void products(ProductKind kind, const ProductArgs& a, cudaStream_t st, bool wgmma) {
  if (a.rows <= 0 || a.cols <= 0) return;
  if (kind == ProductKind::tf32) return launch_tf32_products<SearchTiling>(a, st);
  if (kind == ProductKind::fp16) {
    if (wgmma && a.kdim >= kWgmmaMinTerms) return launch_wgmma_products<SearchWgmmaTiling>(a, st);
    return launch_fp16_products<SearchHalfTiling>(a, st);
  }
  const int2 tiles = product_tiles(a, kSimtTile, kSimtTile);
  fp32_products_kernel<<<static_cast<unsigned>(tiles.x) * static_cast<unsigned>(tiles.y), 256, 0, st>>>(a, tiles.x, tiles.y);
  KNN_LAUNCHED(fp32_products_kernel);
}

bool wgmma_products_built() {
#if defined(KNN_WGMMA)
  return true;
#else
  return false;
#endif
}

bool wgmma_products_fit(int device) {
  if (!wgmma_products_built()) return false;
  int major = 0, minor = 0, smem = 0;
  KNN_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KNN_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  KNN_CUDA(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return major == 9 && minor == 0 && static_cast<std::size_t>(smem) >= SearchWgmmaTiling::SmemBytes;
}

void wgmma_products(const ProductArgs& a, cudaStream_t st) {
  if (a.rows <= 0 || a.cols <= 0) return;
  launch_wgmma_products<SearchWgmmaTiling>(a, st);
}

}  // namespace knn::cuda
