#pragma once
// A block's queue of candidates in shared memory, on their way to the lists in global memory.
// A candidate appended straight to its list (fused_append) waits for a global atomic's return, a
// round trip of hundreds of cycles in which its warp, and at the next barrier its block, stand
// still; pushed here it costs a shared-memory atomic, and the block moves the queue to the lists
// all at once, every thread a few entries, when it is half full at a barrier and at the end.
// The lists are sets (ranked later by distance, then index), so the order of appends is free.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/fused_pass.cuh"

namespace knn::cuda {

constexpr int kFusedQueue = 2048;  // entries: 10 KiB of shared memory
static_assert(kFusedQueries <= 256, "a block's query fits a byte");

struct FusedQueue {
  unsigned count;                    // entries pushed since the last move, past kFusedQueue too
  unsigned row[kFusedQueue];         // the training row less the block part's first
  unsigned char query[kFusedQueue];  // the block's query
};

// Queues training row j (the part's first row j_first) for query r of the block, or appends it
// straight to its list where the queue is full.
__device__ __forceinline__ void fused_queue_push(FusedQueue& fq, const Slots& slots, int first_slot, int r, std::int64_t j,
                                                 std::int64_t j_first) {
  const std::int64_t rel = j - j_first;
  const unsigned pos = rel <= 0xffffffffll ? atomicAdd(&fq.count, 1u) : kFusedQueue;
  if (pos < kFusedQueue) {
    fq.row[pos] = static_cast<unsigned>(rel);
    fq.query[pos] = static_cast<unsigned char>(r);
  } else {
    fused_append(slots, first_slot + r, j);
  }
}

// A barrier of the whole block that says whether the queue held at least `least` entries: the
// same answer for every thread, taken before any pushes again. The count is read before the
// barrier, by one thread while others may still push: a choice of when to move, never of what.
__device__ __forceinline__ bool fused_queue_barrier(FusedQueue& fq, unsigned least) {
  return __syncthreads_or(threadIdx.x == 0 && atomicAdd(&fq.count, 0u) >= least) != 0;
}

// Moves the queue's entries to their lists and empties it. All the block's threads, after a
// barrier past the last push (fused_queue_barrier's answer, or the last stage's). Each thread
// claims the places of its entries (kFusedQueue / kFusedThreads of them) before it fills any, so
// that their atomics' round trips overlap.
__device__ __forceinline__ void fused_queue_move(FusedQueue& fq, const Slots& slots, int first_slot, std::int64_t j_first) {
  constexpr int kEach = kFusedQueue / kFusedThreads;
  static_assert(kFusedQueue % kFusedThreads == 0, "the same share of entries for every thread");
  const unsigned queued = min(fq.count, static_cast<unsigned>(kFusedQueue));
  __syncthreads();  // every thread has read the count
  if (threadIdx.x == 0) fq.count = 0;
  int slot[kEach];
  unsigned long long pos[kEach];
#pragma unroll
  for (int e = 0; e < kEach; ++e) {  // fused_append's two steps, all the atomics first
    const unsigned i = threadIdx.x + e * kFusedThreads;
    slot[e] = i < queued ? first_slot + fq.query[i] : -1;
    if (slot[e] >= 0) pos[e] = atomicAdd(slots.count + slot[e], 1ull);
  }
#pragma unroll
  for (int e = 0; e < kEach; ++e)
    if (slot[e] >= 0 && static_cast<std::int64_t>(pos[e]) < slots.limit_of(slot[e]))
      slots.index[slots.base_of(slot[e]) + pos[e]] = j_first + fq.row[threadIdx.x + e * kFusedThreads];
  __syncthreads();  // every entry read before the next push
}

}  // namespace knn::cuda
