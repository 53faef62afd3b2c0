#pragma once
// Stable segmented radix sort of keys or pairs, made for many small segments (for example one
// segment of candidate neighbours per query): one block per segment, segments of up to 4096
// keys sorted in shared memory. Longer segments are correct but each is sorted by a single
// block in passes over global memory: for a few huge segments use radix_sort_* instead.
//
// Segment s is [begin_offsets[s], end_offsets[s]) of arrays of num_items items (offsets in
// device memory); segments must not overlap; items outside every segment are not written.
// Key types, orders, NaN and -0.0 handling and bit ranges as in device_radix_sort.cuh.
// Outputs must not be the inputs. Temp-storage convention as in device_scan.cuh.
#include <cstddef>
#include <cstdint>

#include "../detail/load_store.cuh"
#include "../detail/segmented_sort_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../status.hpp"

namespace knn::prim {

namespace detail {

struct NoSegmentValue {};

template <typename K, typename V, bool HasValues, typename Segments>
Status segmented_sort_dispatch(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                               const V* values_in, V* values_out, std::int64_t num_items,
                               std::int64_t num_segments, Segments segments, bool descending,
                               int begin_bit, int end_bit, cudaStream_t stream) {
  using Bits = typename RadixTraits<K>::Bits;
  KNN_PRIM_EXPECTS(num_items >= 0 && num_segments >= 0, "segmented sort: negative size");
  KNN_PRIM_EXPECTS(num_segments < (1ll << 31), "segmented sort: at most 2^31 - 1 segments");
  KNN_PRIM_EXPECTS(0 <= begin_bit && begin_bit <= end_bit && end_bit <= static_cast<int>(8 * sizeof(K)),
                   "segmented sort: bit range must satisfy 0 <= begin_bit <= end_bit <= key bits");
  // Alternate buffers for segments too long for shared memory.
  const TempPlan<2> plan{{sizeof(K) * static_cast<std::size_t>(num_items),
                          HasValues ? sizeof(V) * static_cast<std::size_t>(num_items) : 0}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (num_items == 0 || num_segments == 0) return {};
  KNN_PRIM_EXPECTS(keys_in != nullptr && keys_out != nullptr, "segmented sort: null key pointer");
  KNN_PRIM_EXPECTS(!HasValues || (values_in != nullptr && values_out != nullptr),
                   "segmented sort: null value pointer");
  KNN_PRIM_EXPECTS(keys_in != keys_out && (!HasValues || values_in != values_out),
                   "segmented sort: output must not be the input (sort into another array)");
  const DigitOf<K> digit_of{descending ? static_cast<Bits>(~Bits{0}) : Bits{0},
                            SortDigits{begin_bit, end_bit}};
  constexpr int BT = SegmentedSortPolicy::block_threads;
  const unsigned grid = static_cast<unsigned>(num_segments);
  if (begin_bit < end_bit) {
    segmented_sort_shared_kernel<SegmentedSortPolicy::small_items_per_thread, K, V, HasValues>
        <<<grid, BT, 0, stream>>>(keys_in, keys_out, values_in, values_out, segments, digit_of, 0);
    KNN_PRIM_LAUNCH_CHECK();
    segmented_sort_shared_kernel<SegmentedSortPolicy::items_per_thread, K, V, HasValues>
        <<<grid, BT, 0, stream>>>(keys_in, keys_out, values_in, values_out, segments, digit_of,
                                  SegmentedSortPolicy::small_items);
    KNN_PRIM_LAUNCH_CHECK();
  }
  // Long segments (every segment when the bit range is empty: that is a copy).
  segmented_sort_global_kernel<K, V, HasValues><<<grid, BT, 0, stream>>>(
      keys_in, keys_out, values_in, values_out, plan.get<K>(temp, 0), plan.get<V>(temp, 1), segments,
      digit_of, begin_bit < end_bit ? SegmentedSortPolicy::tile_items : 0);
  KNN_PRIM_LAUNCH_CHECK();
  return {};
}

template <typename K, typename V, bool HasValues, typename BeginIt, typename EndIt>
Status segmented_sort_offsets(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                              const V* values_in, V* values_out, std::int64_t num_items,
                              std::int64_t num_segments, BeginIt begins, EndIt ends, bool descending,
                              int begin_bit, int end_bit, cudaStream_t stream) {
  if (temp != nullptr && num_segments > 0)
    KNN_PRIM_EXPECTS(!is_null(begins) && !is_null(ends), "segmented sort: null offsets pointer");
  return segmented_sort_dispatch<K, V, HasValues>(
      temp, temp_bytes, keys_in, keys_out, values_in, values_out, num_items, num_segments,
      OffsetSegments<BeginIt, EndIt>{begins, ends}, descending, begin_bit, end_bit, stream);
}

}  // namespace detail

template <typename K, typename BeginIt, typename EndIt>
Status segmented_sort_keys(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                           std::int64_t num_items, std::int64_t num_segments, BeginIt begin_offsets,
                           EndIt end_offsets, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                           cudaStream_t stream = 0) {
  using NV = detail::NoSegmentValue;
  return detail::segmented_sort_offsets<K, NV, false>(temp, temp_bytes, keys_in, keys_out,
                                                      static_cast<const NV*>(nullptr), static_cast<NV*>(nullptr),
                                                      num_items, num_segments, begin_offsets,
                                                      end_offsets, false, begin_bit, end_bit, stream);
}

template <typename K, typename BeginIt, typename EndIt>
Status segmented_sort_keys_descending(void* temp, std::size_t& temp_bytes, const K* keys_in,
                                      K* keys_out, std::int64_t num_items, std::int64_t num_segments,
                                      BeginIt begin_offsets, EndIt end_offsets, int begin_bit = 0,
                                      int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  using NV = detail::NoSegmentValue;
  return detail::segmented_sort_offsets<K, NV, false>(temp, temp_bytes, keys_in, keys_out,
                                                      static_cast<const NV*>(nullptr), static_cast<NV*>(nullptr),
                                                      num_items, num_segments, begin_offsets,
                                                      end_offsets, true, begin_bit, end_bit, stream);
}

template <typename K, typename V, typename BeginIt, typename EndIt>
Status segmented_sort_pairs(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                            const V* values_in, V* values_out, std::int64_t num_items,
                            std::int64_t num_segments, BeginIt begin_offsets, EndIt end_offsets,
                            int begin_bit = 0, int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  return detail::segmented_sort_offsets<K, V, true>(temp, temp_bytes, keys_in, keys_out, values_in,
                                                    values_out, num_items, num_segments, begin_offsets,
                                                    end_offsets, false, begin_bit, end_bit, stream);
}

template <typename K, typename V, typename BeginIt, typename EndIt>
Status segmented_sort_pairs_descending(void* temp, std::size_t& temp_bytes, const K* keys_in,
                                       K* keys_out, const V* values_in, V* values_out,
                                       std::int64_t num_items, std::int64_t num_segments,
                                       BeginIt begin_offsets, EndIt end_offsets, int begin_bit = 0,
                                       int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  return detail::segmented_sort_offsets<K, V, true>(temp, temp_bytes, keys_in, keys_out, values_in,
                                                    values_out, num_items, num_segments, begin_offsets,
                                                    end_offsets, true, begin_bit, end_bit, stream);
}

}  // namespace knn::prim
