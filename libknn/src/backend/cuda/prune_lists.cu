#include "backend/cuda/prune_lists.cuh"

#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

constexpr unsigned kPruneAll = 0xFFFFFFFFu;
constexpr int kPruneWarps = 8;  // lists a block: a warp each

// The warp's 32 values (one a lane) in ascending order across the lanes: a bitonic sort, in which
// the lower lane of a pair keeps the lesser value in an ascending run and the greater in a
// descending one.
__device__ __forceinline__ float warp_sorted(float v, int lane) {
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
#pragma unroll
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      const float o = __shfl_xor_sync(kPruneAll, v, stride);
      const bool ascending = (lane & size) == 0, lower = (lane & stride) == 0;
      v = lower == ascending ? fminf(v, o) : fmaxf(v, o);
    }
  return v;
}

// A bitonic sequence across the warp's lanes, in ascending order.
__device__ __forceinline__ float warp_merged(float v, int lane) {
#pragma unroll
  for (int stride = 16; stride > 0; stride >>= 1) {
    const float o = __shfl_xor_sync(kPruneAll, v, stride);
    v = (lane & stride) == 0 ? fminf(v, o) : fmaxf(v, o);
  }
  return v;
}

__global__ void __launch_bounds__(kPruneWarps * 32) prune_lists_kernel(std::int64_t* index, const float2* bounds, unsigned long long* count,
                                                                      int slots, std::int64_t cap, int k) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int slot = static_cast<int>(blockIdx.x) * kPruneWarps + static_cast<int>(threadIdx.x / 32);
  if (slot >= slots) return;  // the same for the whole warp
  const unsigned long long m = count[slot];
  if (m > static_cast<unsigned long long>(cap) || m <= static_cast<unsigned long long>(k)) return;  // the same for the whole warp
  const int n = static_cast<int>(m);
  std::int64_t* const list = index + static_cast<std::int64_t>(slot) * cap;
  const float2* const b = bounds + static_cast<std::int64_t>(slot) * cap;
  // The 32 smallest upper bounds so far, ascending across the lanes (+inf where fewer): each chunk
  // of 32 sorted, then min(best[l], chunk[31 - l]) is a bitonic sequence of the 32 smallest of both.
  float best = INFINITY;
  for (int x0 = 0; x0 < n; x0 += 32) {
    const float u = warp_sorted(x0 + lane < n ? b[x0 + lane].y : INFINITY, lane);
    best = warp_merged(fminf(best, __shfl_sync(kPruneAll, u, 31 - lane)), lane);
  }
  const float kth = __shfl_sync(kPruneAll, best, k - 1);
  // The candidates with a lower bound at most the k-th upper bound, moved down in order. A place
  // written is never past the one its lane read, and every lane has read its place of a chunk
  // before any of the chunk's places is written.
  int kept = 0;
  for (int x0 = 0; x0 < n; x0 += 32) {
    const int x = x0 + lane;
    std::int64_t row = 0;
    bool keep = false;
    if (x < n) {
      row = list[x];
      keep = b[x].x <= kth;
    }
    const unsigned votes = __ballot_sync(kPruneAll, keep);
    __syncwarp();
    if (keep) list[kept + __popc(votes & ((1u << lane) - 1u))] = row;
    kept += __popc(votes);
  }
  if (lane == 0) count[slot] = static_cast<unsigned long long>(kept);
}

}  // namespace

void prune_lists(std::int64_t* index, const float2* bounds, unsigned long long* count, int slots, std::int64_t cap, int k, cudaStream_t st) {
  if (k < 1 || k > kPruneMaxK) throw Error("prune_lists takes k from 1 to " + std::to_string(kPruneMaxK) + ", not " + std::to_string(k));
  if (slots <= 0) return;
  prune_lists_kernel<<<static_cast<unsigned>((slots + kPruneWarps - 1) / kPruneWarps), kPruneWarps * 32, 0, st>>>(index, bounds, count, slots,
                                                                                                                  cap, k);
  KNN_LAUNCHED(prune_lists_kernel);
}

}  // namespace knn::cuda
