#pragma once
// Stream compaction, order kept: select_if (keep items where pred(item)), select_flagged (keep
// items whose flag is non-zero) and partition (kept items first, then the rejected ones; both
// groups in input order). The number kept is written to *num_selected (device memory).
// Temp-storage convention as in device_scan.cuh. select_* may run in place (out == in);
// partition may not.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/select_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../status.hpp"

namespace knn::prim {

namespace detail {

// Policy: the tile shape (a TilePolicy); by default SelectPolicy of the item type.
template <bool Partition, typename Policy = void, typename InputIt, typename OutputIt, typename Selector>
Status select_dispatch(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out,
                       std::int64_t* num_selected, std::int64_t n, Selector select,
                       cudaStream_t stream) {
  using T = value_of<InputIt>;
  using P = std::conditional_t<std::is_void_v<Policy>, SelectPolicy<T>, Policy>;
  KNN_PRIM_EXPECTS(n >= 0, "select: negative number of items");
  const long long num_tiles = ceil_div<long long>(n, P::tile_items);
  KNN_PRIM_EXPECTS(num_tiles < (1ll << 31), "select: too many items for one grid");
  const TempPlan<2> plan{{sizeof(unsigned long long), CountTileState::bytes(num_tiles)}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  KNN_PRIM_EXPECTS(num_selected != nullptr, "select: null num_selected pointer");
  if (n == 0) {
    KNN_PRIM_CUDA_TRY(cudaMemsetAsync(num_selected, 0, sizeof(std::int64_t), stream));
    return {};
  }
  KNN_PRIM_EXPECTS(!is_null(in) && !is_null(out), "select: null data pointer");
  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(temp, 0, plan.offset(1) + CountTileState::bytes(num_tiles), stream));
  const CountTileState state{plan.get<unsigned long long>(temp, 1)};
  select_kernel<P, T, Partition><<<static_cast<unsigned>(num_tiles), P::block_threads, 0, stream>>>(
      in, out, reinterpret_cast<long long*>(num_selected), select, n, state,
      plan.get<unsigned long long>(temp, 0));
  KNN_PRIM_LAUNCH_CHECK();
  if constexpr (Partition) {
    const long long blocks = ceil_div<long long>(n / 2 + 1, 256);
    reverse_tail_kernel<<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(
        out, reinterpret_cast<const long long*>(num_selected), n);
    KNN_PRIM_LAUNCH_CHECK();
  }
  return {};
}

}  // namespace detail

template <typename InputIt, typename OutputIt, typename Pred>
Status select_if(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out,
                 std::int64_t* num_selected, std::int64_t n, Pred pred, cudaStream_t stream = 0) {
  return detail::select_dispatch<false>(temp, temp_bytes, in, out, num_selected, n,
                                        detail::PredicateSelector<Pred>{pred}, stream);
}

template <typename InputIt, typename FlagIt, typename OutputIt>
Status select_flagged(void* temp, std::size_t& temp_bytes, InputIt in, FlagIt flags, OutputIt out,
                      std::int64_t* num_selected, std::int64_t n, cudaStream_t stream = 0) {
  if (temp != nullptr && n > 0) KNN_PRIM_EXPECTS(!detail::is_null(flags), "select_flagged: null flags pointer");
  return detail::select_dispatch<false>(temp, temp_bytes, in, out, num_selected, n,
                                        detail::FlagSelector<FlagIt>{flags}, stream);
}

// out[0, *num_selected): items with pred true; out[*num_selected, n): the others; both in
// input order.
template <typename InputIt, typename OutputIt, typename Pred>
Status partition(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out,
                 std::int64_t* num_selected, std::int64_t n, Pred pred, cudaStream_t stream = 0) {
  if (temp != nullptr && n > 0) KNN_PRIM_EXPECTS(!detail::same_pointer(in, out), "partition: in and out must differ");
  return detail::select_dispatch<true>(temp, temp_bytes, in, out, num_selected, n,
                                       detail::PredicateSelector<Pred>{pred}, stream);
}

}  // namespace knn::prim
