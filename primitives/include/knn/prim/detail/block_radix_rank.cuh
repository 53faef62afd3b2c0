#pragma once
// Stable ranking of one tile by an 8-bit digit inside a block of 256 threads. Items are in
// warp-striped order: item j of lane l in warp w is tile position w*32*IPT + j*32 + l. Within a
// warp, __match_any_sync groups lanes with equal digits; per-warp counters in shared memory
// give the rank among earlier items of the warp; a per-digit scan over warps and digits then
// turns it into the item's position in the tile sorted by digit (ties in tile order).
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "config.hpp"

namespace knn::prim::detail {

constexpr int radix_bits = 8;
constexpr int radix_bins = 1 << radix_bits;

template <int ItemsPerThread>
struct BlockRadixRank {
  static constexpr int block_threads = radix_bins;  // one thread per digit value
  static constexpr int warps = block_threads / warp_threads;
  static constexpr int tile_items = block_threads * ItemsPerThread;
  using DigitScan = BlockScan<unsigned, block_threads, 1>;

  struct TempStorage {
    unsigned warp_counts[warps][radix_bins];
    unsigned digit_start[radix_bins];
    typename DigitScan::TempStorage scan;
  };

  // Tile position of this thread's item j when each thread holds `items` items (warp-striped).
  KNN_PRIM_DEVICE static int striped_index(int j, int items = ItemsPerThread) {
    const int warp = static_cast<int>(threadIdx.x) / warp_threads;
    return warp * warp_threads * items + j * warp_threads + lane_id();
  }

  // Only the first active_items items of each thread take part (the same for all threads).
  // digits: < 256 each. ranks: the position of each item in the tile sorted by digit.
  // Thread t also gets the number of items with digit t (digit_count) and the position where
  // digit t starts in the sorted tile (digit_start). Ends with __syncthreads().
  __device__ static void rank(TempStorage& temp, const unsigned (&digits)[ItemsPerThread],
                              int (&ranks)[ItemsPerThread], unsigned& digit_count,
                              unsigned& digit_start, int active_items = ItemsPerThread) {
    const int warp = static_cast<int>(threadIdx.x) / warp_threads;
    const int lane = lane_id();
    unsigned* counts = temp.warp_counts[warp];
#pragma unroll
    for (int b = lane; b < radix_bins; b += warp_threads) counts[b] = 0;
    __syncwarp();
    const unsigned lanes_below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      if (j < active_items) {
        const unsigned d = digits[j];
        const unsigned peers = __match_any_sync(full_mask, d);
        const unsigned before = counts[d];
        __syncwarp();
        ranks[j] = static_cast<int>(before + __popc(peers & lanes_below));
        if (lane == 31 - __clz(peers)) counts[d] = before + __popc(peers);
        __syncwarp();
      }
    }
    __syncthreads();
    // Thread t owns digit t: counts per warp become offsets per warp.
    const int t = static_cast<int>(threadIdx.x);
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < warps; ++w) {
      const unsigned c = temp.warp_counts[w][t];
      temp.warp_counts[w][t] = total;
      total += c;
    }
    unsigned start[1] = {total}, scanned[1];
    DigitScan(temp.scan).exclusive_scan(start, scanned, 0u, Sum{});
    temp.digit_start[t] = scanned[0];
    digit_count = total;
    digit_start = scanned[0];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j)
      if (j < active_items)
        ranks[j] += static_cast<int>(temp.warp_counts[warp][digits[j]] + temp.digit_start[digits[j]]);
    __syncthreads();
  }
};

}  // namespace knn::prim::detail
