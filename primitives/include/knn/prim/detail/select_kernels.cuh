#pragma once
// Single-pass stream compaction: per tile, each warp loads its share (coalesced, 16 bytes per
// lane where possible), ranks the kept items with ballots and compacts them in its own part of
// shared memory; the count of the tiles before comes by decoupled look-back; then each warp
// writes its kept items out, coalesced.
#include <cstring>

#include "../operators.hpp"
#include "load_store.cuh"
#include "scan_kernels.cuh"
#include "tile_state.cuh"

namespace knn::prim::detail {

// Shapes and pauses near CUB's tuning for sm_90 (select_if: 384 x 17 for 4-byte items, 384 x 11
// for 8-byte ones; about 1.1 us before the first look back, 0.1 us between retries), rounded to
// whole 16-byte chunks per thread. Larger items: fewer per thread, so that a tile still fits in
// shared memory.
template <typename T>
struct SelectPolicy
    : TilePolicy<sizeof(T) <= 8 ? 384 : 256,
                 sizeof(T) <= 4 ? 16 : (sizeof(T) <= 8 ? 12 : (sizeof(T) <= 80 ? 80 / static_cast<int>(sizeof(T)) : 1)),
                 1100, 100> {};

// Which items to keep: by a predicate on the item, or by a flag array beside the items.
template <typename Pred>
struct PredicateSelector {
  Pred pred;
  template <typename T>
  __device__ bool operator()(long long, const T& item) const { return pred(item); }
};
template <typename FlagIt>
struct FlagSelector {
  FlagIt flags;
  template <typename T>
  __device__ bool operator()(long long i, const T&) const { return flags[i] != 0; }
};

template <typename T, int TileItems, int Warps>
struct SelectShared {
  T items[TileItems];
  int warp_kept[Warps];
  long long prefix;
  long long tile;
};

// One warp's share of the tile, read striped: PerChunk consecutive items per lane per step (one
// 16-byte load when PerChunk > 1), so item e of step c of a lane sits at position
// (c * 32 + lane) * PerChunk + e of the warp's share, which starts at tile position warp_offset.
// Kept items are ranked with one ballot per item and compacted, in order, into the warp's own
// `part` of shared memory; for a partition the rejected ones fill it from the back, last first.
// Each step's items are placed as soon as its ballots are in, so only the loads keep registers.
// Returns the number of kept items of the warp.
template <bool Partition, int PerChunk, bool Full, int IPT, typename T, typename InputIt, typename Selector>
__device__ int compact_warp(InputIt in, const Selector& select, long long base, int warp_offset, int num_valid,
                            T* part) {
  constexpr int steps = IPT / PerChunk;
  constexpr int warp_items = warp_threads * IPT;
  const int lane = lane_id();
  T items[IPT];
  if constexpr (PerChunk > 1) {
    const Chunk* src = reinterpret_cast<const Chunk*>(in + base + warp_offset);
    Chunk c[steps];
#pragma unroll
    for (int v = 0; v < steps; ++v) c[v] = src[v * warp_threads + lane];
#pragma unroll
    for (int v = 0; v < steps; ++v) std::memcpy(&items[v * PerChunk], &c[v], sizeof(Chunk));
  } else {
    const int last = num_valid - 1 - warp_offset;  // the tile's last valid item, from this warp's share
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      const int pos = j * warp_threads + lane;
      items[j] = in[base + warp_offset + (Full || pos <= last ? pos : last)];
    }
  }
  const unsigned lanes_before = (1u << lane) - 1u;
  int warp_kept = 0;
#pragma unroll
  for (int c = 0; c < steps; ++c) {
    bool keep[PerChunk];
    int r = warp_kept;  // kept items of the warp before the item at hand
#pragma unroll
    for (int e = 0; e < PerChunk; ++e) {
      const int pos = (c * warp_threads + lane) * PerChunk + e;
      keep[e] = (Full || warp_offset + pos < num_valid) && select(base + warp_offset + pos, items[c * PerChunk + e]);
      const unsigned kept_lanes = __ballot_sync(full_mask, keep[e]);
      r += __popc(kept_lanes & lanes_before);
      warp_kept += __popc(kept_lanes);
    }
#pragma unroll
    for (int e = 0; e < PerChunk; ++e) {
      const int pos = (c * warp_threads + lane) * PerChunk + e;
      if (keep[e]) {
        part[r++] = items[c * PerChunk + e];
      } else if constexpr (Partition) {
        if (Full || warp_offset + pos < num_valid) part[warp_items - 1 - (pos - r)] = items[c * PerChunk + e];
      }
    }
  }
  return warp_kept;
}

// One tile. Each warp compacts its own items in its own part of shared memory before the block
// meets; once the tile's prefix is known, each warp writes its part out. Partition: rejected
// items go to the back of `out`, last first; a second kernel (reverse_tail_kernel) then
// restores their order.
template <typename Policy, bool Partition, int PerChunk, bool Full, typename T, typename Shared, typename InputIt,
          typename OutputIt, typename Selector>
__device__ void select_tile(Shared& smem, InputIt in, OutputIt out, long long* num_selected, const Selector& select,
                            long long n, const CountTileState& state, long long tile, long long base, int num_valid) {
  constexpr int IPT = Policy::items_per_thread;
  constexpr int warps = Policy::block_threads / warp_threads;
  constexpr int warp_items = warp_threads * IPT;
  const int warp = static_cast<int>(threadIdx.x) / warp_threads;
  const int lane = lane_id();
  const int warp_offset = warp * warp_items;
  T* part = smem.items + warp_offset;

  const int warp_kept =
      compact_warp<Partition, PerChunk, Full, IPT>(in, select, base, warp_offset, num_valid, part);
  if (lane == 0) smem.warp_kept[warp] = warp_kept;
  __syncthreads();
  int warp_prefix = 0, tile_kept = 0;
#pragma unroll
  for (int w = 0; w < warps; ++w) {
    const int c = smem.warp_kept[w];
    warp_prefix += w < warp ? c : 0;
    tile_kept += c;
  }
  if (warp == 0) {
    long long prefix = 0;
    if (tile > 0) {
      if (lane == 0) state.publish(tile, tile_aggregate, tile_kept);
      prefix = lookback_prefix<long long, Policy::lookback_first_pause_ns, Policy::lookback_retry_pause_ns>(
          state, tile, Sum{});
    }
    if (lane == 0) {
      state.publish(tile, tile_inclusive, prefix + tile_kept);
      smem.prefix = prefix;
      if (base + num_valid == n) *num_selected = prefix + tile_kept;
    }
  }
  __syncthreads();
  const long long kept_before = smem.prefix + warp_prefix;  // in the whole input, before this warp
  const int left = num_valid - warp_offset;
  const int warp_valid = Full || left > warp_items ? warp_items : (left > 0 ? left : 0);
  // Rejected item q of the warp sits at part[warp_items - 1 - q] and goes to
  // out[n - 1 - (rejected items before the warp) - q].
  const long long rejected_end = n - 1 - (base + warp_offset - kept_before) - (warp_items - 1);
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    const int i = k * warp_threads + lane;
    if (i < warp_kept) out[kept_before + i] = part[i];
    else if (Partition && i >= warp_items - (warp_valid - warp_kept)) out[rejected_end + i] = part[i];
  }
}

template <typename Policy, typename T, bool Partition, typename InputIt, typename OutputIt, typename Selector>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
select_kernel(InputIt in, OutputIt out, long long* num_selected, Selector select, long long n,
              CountTileState state, unsigned long long* tile_counter) {
  constexpr int tile_items = Policy::tile_items;
  constexpr int per_chunk = items_per_chunk<T>;
  constexpr bool chunked = per_chunk > 1 && Policy::items_per_thread % per_chunk == 0 &&
                           is_raw_access<T, PointerLoad<T, InputIt>>::value;
  __shared__ SelectShared<T, tile_items, Policy::block_threads / warp_threads> smem;

  const long long tile = next_tile<Policy::tiles_by_block_index>(tile_counter, smem.tile);
  const long long base = tile * tile_items;
  const long long remaining = n - base;
  if (remaining < tile_items) {
    select_tile<Policy, Partition, 1, false, T>(smem, in, out, num_selected, select, n, state, tile, base,
                                                static_cast<int>(remaining));
    return;
  }
  if constexpr (chunked) {
    if (is_aligned_16(in)) {
      select_tile<Policy, Partition, per_chunk, true, T>(smem, in, out, num_selected, select, n, state, tile, base,
                                                         tile_items);
      return;
    }
  }
  select_tile<Policy, Partition, 1, true, T>(smem, in, out, num_selected, select, n, state, tile, base, tile_items);
}

// Reverses out[*num_selected, n) in place.
template <typename OutputIt>
__global__ void reverse_tail_kernel(OutputIt out, const long long* num_selected, long long n) {
  const long long begin = *num_selected;
  const long long half = (n - begin) / 2;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < half;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const auto a = out[begin + i];
    out[begin + i] = out[n - 1 - i];
    out[n - 1 - i] = a;
  }
}

}  // namespace knn::prim::detail
