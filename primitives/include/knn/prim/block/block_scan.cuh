#pragma once
// Scans over a thread block with any associative operator. Items are in blocked arrangement:
// thread t holds items t * ItemsPerThread + j, so the block scans BlockThreads * ItemsPerThread
// items in that order. The caller provides TempStorage in shared memory and calls
// __syncthreads() before reusing it. Input and output arrays may be the same.
//
// The *_with_prefix forms take a callback prefix_op(block_aggregate) that warp 0 calls with the
// block total and whose lane-0 result is put in front of the whole block: this is how a tile of
// a device-wide scan receives the total of the tiles before it.
#include "../warp/warp_scan.cuh"

namespace knn::prim {

template <typename T, int BlockThreads, int ItemsPerThread = 1>
class BlockScan {
  static_assert(BlockThreads % detail::warp_threads == 0 && BlockThreads <= 1024,
                "BlockThreads must be a multiple of 32, at most 1024");
  static_assert(ItemsPerThread >= 1, "ItemsPerThread must be positive");
  static constexpr int warps = BlockThreads / detail::warp_threads;

 public:
  using Items = T[ItemsPerThread];
  struct TempStorage {
    T warp_totals[warps];
    T block_prefix;
  };

  __device__ explicit BlockScan(TempStorage& temp) : temp_(temp) {}

  template <typename Op>
  __device__ void inclusive_scan(const Items& in, Items& out, Op op) {
    T aggregate;
    inclusive_scan(in, out, op, aggregate);
  }

  // block_aggregate: the total of all items, given to every thread.
  template <typename Op>
  __device__ void inclusive_scan(const Items& in, Items& out, Op op, T& block_aggregate) {
    T prefix;
    const bool has_prefix = thread_prefix(in, op, prefix, block_aggregate);
    scan_items_inclusive(in, out, op, prefix, has_prefix);
  }

  template <typename Op>
  __device__ void exclusive_scan(const Items& in, Items& out, T init, Op op) {
    T aggregate;
    exclusive_scan(in, out, init, op, aggregate);
  }

  // block_aggregate: the total of all items without init, given to every thread.
  template <typename Op>
  __device__ void exclusive_scan(const Items& in, Items& out, T init, Op op, T& block_aggregate) {
    T prefix;
    const bool has_prefix = thread_prefix(in, op, prefix, block_aggregate);
    scan_items_exclusive(in, out, op, has_prefix ? op(init, prefix) : init);
  }

  template <typename Op, typename PrefixOp>
  __device__ void inclusive_scan_with_prefix(const Items& in, Items& out, Op op, PrefixOp& prefix_op) {
    T prefix;
    thread_prefix_with_callback(in, op, prefix, prefix_op);
    scan_items_inclusive(in, out, op, prefix, true);
  }

  template <typename Op, typename PrefixOp>
  __device__ void exclusive_scan_with_prefix(const Items& in, Items& out, Op op, PrefixOp& prefix_op) {
    T prefix;
    thread_prefix_with_callback(in, op, prefix, prefix_op);
    scan_items_exclusive(in, out, op, prefix);
  }

 private:
  template <typename Op>
  __device__ static T thread_reduce(const Items& in, Op op) {
    T total = in[0];
#pragma unroll
    for (int j = 1; j < ItemsPerThread; ++j) total = op(total, in[j]);
    return total;
  }

  // The total of the items of all threads before this one; false for thread 0 (no prefix).
  template <typename Op>
  __device__ bool thread_prefix(const Items& in, Op op, T& prefix, T& block_aggregate) {
    const int warp = static_cast<int>(threadIdx.x) / detail::warp_threads;
    const int lane = detail::lane_id();
    T warp_total;
    const T inclusive = warp_inclusive_scan(thread_reduce(in, op), op, warp_total);
    const T exclusive = detail::shfl_up(inclusive, 1);
    if (lane == 0) temp_.warp_totals[warp] = warp_total;
    __syncthreads();
    T warp_prefix = temp_.warp_totals[0];
    block_aggregate = warp_prefix;
#pragma unroll
    for (int w = 1; w < warps; ++w) {
      const T total = temp_.warp_totals[w];
      if (w == warp) warp_prefix = block_aggregate;
      block_aggregate = op(block_aggregate, total);
    }
    if (warp == 0) {
      prefix = exclusive;
      return lane != 0;
    }
    prefix = lane == 0 ? warp_prefix : op(warp_prefix, exclusive);
    return true;
  }

  // Same, with the block prefix from prefix_op in front: every thread then has a prefix.
  template <typename Op, typename PrefixOp>
  __device__ void thread_prefix_with_callback(const Items& in, Op op, T& prefix, PrefixOp& prefix_op) {
    T block_aggregate;
    T local;
    const bool has_local = thread_prefix(in, op, local, block_aggregate);
    if (threadIdx.x < detail::warp_threads) {
      const T block_prefix = prefix_op(block_aggregate);
      if (threadIdx.x == 0) temp_.block_prefix = block_prefix;
    }
    __syncthreads();
    const T block_prefix = temp_.block_prefix;
    prefix = has_local ? op(block_prefix, local) : block_prefix;
  }

  template <typename Op>
  __device__ static void scan_items_exclusive(const Items& in, Items& out, Op op, T running) {
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      const T item = in[j];
      out[j] = running;
      running = op(running, item);
    }
  }

  template <typename Op>
  __device__ static void scan_items_inclusive(const Items& in, Items& out, Op op, T prefix,
                                              bool has_prefix) {
    T running = has_prefix ? op(prefix, in[0]) : in[0];
    out[0] = running;
#pragma unroll
    for (int j = 1; j < ItemsPerThread; ++j) {
      running = op(running, in[j]);
      out[j] = running;
    }
  }

  TempStorage& temp_;
};

}  // namespace knn::prim
