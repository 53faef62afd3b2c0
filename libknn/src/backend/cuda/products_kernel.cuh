#pragma once
// The TF32 products kernel (products.cuh), a template over its tiling so that the benchmark
// (bench/gpu/bench_products.cu) can time other tilings beside the one the search takes.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/product_tiles.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

// A tiling: a block takes TileQ queries x TileT training rows, in warps of WarpQ x WarpT, through
// the terms 32 at a time in `Stages` shared-memory stages: Stages - 1 are copied (cp.async) while
// one is multiplied. A row takes 36 floats in a stage so that the 16-byte loads of a quarter warp
// fall in distinct banks. MinBlocks: the blocks an SM must hold (it caps the registers).
template <int TileQ_, int TileT_, int WarpQ_, int WarpT_, int Stages_, int MinBlocks_>
struct Tf32Tiling {
  static constexpr int TileQ = TileQ_, TileT = TileT_, WarpQ = WarpQ_, WarpT = WarpT_, Stages = Stages_, MinBlocks = MinBlocks_;
  static constexpr int Terms = 32, Pitch = Terms + 4;
  static constexpr int Threads = 32 * (TileQ / WarpQ) * (TileT / WarpT);
  static constexpr int StageFloats = (TileQ + TileT) * Pitch;
  static constexpr std::size_t SmemBytes = static_cast<std::size_t>(Stages) * StageFloats * sizeof(float);
};

// A thread's copies of one operand into a stage (RowCopies, product_tiles.cuh) where rows start
// 16-byte aligned: 32 terms a row, Pitch floats apart.
template <class T, int Rows>
using FloatRowCopies = RowCopies<float, T::Threads, T::Terms, T::Pitch, false, Rows>;

// The copies one float at a time, for rows that are not 16-byte aligned.
template <class T, int Rows>
__device__ __forceinline__ void copy_product_floats(float* dst, const float* src, std::int64_t ld, std::int64_t count, int kdim, int k0) {
  for (int i = threadIdx.x; i < Rows * T::Terms; i += T::Threads) {
    const int r = i / T::Terms, f = k0 + i % T::Terms;
    const bool in = r < count && f < kdim;
    cp_async4(dst + r * T::Pitch + (f - k0), in ? src + r * ld + f : src, in ? 4 : 0);
  }
}

// The k-slots of a k-step are mapped to terms so that a lane's operands come from 16-byte loads:
// in half h (terms 0-15 or 16-31 of the lane's share) and step s, k-slot tig is term
// 8 tig + 4 h + 2 s of the stage and k-slot tig + 4 the term after it. A and B take the same map,
// so the sum is over the same terms, in another order.
template <class T, bool Vec>
__global__ void __launch_bounds__(T::Threads, T::MinBlocks) tf32_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
  constexpr int MT = T::WarpQ / 16, NT = T::WarpT / 8;
  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);
  const BlockTile tile = block_tile<T::TileQ, T::TileT>(a, tiles_q, tiles_t);
  const float* const q = a.q + tile.q0 * a.ldq;
  const float* const t = a.t + tile.t0 * a.ldt;
  const int steps = (a.kdim + T::Terms - 1) / T::Terms;
  const FloatRowCopies<T, T::TileQ> copy_q(q, a.ldq, tile.q_count);
  const FloatRowCopies<T, T::TileT> copy_t(t, a.ldt, tile.t_count);
  const auto load = [&](int step) {
    float* const stage = smem + (step % T::Stages) * T::StageFloats;
    if (Vec) {
      copy_q(stage, a.kdim, step * T::Terms, a.q);
      copy_t(stage + T::TileQ * T::Pitch, a.kdim, step * T::Terms, a.t);
    } else {
      copy_product_floats<T, T::TileQ>(stage, q, a.ldq, tile.q_count, a.kdim, step * T::Terms);
      copy_product_floats<T, T::TileT>(stage + T::TileQ * T::Pitch, t, a.ldt, tile.t_count, a.kdim, step * T::Terms);
    }
  };
  const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
  const int2 corner = warp_corner<T>();
  const int wq = corner.x, wt = corner.y;
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  staged_loop<T::Stages>(steps, load, [&](int step) {
    const float* const qs = smem + (step % T::Stages) * T::StageFloats + wq * T::Pitch + 8 * tig;
    const float* const ts = smem + (step % T::Stages) * T::StageFloats + (T::TileQ + wt) * T::Pitch + 8 * tig;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float4 qa[MT][2], tb[NT];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        qa[i][0] = *reinterpret_cast<const float4*>(qs + (i * 16 + gid) * T::Pitch + 4 * h);
        qa[i][1] = *reinterpret_cast<const float4*>(qs + (i * 16 + gid + 8) * T::Pitch + 4 * h);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) tb[j] = *reinterpret_cast<const float4*>(ts + (j * 8 + gid) * T::Pitch + 4 * h);
      // Step 0 over all pieces, then step 1: an accumulator's two steps are MT x NT mma apart,
      // not back to back, where the second would wait for the first's result.
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_tf32(acc[i][j], qa[i][0].x, qa[i][1].x, qa[i][0].y, qa[i][1].y, tb[j].x, tb[j].y);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_tf32(acc[i][j], qa[i][0].z, qa[i][1].z, qa[i][0].w, qa[i][1].w, tb[j].z, tb[j].w);
    }
  });
  store_products<MT, NT>(acc, a, tile.q0 + wq, tile.t0 + wt, gid, tig);
}

/// Launches the kernel of tiling T on a's shape, queued on st (a.rows, a.cols > 0).
template <class T>
void launch_tf32_products(const ProductArgs& a, cudaStream_t st) {
  const int2 tiles = product_tiles(a, T::TileQ, T::TileT);
  const bool vec = a.ldq % 4 == 0 && a.ldt % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.q) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(a.t) % 16 == 0;
  const auto kernel = vec ? tf32_products_kernel<T, true> : tf32_products_kernel<T, false>;
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::SmemBytes)));
  kernel<<<static_cast<unsigned>(tiles.x) * static_cast<unsigned>(tiles.y), T::Threads, T::SmemBytes, st>>>(a, tiles.x, tiles.y);
  KNN_LAUNCHED(tf32_products_kernel);
}

}  // namespace knn::cuda
