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

namespace knn::prim::detail {

// The lanes of a warp whose 8-bit digit equals this lane's, among the lanes in `lanes`: one
// ballot per bit. On sm_90 eight ballots cost less than one __match_any_sync, whose latency sat
// on every key's critical path in the ranking loop.
KNN_PRIM_DEVICE unsigned match_digit(unsigned digit, unsigned lanes) {
  unsigned peers = lanes;
#pragma unroll
  for (int b = 0; b < radix_bits; ++b) {
    unsigned same;  // lanes whose bit b equals this lane's
#if defined(__CUDA_ARCH__)
    // One predicate serves the ballot and the complement (C++ left a select per bit).
    asm("{\n\t.reg .pred p;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
        "@!p not.b32 %0, %0;\n\t}"
        : "=r"(same)
        : "r"(digit), "r"(1u << b));
#else
    const bool bit = (digit >> b) & 1u;
    same = __ballot_sync(full_mask, bit);
    if (!bit) same = ~same;
#endif
    peers &= same;
  }
  return peers;
}

// Stable ranking of a tile by an 8-bit digit, counting first (the onesweep pass's ranking):
// (1) each warp counts its digits into a histogram of its own; (2) thread t < 256 turns digit
// t's counts over the warps into per-warp offsets, and the block scans the digit totals, so that
// warp_offsets[w][d] is where warp w's first key of digit d goes in the sorted tile; (3) per item,
// the lanes holding the same digit find each other with ballots, and the highest of them adds
// their number to the warp's offset with one shared-memory atomic, whose old value every peer
// gets by a shuffle. Unlike BlockRadixRank, no item waits on the previous item's counter update
// through a warp barrier, and the tile's digit counts exist before any key is ranked, so a
// onesweep tile can publish them for its successors' look-back at once.
//
// Items are warp-striped: item j of lane l in warp w is tile position w*32*IPT + j*32 + l; only
// positions below num_valid take part. Threads t < 256 must exist (BlockThreads >= 256).
template <int BlockThreads, int ItemsPerThread>
struct BlockRadixRankCounts {
  static_assert(BlockThreads >= radix_bins && BlockThreads % warp_threads == 0,
                "one thread per digit at least, whole warps");
  static constexpr int block_threads = BlockThreads;
  static constexpr int warps = BlockThreads / warp_threads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  using DigitScan = BlockScan<unsigned, BlockThreads, 1>;

  struct TempStorage {
    unsigned warp_offsets[warps][radix_bins];
    typename DigitScan::TempStorage scan;
  };

  KNN_PRIM_DEVICE static int striped_index(int j) {
    const int warp = static_cast<int>(threadIdx.x) / warp_threads;
    return warp * warp_threads * ItemsPerThread + j * warp_threads + lane_id();
  }

  // ranks: each valid item's position in the tile sorted by digit (ties in tile order). Thread
  // t < 256 gets digit t's count in the tile and where its run starts in the sorted tile;
  // counts_ready(count) runs on those threads as soon as the counts are known. Ends with
  // __syncthreads(), after which temp may be reused.
  // digit_of(item) gives an item's digit.
  // Full: num_valid is the whole tile (the common case, without a bounds check per item).
  template <bool Full, typename Item, typename DigitOf, typename CountsReady>
  __device__ static void rank(TempStorage& temp, const Item (&items)[ItemsPerThread], DigitOf digit_of, int num_valid,
                              int (&ranks)[ItemsPerThread], unsigned& digit_count, unsigned& digit_start,
                              CountsReady&& counts_ready) {
    const int t = static_cast<int>(threadIdx.x);
    const int warp = t / warp_threads;
    const int lane = lane_id();
    unsigned* mine = temp.warp_offsets[warp];
#pragma unroll
    for (int b = lane; b < radix_bins; b += warp_threads) mine[b] = 0;
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j)
      if (Full || striped_index(j) < num_valid) atomicAdd(&mine[digit_of(items[j])], 1u);
    __syncthreads();

    unsigned total = 0;
    if (t < radix_bins) {
#pragma unroll
      for (int w = 0; w < warps; ++w) {
        const unsigned c = temp.warp_offsets[w][t];
        temp.warp_offsets[w][t] = total;
        total += c;
      }
      counts_ready(total);
    }
    unsigned in[1] = {total}, start[1];
    DigitScan(temp.scan).exclusive_scan(in, start, 0u, Sum{});
    if (t < radix_bins) {
#pragma unroll
      for (int w = 0; w < warps; ++w) temp.warp_offsets[w][t] += start[0];
    }
    digit_count = total;
    digit_start = start[0];
    __syncthreads();

    const unsigned lanes_upto = 0xffffffffu >> (31 - lane);  // this lane and those below it
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      const unsigned d = (Full || striped_index(j) < num_valid) ? digit_of(items[j]) : 0u;
      const unsigned valid = Full ? full_mask : __ballot_sync(full_mask, striped_index(j) < num_valid);
      const unsigned peers = match_digit(d, valid);
      const int leader = 31 - __clz(peers);  // -1 for an invalid lane with no valid peer
      const unsigned below = __popc(peers & lanes_upto);
      unsigned base = 0;
      if (lane == leader) base = atomicAdd(&mine[d], below);
      base = __shfl_sync(full_mask, base, leader & 31);
      ranks[j] = static_cast<int>(base + below) - 1;
    }
    __syncthreads();
  }
};

}  // namespace knn::prim::detail
