// The products (products.cuh): a tiled tensor-core kernel and a float32 one.
#include "backend/cuda/products.cuh"

#include <algorithm>
#include <limits>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

// TF32: a block takes 128 queries x 128 training rows, four warps of 64 x 64 each, through the
// terms 32 at a time. Three stages of shared memory: two are copied (cp.async) while the third is
// multiplied. A row takes 36 floats in a stage so that the 16-byte loads of a quarter warp fall in
// distinct banks.
constexpr int kTileQ = 128, kTileT = 128, kTerms = 32, kStages = 3, kThreads = 128, kPitch = kTerms + 4;
constexpr int kStageFloats = (kTileQ + kTileT) * kPitch;
constexpr std::size_t kSmemBytes = static_cast<std::size_t>(kStages) * kStageFloats * sizeof(float);
// Blocks are ordered in groups of kGroup query tiles, each group through all training tiles, so
// that the blocks in flight share their operands in L2 instead of each reading them from memory.
constexpr int kGroup = 16;

// Which tiles block b takes: (query tile, training tile).
__device__ __forceinline__ int2 tile_of(int b, int tiles_q, int tiles_t) {
  const int per_group = kGroup * tiles_t;
  const int group = b / per_group, first = group * kGroup;
  const int in_group = b - group * per_group, width = min(kGroup, tiles_q - first);
  return make_int2(first + in_group % width, in_group / width);
}

// Queues the copy of terms [k0, k0 + 32) of `count` rows (row r at src + r * ld) into a stage's
// rows (kPitch floats apart); rows past `count` and terms past kdim are zeros. Vec: 16-byte
// copies (src and ld multiples of 4 floats), else one float each.
template <bool Vec, int Rows>
__device__ __forceinline__ void copy_rows(float* dst, const float* src, std::int64_t ld, std::int64_t count, int kdim, int k0) {
  if (Vec) {
    for (int i = threadIdx.x; i < Rows * (kTerms / 4); i += kThreads) {
      const int r = i / (kTerms / 4), f = k0 + (i % (kTerms / 4)) * 4;
      const int bytes = r < count ? max(0, min(4, kdim - f)) * 4 : 0;
      cp_async16(dst + r * kPitch + (f - k0), bytes ? src + r * ld + f : src, bytes);
    }
  } else {
    for (int i = threadIdx.x; i < Rows * kTerms; i += kThreads) {
      const int r = i / kTerms, f = k0 + i % kTerms;
      const bool in = r < count && f < kdim;
      cp_async4(dst + r * kPitch + (f - k0), in ? src + r * ld + f : src, in ? 4 : 0);
    }
  }
}

// The k-slots of a k-step are mapped to terms so that a lane's operands come from 16-byte loads:
// in half h (terms 0-15 or 16-31 of the lane's share) and step s, k-slot tig is term
// 8 tig + 4 h + 2 s of the stage and k-slot tig + 4 the term after it. A and B take the same map,
// so the sum is over the same terms, in another order.
template <bool Vec>
__global__ void __launch_bounds__(kThreads, 2) tf32_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);
  const int2 tile = tile_of(static_cast<int>(blockIdx.x), tiles_q, tiles_t);
  const std::int64_t q0 = static_cast<std::int64_t>(tile.x) * kTileQ, t0 = static_cast<std::int64_t>(tile.y) * kTileT;
  const float* const q = a.q + q0 * a.ldq;
  const float* const t = a.t + t0 * a.ldt;
  const std::int64_t q_count = a.rows - q0 < kTileQ ? a.rows - q0 : kTileQ, t_count = a.cols - t0 < kTileT ? a.cols - t0 : kTileT;
  const int steps = (a.kdim + kTerms - 1) / kTerms;
  const auto load = [&](int step) {
    float* const stage = smem + (step % kStages) * kStageFloats;
    copy_rows<Vec, kTileQ>(stage, q, a.ldq, q_count, a.kdim, step * kTerms);
    copy_rows<Vec, kTileT>(stage + kTileQ * kPitch, t, a.ldt, t_count, a.kdim, step * kTerms);
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load(s);
    cp_async_commit();
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
  const int wq = (warp / 2) * 64, wt = (warp % 2) * 64;
  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  for (int step = 0; step < steps; ++step) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // the stage is in, and every warp is done with the one refilled next
    if (step + kStages - 1 < steps) load(step + kStages - 1);
    cp_async_commit();
    const float* const qs = smem + (step % kStages) * kStageFloats + wq * kPitch + 8 * tig;
    const float* const ts = smem + (step % kStages) * kStageFloats + (kTileQ + wt) * kPitch + 8 * tig;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float4 qa[4][2], tb[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        qa[i][0] = *reinterpret_cast<const float4*>(qs + (i * 16 + gid) * kPitch + 4 * h);
        qa[i][1] = *reinterpret_cast<const float4*>(qs + (i * 16 + gid + 8) * kPitch + 4 * h);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) tb[j] = *reinterpret_cast<const float4*>(ts + (j * 8 + gid) * kPitch + 4 * h);
      // Step 0 over all 32 pieces, then step 1: an accumulator's two steps are 32 mma apart, not
      // back to back, where the second would wait for the first's result.
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma_tf32(acc[i][j], qa[i][0].x, qa[i][1].x, qa[i][0].y, qa[i][1].y, tb[j].x, tb[j].y);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma_tf32(acc[i][j], qa[i][0].z, qa[i][1].z, qa[i][0].w, qa[i][1].w, tb[j].z, tb[j].w);
    }
  }
  cp_async_wait<0>();

  // Each lane holds, per 16 x 8 piece, two adjacent values of rows gid and gid + 8.
  const bool pairs = a.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(a.c) % 8 == 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t r = q0 + wq + i * 16 + gid + 8 * h, col = t0 + wt + j * 8 + 2 * tig;
        if (r >= a.rows || col >= a.cols) continue;
        float* const out = a.c + r * a.ldc + col;
        if (pairs && col + 1 < a.cols) {
          *reinterpret_cast<float2*>(out) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          out[0] = acc[i][j][2 * h];
          if (col + 1 < a.cols) out[1] = acc[i][j][2 * h + 1];
        }
      }
}

// float32: 128 x 128 a block of 256 threads, 8 x 8 a thread (rows 4 ty + i and 64 + 4 ty + i, the
// same for columns with tx), 8 terms a step. Both operands are kept term-major in shared memory,
// so that a thread's four values of a term are one 16-byte load; rows padded to 132 floats so that
// the transposing stores of a warp fall in distinct banks.
constexpr int kSimtTile = 128, kSimtTerms = 8, kSimtPitch = kSimtTile + 4;

__global__ void __launch_bounds__(256) fp32_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
  __shared__ __align__(16) float qs[kSimtTerms][kSimtPitch];
  __shared__ __align__(16) float ts[kSimtTerms][kSimtPitch];
  const int2 tile = tile_of(static_cast<int>(blockIdx.x), tiles_q, tiles_t);
  const std::int64_t q0 = static_cast<std::int64_t>(tile.x) * kSimtTile, t0 = static_cast<std::int64_t>(tile.y) * kSimtTile;
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

void products(ProductKind kind, const ProductArgs& a, cudaStream_t st) {
  if (a.rows <= 0 || a.cols <= 0) return;
  const int tile_q = kind == ProductKind::fp32 ? kSimtTile : kTileQ, tile_t = kind == ProductKind::fp32 ? kSimtTile : kTileT;
  const std::int64_t tiles_q = (a.rows + tile_q - 1) / tile_q, tiles_t = (a.cols + tile_t - 1) / tile_t;
  // The search's tiles keep far below this (plan_search).
  if (tiles_q * tiles_t > std::numeric_limits<int>::max()) throw Error("products: too many tiles in one product");
  if (kind == ProductKind::fp32) {
    fp32_products_kernel<<<static_cast<unsigned>(tiles_q * tiles_t), 256, 0, st>>>(a, static_cast<int>(tiles_q), static_cast<int>(tiles_t));
    KNN_LAUNCHED(fp32_products_kernel);
    return;
  }
  const bool vec = a.ldq % 4 == 0 && a.ldt % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.q) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(a.t) % 16 == 0;
  const auto kernel = vec ? tf32_products_kernel<true> : tf32_products_kernel<false>;
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes)));
  kernel<<<static_cast<unsigned>(tiles_q * tiles_t), kThreads, kSmemBytes, st>>>(a, static_cast<int>(tiles_q), static_cast<int>(tiles_t));
  KNN_LAUNCHED(tf32_products_kernel);
}

}  // namespace knn::cuda
