#pragma once
// What the tensor-core product kernels (products_kernel.cuh, fp16_products_kernel.cuh) share: the
// order in which blocks take their tiles, the ring of shared-memory stages their copies fill, each
// warp's corner of the tile, and the store of a warp's results.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "backend/cuda/products.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "backend/cuda/wgmma_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

// Blocks are ordered in groups of kProductGroup query tiles, each group through all training
// tiles, so that the blocks in flight share their operands in L2 instead of each reading them
// from memory.
constexpr int kProductGroup = 16;

// Which tiles block b takes: (query tile, training tile).
__device__ __forceinline__ int2 product_tile_of(int b, int tiles_q, int tiles_t) {
  const int per_group = kProductGroup * tiles_t;
  const int group = b / per_group, first = group * kProductGroup;
  const int in_group = b - group * per_group, width = min(kProductGroup, tiles_q - first);
  return make_int2(first + in_group % width, in_group / width);
}

// The tiles block blockIdx.x of a tile_q x tile_t tiling of a's shape takes: its first query row
// q0 and training row t0, and how many of each lie within a.rows and a.cols.
struct BlockTile {
  std::int64_t q0, t0, q_count, t_count;
};
template <int TileQ, int TileT>
__device__ __forceinline__ BlockTile block_tile(const ProductArgs& a, int tiles_q, int tiles_t) {
  const int2 tile = product_tile_of(static_cast<int>(blockIdx.x), tiles_q, tiles_t);
  const std::int64_t q0 = static_cast<std::int64_t>(tile.x) * TileQ, t0 = static_cast<std::int64_t>(tile.y) * TileT;
  return BlockTile{q0, t0, a.rows - q0 < TileQ ? a.rows - q0 : TileQ, a.cols - t0 < TileT ? a.cols - t0 : TileT};
}

/// The tiles of a's shape at tile_q x tile_t a block: (query tiles, training tiles), their product
/// the grid (one dimension, product_tile_of). The search's tiles keep far below int's range
/// (plan_search); beyond it, an error.
inline int2 product_tiles(const ProductArgs& a, int tile_q, int tile_t) {
  const std::int64_t tiles_q = (a.rows + tile_q - 1) / tile_q, tiles_t = (a.cols + tile_t - 1) / tile_t;
  if (tiles_q * tiles_t > std::numeric_limits<int>::max()) throw Error("products: too many tiles in one product");
  return make_int2(static_cast<int>(tiles_q), static_cast<int>(tiles_t));
}

// The ring of `Stages` shared-memory stages: `load(step)` queues the copies (cp.async) of stage
// `step` into its place (step % Stages), Stages - 1 ahead; each step waits for its stage, refills
// the place every warp is done with, and runs `compute(step)`. No copy is left in flight. With
// AsyncProxy, each thread's copies are made visible to the asynchronous proxy (wgmma's reads)
// before the barrier.
template <int Stages, bool AsyncProxy = false, class Load, class Compute>
__device__ __forceinline__ void staged_loop(int steps, const Load& load, const Compute& compute) {
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < steps) load(s);
    cp_async_commit();
  }
  for (int step = 0; step < steps; ++step) {
    cp_async_wait<Stages - 2>();
    if constexpr (AsyncProxy) async_proxy_fence();
    __syncthreads();  // the stage is in, and every warp is done with the one refilled next
    if (step + Stages - 1 < steps) load(step + Stages - 1);
    cp_async_commit();
    compute(step);
  }
  cp_async_wait<0>();
}

// This thread's share of the 16-byte copies (cp.async) that fill a stage with terms
// [k0, k0 + Terms) of `Rows` rows of one operand (row r at rows + r * ld, the first `count` of them
// real; rows and ld whole 16-byte words): word tid % Words of rows tid / Words + n * RowStep,
// n < PerThread, rows RowPitch elements apart in the stage, and with Swizzle word w of row r at
// w ^ (r % 8). Made once a block, so that a stage's copies only add the term offset and a row
// step: recomputed for every copy, their addresses, bound tests and swizzle took most of the main
// loops' instructions.
template <class Element, int Threads, int Terms, int RowPitch, bool Swizzle, int Rows>
struct RowCopies {
  static constexpr int PerWord = 16 / static_cast<int>(sizeof(Element)), Words = Terms / PerWord;
  static constexpr int RowStep = Threads / Words, PerThread = Rows / RowStep;
  static_assert(Terms % PerWord == 0 && Threads % Words == 0 && Rows % RowStep == 0 && PerThread <= 32,
                "every thread copies whole columns of words");
  static_assert(!Swizzle || RowStep % 8 == 0, "a thread's rows share their swizzle");
  const Element* src;  // this thread's first row, at its word
  std::int64_t step;   // RowStep rows of the operand, in elements
  unsigned real;       // bit n: the thread's row n is one of the `count`
  int at;              // the first row's word in a stage (elements)
  int term;            // the word's first term within the stage
  bool whole;          // every row of the tile is real: the same for the whole block

  __device__ __forceinline__ RowCopies(const Element* rows, std::int64_t ld, std::int64_t count) {
    const int r = static_cast<int>(threadIdx.x) / Words, w = static_cast<int>(threadIdx.x) % Words;
    src = rows + r * ld + w * PerWord;
    step = RowStep * ld;
    term = w * PerWord;
    at = r * RowPitch + (Swizzle ? w ^ (r % 8) : w) * PerWord;
    whole = count >= Rows;
    real = 0;
#pragma unroll
    for (int n = 0; n < PerThread; ++n) real |= static_cast<unsigned>(r + n * RowStep < count) << n;
  }

  // Queues the copies of terms [k0, k0 + Terms) into `stage`; rows past count and terms past kdim
  // are zeros (of a word that kdim cuts, the part past it). `any`: a readable address, the source
  // of the zeros.
  __device__ __forceinline__ void operator()(Element* stage, int kdim, int k0, const Element* any) const {
    const Element* p = src + k0;
    // Every copy whole (most stages): a test the whole block takes alike, so that no warp is left
    // divergent before its mma.sync.aligned steps.
    if (whole && k0 + Terms <= kdim) {
#pragma unroll
      for (int n = 0; n < PerThread; ++n, p += step) cp_async16(stage + at + n * RowStep * RowPitch, p, 16);
      return;
    }
    const int bytes = max(0, min(PerWord, kdim - k0 - term)) * static_cast<int>(sizeof(Element));
#pragma unroll
    for (int n = 0; n < PerThread; ++n, p += step) {
      const int b = real >> n & 1u ? bytes : 0;
      cp_async16(stage + at + n * RowStep * RowPitch, b ? p : any, b);
    }
  }
};

// Where this thread's warp sits in a tile of tiling T: its first query row and training row.
template <class T>
__device__ __forceinline__ int2 warp_corner() {
  const int warp = threadIdx.x / 32;
  return make_int2((warp / (T::TileT / T::WarpT)) * T::WarpQ, (warp % (T::TileT / T::WarpT)) * T::WarpT);
}

// A warp's MT x NT accumulators of m16n8 pieces into a.c, the warp's first query row r0 and
// training row c0: each lane holds, per piece, two adjacent values of rows gid and gid + 8.
// Values past a.rows or a.cols are not written.
template <int MT, int NT>
__device__ __forceinline__ void store_products(const float (&acc)[MT][NT][4], const ProductArgs& a, std::int64_t r0, std::int64_t c0,
                                               int gid, int tig) {
  const bool pairs = a.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(a.c) % 8 == 0;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t r = r0 + i * 16 + gid + 8 * h, col = c0 + j * 8 + 2 * tig;
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

}  // namespace knn::cuda
