#pragma once
// Device-wide inclusive and exclusive scans with any associative operator, in one pass over the
// data (decoupled look-back), for 64-bit element counts.
//
// Like every device-level call here: call with temp == nullptr to get temp_bytes, allocate,
// call again with the same arguments. Work is queued on `stream`; nothing is allocated; the
// Status says what went wrong. in and out may be the same array.
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "../detail/scan_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../operators.hpp"
#include "../status.hpp"

namespace knn::prim {

namespace detail {

// The scan engine behind every scan-shaped primitive: T is the accumulator type, load(i) gives
// element i as T, store(i, value) writes result i. Policy: the tile shape (a TilePolicy).
template <typename T, bool Exclusive, typename Policy = ScanPolicy<T>, typename Load, typename Store, typename Op>
Status scan_dispatch(void* temp, std::size_t& temp_bytes, Load load, Store store, Op op, T init,
                     std::int64_t n, cudaStream_t stream) {
  KNN_PRIM_EXPECTS(n >= 0, "scan: negative number of items");
  const long long num_tiles = ceil_div<long long>(n, Policy::tile_items);
  KNN_PRIM_EXPECTS(num_tiles < (1ll << 31), "scan: too many items for one grid");
  const TempPlan<2> plan{{sizeof(unsigned long long), TileStateLayout<T>::bytes(num_tiles)}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (n == 0) return {};
  // Counter and tile status words are contiguous: one memset resets both.
  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(temp, 0, plan.offset(1) + TileStateLayout<T>::clear_bytes(num_tiles), stream));
  const TileState<T> state = TileStateLayout<T>::make(plan.get<void>(temp, 1), num_tiles);
  scan_kernel<Policy, T, Exclusive><<<static_cast<unsigned>(num_tiles), Policy::block_threads, 0, stream>>>(
      load, store, op, init, n, state, plan.get<unsigned long long>(temp, 0));
  KNN_PRIM_LAUNCH_CHECK();
  return {};
}

}  // namespace detail

// out[0] = init, out[i] = op(init, in[0], ..., in[i-1]).
template <typename InputIt, typename OutputIt, typename Op, typename T>
Status exclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, Op op, T init,
                      std::int64_t n, cudaStream_t stream = 0) {
  if (temp != nullptr && n > 0) KNN_PRIM_EXPECTS(!detail::is_null(in) && !detail::is_null(out), "scan: null data pointer");
  return detail::scan_dispatch<T, true>(temp, temp_bytes, detail::PointerLoad<T, InputIt>{in},
                                        detail::PointerStore<OutputIt>{out}, op, init, n, stream);
}

// out[i] = op(in[0], ..., in[i]); the accumulator type is the input's value type.
template <typename InputIt, typename OutputIt, typename Op>
Status inclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, Op op,
                      std::int64_t n, cudaStream_t stream = 0) {
  using T = detail::value_of<InputIt>;
  if (temp != nullptr && n > 0) KNN_PRIM_EXPECTS(!detail::is_null(in) && !detail::is_null(out), "scan: null data pointer");
  return detail::scan_dispatch<T, false>(temp, temp_bytes, detail::PointerLoad<T, InputIt>{in},
                                         detail::PointerStore<OutputIt>{out}, op, T{}, n, stream);
}

template <typename InputIt, typename OutputIt>
Status exclusive_sum(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n,
                     cudaStream_t stream = 0) {
  return exclusive_scan(temp, temp_bytes, in, out, Sum{}, detail::value_of<InputIt>{}, n, stream);
}

template <typename InputIt, typename OutputIt>
Status inclusive_sum(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n,
                     cudaStream_t stream = 0) {
  return inclusive_scan(temp, temp_bytes, in, out, Sum{}, n, stream);
}

}  // namespace knn::prim
