#pragma once
// Reductions across the 32 lanes of a warp. Every lane of the warp must call (full mask).
#include "../detail/shuffle.cuh"

namespace knn::prim {

// Reduction of all 32 lanes in lane order (op need not be commutative); every lane gets the
// same bits, because partners combine the same operands in the same order.
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_reduce(T value, Op op) {
  const int lane = detail::lane_id();
#pragma unroll
  for (int mask = 1; mask < detail::warp_threads; mask <<= 1) {
    const T other = detail::shfl_xor(value, mask);
    value = (lane & mask) ? op(other, value) : op(value, other);
  }
  return value;
}

// Reduction of lanes [0, valid_lanes) in lane order, 1 <= valid_lanes <= 32; the result is
// returned to every lane. Values of lanes >= valid_lanes are ignored.
template <typename T, typename Op>
KNN_PRIM_DEVICE T warp_reduce(T value, Op op, int valid_lanes) {
  const int lane = detail::lane_id();
#pragma unroll
  for (int offset = 1; offset < detail::warp_threads; offset <<= 1) {
    const T other = detail::shfl_down(value, offset);
    if (lane + offset < valid_lanes) value = op(value, other);
  }
  return detail::shfl_idx(value, 0);
}

}  // namespace knn::prim
