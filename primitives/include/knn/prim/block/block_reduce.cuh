#pragma once
// Reduction over a thread block. Items are in blocked arrangement: thread t holds items
// t * ItemsPerThread + j. The caller provides TempStorage in shared memory and calls
// __syncthreads() before reusing it.
#include "../warp/warp_reduce.cuh"

namespace knn::prim {

template <typename T, int BlockThreads, int ItemsPerThread = 1>
class BlockReduce {
  static_assert(BlockThreads % detail::warp_threads == 0 && BlockThreads <= 1024,
                "BlockThreads must be a multiple of 32, at most 1024");
  static_assert(ItemsPerThread >= 1, "ItemsPerThread must be positive");
  static constexpr int warps = BlockThreads / detail::warp_threads;

 public:
  struct TempStorage {
    T warp_totals[warps];
    T result;
  };

  __device__ explicit BlockReduce(TempStorage& temp) : temp_(temp) {}

  // Reduction of all BlockThreads * ItemsPerThread items in order; every thread gets it.
  template <typename Op>
  __device__ T reduce(const T (&items)[ItemsPerThread], Op op) {
    T partial = items[0];
#pragma unroll
    for (int j = 1; j < ItemsPerThread; ++j) partial = op(partial, items[j]);
    return combine(warp_reduce(partial, op), op, warps);
  }

  // Reduction of the first num_valid items (1 <= num_valid); others are not read.
  template <typename Op>
  __device__ T reduce(const T (&items)[ItemsPerThread], Op op, long long num_valid) {
    if (num_valid >= static_cast<long long>(BlockThreads) * ItemsPerThread) return reduce(items, op);
    const int first = static_cast<int>(threadIdx.x) * ItemsPerThread;
    T partial = items[0];
#pragma unroll
    for (int j = 1; j < ItemsPerThread; ++j)
      if (first + j < num_valid) partial = op(partial, items[j]);
    // Threads holding at least one valid item form a prefix of the block.
    const int valid_threads = static_cast<int>((num_valid + ItemsPerThread - 1) / ItemsPerThread);
    const int warp = static_cast<int>(threadIdx.x) / detail::warp_threads;
    const int lanes = valid_threads - warp * detail::warp_threads;
    const int valid_warps = (valid_threads + detail::warp_threads - 1) / detail::warp_threads;
    if (lanes > 0) partial = warp_reduce(partial, op, lanes < 32 ? lanes : 32);
    return combine(partial, op, valid_warps);
  }

 private:
  template <typename Op>
  __device__ T combine(const T& warp_total, Op op, int valid_warps) {
    const int warp = static_cast<int>(threadIdx.x) / detail::warp_threads;
    if (detail::lane_id() == 0) temp_.warp_totals[warp] = warp_total;
    __syncthreads();
    if (threadIdx.x == 0) {
      T total = temp_.warp_totals[0];
      for (int w = 1; w < valid_warps; ++w) total = op(total, temp_.warp_totals[w]);
      temp_.result = total;
    }
    __syncthreads();
    return temp_.result;
  }

  TempStorage& temp_;
};

}  // namespace knn::prim
