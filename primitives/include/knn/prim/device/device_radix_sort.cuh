#pragma once
// Device-wide stable LSD radix sort of keys or key-value pairs.
//
// Keys: 32/64-bit unsigned, signed and floating. Order: ascending, or descending (the reverse
// order, still stable: equal keys keep their input order). Floats: -0.0 and +0.0 are equal;
// NaN (any sign or payload) sorts after +inf ascending and before it descending. Only the bits
// [begin_bit, end_bit) of the order-preserving unsigned form of the key are compared (for
// unsigned keys that is the key itself; floats and signed keys are mapped as described in
// detail/radix_traits.hpp).
//
// keys_in and values_in are not modified; keys_out/values_out must not overlap them.
// Temp-storage convention as in device_scan.cuh (temp holds one extra copy of keys and values).
#include <cstddef>
#include <cstdint>

#include "../detail/load_store.cuh"
#include "../detail/radix_sort_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../status.hpp"

namespace knn::prim {

namespace detail {

template <typename K, typename V, bool HasValues, typename Policy = RadixSortPolicy<K, V, HasValues>>
Status radix_sort_dispatch(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                           const V* values_in, V* values_out, std::int64_t n, bool descending,
                           int begin_bit, int end_bit, cudaStream_t stream) {
  using Bits = typename RadixTraits<K>::Bits;
  constexpr int key_bits = 8 * sizeof(K);
  KNN_PRIM_EXPECTS(n >= 0, "radix sort: negative number of items");
  KNN_PRIM_EXPECTS(0 <= begin_bit && begin_bit <= end_bit && end_bit <= key_bits,
                   "radix sort: bit range must satisfy 0 <= begin_bit <= end_bit <= key bits");
  const int passes = (end_bit - begin_bit + radix_bits - 1) / radix_bits;
  const long long portions = n ? ceil_div<long long>(n, Policy::portion_items) : 0;
  const long long portion_max = n < Policy::portion_items ? n : Policy::portion_items;
  const long long tiles_max = ceil_div<long long>(portion_max, Policy::tile_items);
  const std::size_t lookback_bytes = sizeof(unsigned) * (static_cast<std::size_t>(tiles_max) * radix_bins + 1);
  const std::size_t alt = passes >= 2 ? static_cast<std::size_t>(n) : 0;
  const TempPlan<5> plan{{alt * sizeof(K), HasValues ? alt * sizeof(V) : 0,
                          sizeof(unsigned long long) * radix_bins * passes,
                          sizeof(unsigned long long) * radix_bins * passes * (portions + 1),
                          lookback_bytes}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (n == 0) return {};
  KNN_PRIM_EXPECTS(keys_in != nullptr && keys_out != nullptr, "radix sort: null key pointer");
  KNN_PRIM_EXPECTS(!HasValues || (values_in != nullptr && values_out != nullptr),
                   "radix sort: null value pointer");
  KNN_PRIM_EXPECTS(keys_in != keys_out && (!HasValues || values_in != values_out),
                   "radix sort: output must not be the input (sort into another array)");
  if (passes == 0) {
    KNN_PRIM_CUDA_TRY(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    if (HasValues)
      KNN_PRIM_CUDA_TRY(cudaMemcpyAsync(values_out, values_in, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
    return {};
  }
  K* keys_alt = plan.get<K>(temp, 0);
  V* values_alt = plan.get<V>(temp, 1);
  auto* counts = plan.get<unsigned long long>(temp, 2);
  auto* bins = plan.get<unsigned long long>(temp, 3);
  auto* lookback = plan.get<unsigned>(temp, 4);
  const Bits flip = descending ? static_cast<Bits>(~Bits{0}) : Bits{0};
  const long long bins_stride = radix_bins * (portions + 1);  // per pass: [portion][digit]

  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(counts, 0, sizeof(unsigned long long) * radix_bins * passes, stream));
  const long long hist_blocks = ceil_div<long long>(n, radix_bins * 16);
  radix_histogram_kernel<K><<<static_cast<unsigned>(hist_blocks < Policy::histogram_blocks ? hist_blocks : Policy::histogram_blocks),
                              radix_bins, 0, stream>>>(keys_in, n, begin_bit, end_bit, passes, flip, counts);
  KNN_PRIM_LAUNCH_CHECK();
  radix_exclusive_bins_kernel<<<passes, radix_bins, 0, stream>>>(counts, bins, bins_stride);
  KNN_PRIM_LAUNCH_CHECK();

  const K* src_keys = keys_in;
  const V* src_values = values_in;
  for (int p = 0; p < passes; ++p) {
    // The last pass lands in keys_out; earlier ones alternate so that this works out.
    const bool to_out = (passes - 1 - p) % 2 == 0;
    K* dst_keys = to_out ? keys_out : keys_alt;
    V* dst_values = to_out ? values_out : values_alt;
    const int shift = begin_bit + p * radix_bits;
    const int width = end_bit - shift < radix_bits ? end_bit - shift : radix_bits;
    for (long long q = 0; q < portions; ++q) {
      const long long begin = q * Policy::portion_items;
      const long long items = n - begin < Policy::portion_items ? n - begin : Policy::portion_items;
      const long long tiles = ceil_div<long long>(items, Policy::tile_items);
      KNN_PRIM_CUDA_TRY(cudaMemsetAsync(lookback, 0, sizeof(unsigned) * (tiles * radix_bins + 1), stream));
      OnesweepPass pass{begin, items, shift, width,
                        bins + p * bins_stride + q * radix_bins,
                        bins + p * bins_stride + (q + 1) * radix_bins,
                        lookback + 1, lookback};
      onesweep_kernel<K, V, HasValues, Policy><<<static_cast<unsigned>(tiles), Policy::block_threads, 0, stream>>>(
          src_keys, dst_keys, src_values, dst_values, flip, pass);
      KNN_PRIM_LAUNCH_CHECK();
    }
    src_keys = dst_keys;
    src_values = dst_values;
  }
  return {};
}

}  // namespace detail

template <typename K>
Status radix_sort_keys(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                       std::int64_t n, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                       cudaStream_t stream = 0) {
  return detail::radix_sort_dispatch<K, detail::NoValue, false>(
      temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, false, begin_bit, end_bit, stream);
}

template <typename K>
Status radix_sort_keys_descending(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                  std::int64_t n, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                                  cudaStream_t stream = 0) {
  return detail::radix_sort_dispatch<K, detail::NoValue, false>(
      temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, true, begin_bit, end_bit, stream);
}

template <typename K, typename V>
Status radix_sort_pairs(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                        const V* values_in, V* values_out, std::int64_t n, int begin_bit = 0,
                        int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  return detail::radix_sort_dispatch<K, V, true>(temp, temp_bytes, keys_in, keys_out, values_in,
                                                 values_out, n, false, begin_bit, end_bit, stream);
}

template <typename K, typename V>
Status radix_sort_pairs_descending(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                   const V* values_in, V* values_out, std::int64_t n,
                                   int begin_bit = 0, int end_bit = 8 * sizeof(K),
                                   cudaStream_t stream = 0) {
  return detail::radix_sort_dispatch<K, V, true>(temp, temp_bytes, keys_in, keys_out, values_in,
                                                 values_out, n, true, begin_bit, end_bit, stream);
}

}  // namespace knn::prim
