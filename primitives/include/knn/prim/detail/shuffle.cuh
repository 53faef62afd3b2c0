#pragma once
// Warp shuffles for any trivially copyable type, moved as 32-bit words.
#include <cstring>
#include <type_traits>

#include "config.hpp"

namespace knn::prim::detail {

template <typename T, typename Shuffle>
KNN_PRIM_DEVICE T shuffle_words(const T& value, Shuffle shuffle) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled types must be trivially copyable");
  constexpr int words = (sizeof(T) + 3) / 4;
  unsigned in[words] = {};
  std::memcpy(in, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < words; ++i) in[i] = shuffle(in[i]);
  T out;
  std::memcpy(&out, in, sizeof(T));
  return out;
}

template <typename T>
KNN_PRIM_DEVICE T shfl_xor(const T& v, int lane_mask) {
  return shuffle_words(v, [=](unsigned w) { return __shfl_xor_sync(full_mask, w, lane_mask); });
}
template <typename T>
KNN_PRIM_DEVICE T shfl_up(const T& v, int delta) {
  return shuffle_words(v, [=](unsigned w) { return __shfl_up_sync(full_mask, w, delta); });
}
template <typename T>
KNN_PRIM_DEVICE T shfl_down(const T& v, int delta) {
  return shuffle_words(v, [=](unsigned w) { return __shfl_down_sync(full_mask, w, delta); });
}
template <typename T>
KNN_PRIM_DEVICE T shfl_idx(const T& v, int src_lane) {
  return shuffle_words(v, [=](unsigned w) { return __shfl_sync(full_mask, w, src_lane); });
}

KNN_PRIM_DEVICE int lane_id() { return static_cast<int>(threadIdx.x) & (warp_threads - 1); }

}  // namespace knn::prim::detail
