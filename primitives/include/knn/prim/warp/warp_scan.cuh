#pragma once
// Scans across the 32 lanes of a warp (Kogge-Stone over shuffles). Every lane must call.
#include "../detail/shuffle.cuh"

namespace knn::prim {

// Inclusive scan in lane order: lane i gets op(v0, ..., vi).
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_inclusive_scan(T value, Op op) {
  const int lane = detail::lane_id();
#pragma unroll
  for (int offset = 1; offset < detail::warp_threads; offset <<= 1) {
    const T other = detail::shfl_up(value, offset);
    if (lane >= offset) value = op(other, value);
  }
  return value;
}

// Inclusive scan that also gives the warp total (the last lane's inclusive value) to every lane.
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_inclusive_scan(T value, Op op, T& warp_aggregate) {
  value = warp_inclusive_scan(value, op);
  warp_aggregate = detail::shfl_idx(value, detail::warp_threads - 1);
  return value;
}

// Exclusive scan seeded with init: lane 0 gets init, lane i gets op(init, v0, ..., v(i-1)).
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_exclusive_scan(T value, T init, Op op) {
  const T inclusive = warp_inclusive_scan(value, op);
  const T shifted = detail::shfl_up(inclusive, 1);
  return detail::lane_id() == 0 ? init : op(init, shifted);
}

// Exclusive scan seeded with init, with the warp total (without init) for every lane.
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_exclusive_scan(T value, T init, Op op, T& warp_aggregate) {
  const T inclusive = warp_inclusive_scan(value, op, warp_aggregate);
  const T shifted = detail::shfl_up(inclusive, 1);
  return detail::lane_id() == 0 ? init : op(init, shifted);
}

}  // namespace knn::prim
