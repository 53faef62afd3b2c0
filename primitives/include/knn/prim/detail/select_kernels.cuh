#pragma once
// Single-pass stream compaction: per tile, count the kept items, get the count of the tiles
// before by decoupled look-back, compact the tile in shared memory and write it out coalesced.
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "load_store.cuh"
#include "scan_kernels.cuh"
#include "tile_state.cuh"

namespace knn::prim::detail {

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

// Partition: true writes rejected items from the back of `out`, last first; a second kernel
// (reverse_tail_kernel) then restores their order.
template <typename T, bool Partition, typename InputIt, typename OutputIt, typename Selector>
__global__ void __launch_bounds__(ScanPolicy<T>::block_threads)
select_kernel(InputIt in, OutputIt out, long long* num_selected, Selector select, long long n,
              CountTileState state, unsigned long long* tile_counter) {
  constexpr int BT = ScanPolicy<T>::block_threads;
  constexpr int IPT = ScanPolicy<T>::items_per_thread;
  constexpr int tile_items = BT * IPT;
  using Scan = BlockScan<long long, BT, 1>;
  __shared__ union {
    typename Scan::TempStorage scan;
    T items[tile_items];
  } smem;
  __shared__ long long tile_shared, prefix_shared;

  if (threadIdx.x == 0) tile_shared = static_cast<long long>(atomicAdd(tile_counter, 1ull));
  __syncthreads();
  const long long tile = tile_shared;
  const long long base = tile * tile_items;
  const long long remaining = n - base;
  const int num_valid = remaining < tile_items ? static_cast<int>(remaining) : tile_items;

  T items[IPT];
  load_tile_blocked<BT, IPT>(PointerLoad<T, InputIt>{in}, base, num_valid, smem.items, items);
  const int first = static_cast<int>(threadIdx.x) * IPT;
  bool keep[IPT];
  long long count[1] = {0};
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    keep[j] = first + j < num_valid && select(base + first + j, items[j]);
    count[0] += keep[j];
  }
  long long rank[1], tile_kept;
  Scan(smem.scan).exclusive_scan(count, rank, 0ll, Sum{}, tile_kept);
  if (threadIdx.x < warp_threads) {
    long long prefix = 0;
    if (tile > 0) {
      if (threadIdx.x == 0) state.publish(tile, tile_aggregate, tile_kept);
      prefix = lookback_prefix<long long>(state, tile, Sum{});
    }
    if (threadIdx.x == 0) {
      state.publish(tile, tile_inclusive, prefix + tile_kept);
      prefix_shared = prefix;
      if (base + num_valid == n) *num_selected = prefix + tile_kept;
    }
  }
  __syncthreads();  // also: everyone is done with the scan storage, items may overwrite it
  const long long prefix = prefix_shared;
  // Compact in shared memory: kept items first, then (partition) the rejected ones.
  int kept_rank = static_cast<int>(rank[0]);
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    if (keep[j]) smem.items[kept_rank++] = items[j];
    else if (Partition && first + j < num_valid)
      smem.items[static_cast<int>(tile_kept) + (first + j - kept_rank)] = items[j];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < tile_kept; i += BT) out[prefix + i] = smem.items[i];
  if constexpr (Partition) {
    const long long rejected_before = base - prefix;
    for (int i = static_cast<int>(tile_kept + threadIdx.x); i < num_valid; i += BT)
      out[n - 1 - (rejected_before + (i - tile_kept))] = smem.items[i];
  }
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
