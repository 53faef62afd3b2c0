#pragma once
// The FP16 products on Hopper's warpgroup instructions (wgmma.mma_async), for a device of compute
// capability 9.0 and a build that targets it by its own features (sm_90a, which defines
// __CUDA_ARCH_FEAT_SM90_ALL; KNN_WGMMA on the host says the build did). The operands, the copies
// into shared memory and the stores are fp16_products_kernel's; only the multiplication differs:
// a warpgroup (four warps) multiplies 64 query rows by the tile's training rows from shared memory
// in one instruction per 16 terms, where mma.sync multiplies 16 x 8 pieces from registers. Each
// product of halves is exact in float and the sums are float's, as in every FP16 product the
// search takes (docs/exactness.md, "FP16 operands").
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/fp16_products_kernel.cuh"
#include "backend/cuda/wgmma_ops.cuh"

namespace knn::cuda {

// A tiling: a block of TileQ / 64 warpgroups takes TileQ queries x TileT training rows, through
// the terms 64 at a time in `Stages` shared-memory stages laid out as fp16_products_kernel's: rows
// of 128 bytes whose 16-byte words are swizzled (word w of row r at w ^ (r % 8)), which is the
// layout wgmma reads as "128-byte swizzle" when a stage starts at a multiple of 1,024 bytes.
// Warpgroup g takes queries 64 g.. against every training row of the tile. MinBlocks: the blocks
// an SM must hold.
template <int TileQ_, int TileT_, int Stages_, int MinBlocks_>
struct WgmmaTiling {
  static constexpr int TileQ = TileQ_, TileT = TileT_, Stages = Stages_, MinBlocks = MinBlocks_;
  static constexpr int Terms = 64, Words = Terms / 8;
  static constexpr int Threads = 128 * (TileQ / 64);
  static constexpr int StageHalves = (TileQ + TileT) * Terms;
  // The ring, and room to start it at a multiple of 1,024 bytes.
  static constexpr std::size_t SmemBytes = static_cast<std::size_t>(Stages) * StageHalves * sizeof(__half) + 1024;
  static_assert(TileQ % 64 == 0 && (TileT == 128 || TileT == 256), "whole warpgroups, and an instruction's width of rows");
};

template <class T>
__global__ void __launch_bounds__(T::Threads, T::MinBlocks) wgmma_products_kernel(ProductArgs a, int tiles_q, int tiles_t) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ float4 smem4[];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem4));
  __half* const smem = reinterpret_cast<__half*>(reinterpret_cast<char*>(smem4) + ((1024 - base % 1024) % 1024));
  const BlockTile tile = block_tile<T::TileQ, T::TileT>(a, tiles_q, tiles_t);
  const HalfStageCopies<T> load(a, tile, smem);
  const int group = static_cast<int>(threadIdx.x) / 128;
  float acc[T::TileT / 2];
#pragma unroll
  for (int i = 0; i < T::TileT / 2; ++i) acc[i] = 0.0f;
  // Each step: the copies made visible to the asynchronous proxy that wgmma reads through
  // (staged_loop's fence), four instructions of 16 terms, and their end awaited before the next
  // step's barrier lets a stage be refilled.
  staged_loop<T::Stages, true>((a.kdim + T::Terms - 1) / T::Terms, load, [&](int step) {
    const __half* const stage = smem + (step % T::Stages) * T::StageHalves;
    const __half* const qs = stage + group * 64 * T::Terms;
    const __half* const ts = stage + T::TileQ * T::Terms;
    wgmma_hold(acc);
    wgmma_begin();
#pragma unroll
    for (int ks = 0; ks < T::Terms / 16; ++ks) WgmmaAcc<T::TileT>::mma(acc, wgmma_operand(qs + ks * 16), wgmma_operand(ts + ks * 16));
    wgmma_end();
    wgmma_hold(acc);
  });
  // Warp w of the group holds rows 16 (w % 4).. of its 64, as an m16n8 piece's accumulators for
  // every 8 training rows (store_products' layout).
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32 % 4;
  store_products<1, T::TileT / 8>(*reinterpret_cast<const float(*)[1][T::TileT / 8][4]>(acc), a, tile.q0 + group * 64 + warp * 16,
                                  tile.t0, lane / 4, lane % 4);
#else
  (void)a, (void)tiles_q, (void)tiles_t;
  __trap();  // launch_wgmma_products launches it only where this body was built
#endif
}

/// The kernel of tiling T, as launch_half_products launches it; only for a device of compute
/// capability 9.0 and a build with KNN_WGMMA (wgmma_products_fit).
template <class T>
void launch_wgmma_products(const ProductArgs& a, cudaStream_t st) {
  launch_half_products<T>(wgmma_products_kernel<T>, a, st);
}

}  // namespace knn::cuda
