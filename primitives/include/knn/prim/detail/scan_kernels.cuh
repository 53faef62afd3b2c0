#pragma once
// Single-pass scan: one block per tile, prefixes chained by decoupled look-back. Each warp
// moves its own share of the tile between global memory (coalesced, 16 bytes per lane where
// possible) and blocked registers through its own shared buffer, so the block only meets at the
// barriers of the scan itself.
#include <type_traits>

#include "../block/block_scan.cuh"
#include "load_store.cuh"
#include "tile_state.cuh"

namespace knn::prim::detail {

// The shape of a tile and the look-back's pauses (see lookback_pause). TilesByBlockIndex:
// tile = blockIdx.x (saves an atomic and a barrier per tile, but relies on blocks starting in
// index order); otherwise tiles are numbered in the order blocks start (a global counter), so a
// tile only ever waits on tiles whose blocks are already running. MinBlocksPerSm caps the
// registers (__launch_bounds__) so that that many blocks fit on an SM; 0 leaves them to the
// compiler (even 1 makes ptxas use many more).
template <int BlockThreads, int ItemsPerThread, int LookbackFirstPauseNs = 0, int LookbackRetryPauseNs = 0,
          bool TilesByBlockIndex = false, int MinBlocksPerSm = 0>
struct TilePolicy {
  static_assert(BlockThreads % warp_threads == 0 && BlockThreads <= 1024, "BlockThreads: a multiple of 32, at most 1024");
  static_assert(ItemsPerThread >= 1 && ItemsPerThread <= 32, "ItemsPerThread in [1, 32]");
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static constexpr int lookback_first_pause_ns = LookbackFirstPauseNs;
  static constexpr int lookback_retry_pause_ns = LookbackRetryPauseNs;
  static constexpr bool tiles_by_block_index = TilesByBlockIndex;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
};

// Shapes and pauses near CUB's tuning for sm_90 (scan: 128 x 24 for 4-byte values, 224 x 12
// for 8-byte ones; about 1.2 us before the first look back, 0.6 us between retries): small
// blocks with many items keep enough tiles resident per SM to cover the look-back's latency.
// Items per thread are multiples of the items per 16-byte chunk.
template <typename T>
struct ScanPolicy : TilePolicy<sizeof(T) <= 4 ? 128 : (sizeof(T) <= 8 ? 224 : 256),
                               sizeof(T) <= 4 ? 24 : (sizeof(T) <= 8 ? 12 : 5), 1200, 600> {};

// The tile this block works on (see TilePolicy).
template <bool ByBlockIndex>
__device__ long long next_tile(unsigned long long* tile_counter, long long& tile_shared) {
  if constexpr (ByBlockIndex) {
    return static_cast<long long>(blockIdx.x);
  } else {
    if (threadIdx.x == 0) tile_shared = static_cast<long long>(atomicAdd(tile_counter, 1ull));
    __syncthreads();
    return tile_shared;
  }
}

template <typename Policy, typename T, bool Exclusive, typename Load, typename Store, typename Op>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
scan_kernel(Load load, Store store, Op op, T init, long long n, TileState<T> state,
            unsigned long long* tile_counter) {
  constexpr int BT = Policy::block_threads;
  constexpr int IPT = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  using Scan = BlockScan<T, BT, IPT>;
  using Exchange = WarpExchange<T, IPT>;
  // Apart, not in a union: no barrier is then needed between the loads, the scan and the stores.
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ typename Exchange::Storage exchange[BT / warp_threads];
  __shared__ long long tile_shared;

  const long long tile = next_tile<Policy::tiles_by_block_index>(tile_counter, tile_shared);
  const long long base = tile * tile_items;
  const long long remaining = n - base;
  const bool full = remaining >= tile_items;
  const int warp = static_cast<int>(threadIdx.x) / warp_threads;
  const long long warp_base = base + static_cast<long long>(warp) * Exchange::warp_items;
  const int warp_valid = (full ? tile_items : static_cast<int>(remaining)) - warp * Exchange::warp_items;
  typename Exchange::Storage& buf = exchange[warp];

  T items[IPT];
  if (full) Exchange::template load_blocked<true>(load, warp_base, warp_valid, Exchange::can_load_chunks(load), buf, items);
  else Exchange::template load_blocked<false>(load, warp_base, warp_valid, false, buf, items);

  if (tile == 0) {
    T aggregate;
    if constexpr (Exclusive) {
      Scan(scan_storage).exclusive_scan(items, items, init, op, aggregate);
      if (threadIdx.x == 0) state.publish(0, tile_inclusive, op(init, aggregate));
    } else {
      Scan(scan_storage).inclusive_scan(items, items, op, aggregate);
      if (threadIdx.x == 0) state.publish(0, tile_inclusive, aggregate);
    }
  } else {
    LookbackCallback<T, Op, TileState<T>, Policy::lookback_first_pause_ns, Policy::lookback_retry_pause_ns> callback{
        state, tile, op};
    if constexpr (Exclusive) Scan(scan_storage).exclusive_scan_with_prefix(items, items, op, callback);
    else Scan(scan_storage).inclusive_scan_with_prefix(items, items, op, callback);
  }

  // The scan's barriers also order this warp's reads of buf above before its writes below.
  if (full) Exchange::template store_blocked<true>(store, warp_base, warp_valid, Exchange::can_store_chunks(store), buf, items);
  else Exchange::template store_blocked<false>(store, warp_base, warp_valid, false, buf, items);
}

}  // namespace knn::prim::detail
