#pragma once
// Warp-aggregated append to a list whose length is a counter in global (or shared) memory: each
// lane has `count` items to write; one atomicAdd for the whole warp reserves their places, so a
// warp costs one atomic instead of one per lane or per item.
//
// Contract: all 32 lanes of the warp call (full mask), each with its own count (0 allowed); the
// warp's total must fit in 32 bits. Each lane gets the position of its first item: the lane's
// items go to [first, first + count), after the items of the lanes below it; the warp's places
// are contiguous, and warps (or other callers) that append to the same counter get disjoint
// places in the order their atomics land. A warp whose counts are all 0 does not touch the
// counter, and every lane gets 0. Counter: unsigned, unsigned long long or int (what atomicAdd
// takes); positions never wrap if the counter does not.
//
// Cost: one vote; then, if any lane has items, five shuffles for the scan of the counts, one
// atomic (by lane 31, which holds the total) and one shuffle (two for a 64-bit counter) to hand
// out the start. The vote comes first because in a filtering pass most warps append nothing.
#include "../operators.hpp"
#include "warp_scan.cuh"

namespace knn::prim {

template <typename Counter>
KNN_PRIM_DEVICE Counter warp_append(Counter* counter, unsigned count) {
  if (__ballot_sync(detail::full_mask, count != 0) == 0) return 0;
  const unsigned inclusive = warp_inclusive_scan(count, Sum{});
  Counter base = 0;
  if (detail::lane_id() == detail::warp_threads - 1) base = atomicAdd(counter, static_cast<Counter>(inclusive));
  base = detail::shfl_idx(base, detail::warp_threads - 1);
  return base + static_cast<Counter>(inclusive - count);
}

}  // namespace knn::prim
