#pragma once
// The FP16 products kernel (products.cuh, ProductKind::fp16), a template over its tiling so that
// the benchmark (bench/gpu/bench_products.cu) can time other tilings beside the one the search
// takes. The operands are rows of halves scaled by powers of 2 (fp16_operands.cuh); the kernel
// writes the float accumulators as they are, and the bounds scale them back (Bounds::v_scale).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/product_tiles.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

// A tiling: a block takes TileQ queries x TileT training rows, in warps of WarpQ x WarpT, through
// the terms 64 at a time (128 bytes a row) in `Stages` shared-memory stages: Stages - 1 are
// copied (cp.async) while one is multiplied. A row's 16-byte words are swizzled (word w of row r
// at w ^ (r % 8)), so that the eight rows an ldmatrix reads at once fall in distinct banks, and so
// do the copies. MinBlocks: the blocks an SM must hold (it caps the registers).
template <int TileQ_, int TileT_, int WarpQ_, int WarpT_, int Stages_, int MinBlocks_>
struct Fp16Tiling {
  static constexpr int TileQ = TileQ_, TileT = TileT_, WarpQ = WarpQ_, WarpT = WarpT_, Stages = Stages_, MinBlocks = MinBlocks_;
  static constexpr int Terms = 64, Words = Terms / 8;
  static constexpr int Threads = 32 * (TileQ / WarpQ) * (TileT / WarpT);
  static constexpr int StageHalves = (TileQ + TileT) * Terms;
  static constexpr std::size_t SmemBytes = static_cast<std::size_t>(Stages) * StageHalves * sizeof(__half);
  static_assert(WarpQ % 16 == 0 && WarpT % 16 == 0, "a warp takes whole pairs of m16n8 pieces");
  static_assert(TileQ % 8 == 0, "the training rows' swizzle starts at a row that is 0 modulo 8");
};

// A thread's copies of one operand into a stage (RowCopies, product_tiles.cuh): 64 terms a row,
// words swizzled.
template <class T, int Rows>
using HalfRowCopies = RowCopies<__half, T::Threads, T::Terms, T::Terms, true, Rows>;

// A block's products on FP16 operands, the main loop every FP16 tensor-core kernel shares:
// `load(step)` queues the copies of stage `step` (terms step * 64 onwards of the block's query rows,
// then of its training rows) into its place in `smem` (staged_loop). Each warp's products, rows
// corner.x.. of the block's queries against its training rows corner.y.. (warp_corner), come back
// in acc[i][j]: the m16n8 piece at (corner.x + 16 i, corner.y + 8 j).
template <class T, class Load>
__device__ __forceinline__ void fp16_block_products(const __half* smem, int steps, const Load& load,
                                                    float (&acc)[T::WarpQ / 16][T::WarpT / 8][4]) {
  constexpr int MT = T::WarpQ / 16, NT = T::WarpT / 8;
  const int lane = threadIdx.x % 32;
  const int2 corner = warp_corner<T>();
  // The rows this lane addresses for ldmatrix: A's matrices are (rows 0-7, terms 0-7),
  // (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of a 16 x 16 piece, B's (0-7, 0-7), (0-7, 8-15),
  // (8-15, 0-7), (8-15, 8-15) of two 8-row pieces; every row offset but lane % 8 is a multiple
  // of 8, so a row's swizzle is lane % 8.
  const int a_row = corner.x + lane % 8 + (lane / 8 % 2) * 8, a_word = lane / 16;
  const int b_row = T::TileQ + corner.y + lane % 8 + (lane / 16) * 8, b_word = lane / 8 % 2;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  staged_loop<T::Stages>(steps, load, [&](int step) {
    const __half* const stage = smem + (step % T::Stages) * T::StageHalves;
#pragma unroll
    for (int ks = 0; ks < T::Terms / 16; ++ks) {
      const int aw = ((2 * ks + a_word) ^ (lane % 8)) * 8, bw = ((2 * ks + b_word) ^ (lane % 8)) * 8;
      unsigned af[MT][4], bf[NT / 2][4];
#pragma unroll
      for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], stage + (a_row + i * 16) * T::Terms + aw);
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) ldmatrix_x4(bf[j], stage + (b_row + j * 16) * T::Terms + bw);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
          mma_f16(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
    }
  });
}

// A block's copies into the ring of FP16 stages at `smem`: `load(step)` queues terms step * 64..
// of its query rows, then of its training rows, into the stage's place (staged_loop's `load`).
template <class T>
struct HalfStageCopies {
  HalfRowCopies<T, T::TileQ> q;
  HalfRowCopies<T, T::TileT> t;
  const ProductArgs& a;
  __half* smem;
  __device__ HalfStageCopies(const ProductArgs& args, const BlockTile& tile, __half* ring)
      : q(args.qh + tile.q0 * args.ldq, args.ldq, tile.q_count), t(args.th + tile.t0 * args.ldt, args.ldt, tile.t_count), a(args), smem(ring) {}
  __device__ __forceinline__ void operator()(int step) const {
    __half* const stage = smem + (step % T::Stages) * T::StageHalves;
    q(stage, a.kdim, step * T::Terms, a.qh);
    t(stage + T::TileQ * T::Terms, a.kdim, step * T::Terms, a.th);
  }
};

template <class T>
__global__ void __launch_bounds__(T::Threads, T::MinBlocks) fp16_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
  extern __shared__ float4 smem4[];
  __half* const smem = reinterpret_cast<__half*>(smem4);
  const BlockTile tile = block_tile<T::TileQ, T::TileT>(a, tiles_q, tiles_t);
  const HalfStageCopies<T> load(a, tile, smem);
  float acc[T::WarpQ / 16][T::WarpT / 8][4];
  fp16_block_products<T>(smem, (a.kdim + T::Terms - 1) / T::Terms, load, acc);
  const int2 corner = warp_corner<T>();
  const int lane = threadIdx.x % 32;
  store_products<T::WarpQ / 16, T::WarpT / 8>(acc, a, tile.q0 + corner.x, tile.t0 + corner.y, lane / 4, lane % 4);
}

/// Launches `kernel`, an FP16 products kernel of tiling T (TileQ, TileT, Threads, SmemBytes), on
/// a's shape, queued on st (a.rows, a.cols > 0). Throws knn::Error where the operands are not as
/// ProductArgs asks of FP16 ones.
template <class T>
void launch_half_products(void (*kernel)(ProductArgs, int, int), const ProductArgs& a, cudaStream_t st) {
  if (a.ldq % 8 || a.ldt % 8 || a.kdim % 8 || reinterpret_cast<std::uintptr_t>(a.qh) % 16 || reinterpret_cast<std::uintptr_t>(a.th) % 16)
    throw Error("FP16 products: operand rows must be 16-byte aligned multiples of 8 halves");
  const int2 tiles = product_tiles(a, T::TileQ, T::TileT);
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::SmemBytes)));
  kernel<<<static_cast<unsigned>(tiles.x) * static_cast<unsigned>(tiles.y), T::Threads, T::SmemBytes, st>>>(a, tiles.x, tiles.y);
  KNN_LAUNCHED(kernel);
}

/// The kernel of tiling T, as launch_half_products launches it.
template <class T>
void launch_fp16_products(const ProductArgs& a, cudaStream_t st) {
  launch_half_products<T>(fp16_products_kernel<T>, a, st);
}

}  // namespace knn::cuda
