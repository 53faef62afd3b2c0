#pragma once
// Single-pass scan: one block per tile, tiles numbered in the order blocks start (a global
// counter, so a tile only ever waits on tiles whose blocks are already running), prefixes
// chained by decoupled look-back.
#include <type_traits>

#include "../block/block_scan.cuh"
#include "load_store.cuh"
#include "tile_state.cuh"

namespace knn::prim::detail {

template <typename T>
struct ScanPolicy {
  static constexpr int block_threads = 256;
  // Odd, so that the blocked reads from shared memory are free of bank conflicts.
  static constexpr int items_per_thread = sizeof(T) <= 4 ? 15 : (sizeof(T) <= 8 ? 9 : 5);
  static constexpr int tile_items = block_threads * items_per_thread;
};

template <typename T, bool Exclusive, typename Load, typename Store, typename Op>
__global__ void __launch_bounds__(ScanPolicy<T>::block_threads)
scan_kernel(Load load, Store store, Op op, T init, long long n, TileState<T> state,
            unsigned long long* tile_counter) {
  constexpr int BT = ScanPolicy<T>::block_threads;
  constexpr int IPT = ScanPolicy<T>::items_per_thread;
  constexpr int tile_items = ScanPolicy<T>::tile_items;
  using Scan = BlockScan<T, BT, IPT>;
  struct Exchange {
    T items[tile_items];
  };
  __shared__ union {
    typename Scan::TempStorage scan;
    Exchange exchange;
  } smem;
  __shared__ long long tile_shared;

  if (threadIdx.x == 0) tile_shared = static_cast<long long>(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const long long tile = tile_shared;
  const long long base = tile * tile_items;
  const long long remaining = n - base;
  const int num_valid = remaining < tile_items ? static_cast<int>(remaining) : tile_items;

  T items[IPT];
  load_tile_blocked<BT, IPT>(load, base, num_valid, smem.exchange.items, items);

  if (tile == 0) {
    T aggregate;
    if constexpr (Exclusive) {
      Scan(smem.scan).exclusive_scan(items, items, init, op, aggregate);
      if (threadIdx.x == 0) state.publish(0, tile_inclusive, op(init, aggregate));
    } else {
      Scan(smem.scan).inclusive_scan(items, items, op, aggregate);
      if (threadIdx.x == 0) state.publish(0, tile_inclusive, aggregate);
    }
  } else {
    LookbackCallback<T, Op> callback{state, tile, op};
    if constexpr (Exclusive) Scan(smem.scan).exclusive_scan_with_prefix(items, items, op, callback);
    else Scan(smem.scan).inclusive_scan_with_prefix(items, items, op, callback);
  }
  __syncthreads();
  store_tile_blocked<BT, IPT>(store, base, num_valid, smem.exchange.items, items);
}

}  // namespace knn::prim::detail
