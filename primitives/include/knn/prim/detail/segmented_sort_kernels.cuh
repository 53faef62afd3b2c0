#pragma once
// Segmented radix sort, one block per segment. A segment of up to 4096 keys is sorted entirely
// in shared memory (each pass: rank by digit, scatter to shared memory, read back). A longer
// segment is sorted by the same block in passes over global memory: digit histogram of the
// segment, then tile after tile ranked and scattered behind the running per-digit offsets.
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "block_radix_rank.cuh"
#include "radix_traits.hpp"

namespace knn::prim::detail {

struct SegmentedSortPolicy {
  static constexpr int block_threads = radix_bins;
  // Segments are sorted by the kernel of their size class (each launch skips the others):
  // up to small_items keys with few registers and little shared memory, so that many blocks
  // share an SM; up to tile_items keys in shared memory; longer ones in global memory.
  static constexpr int small_items_per_thread = 4;
  static constexpr int small_items = block_threads * small_items_per_thread;
  static constexpr int items_per_thread = 16;
  static constexpr int tile_items = block_threads * items_per_thread;
};

// Segment s = [begin(s), end(s)).
template <typename BeginIt, typename EndIt>
struct OffsetSegments {
  BeginIt begins;
  EndIt ends;
  __device__ long long begin(long long s) const { return static_cast<long long>(begins[s]); }
  __device__ long long end(long long s) const { return static_cast<long long>(ends[s]); }
};

struct SortDigits {
  int begin_bit, end_bit;
  KNN_PRIM_DEVICE int passes() const { return (end_bit - begin_bit + radix_bits - 1) / radix_bits; }
  KNN_PRIM_DEVICE int shift(int p) const { return begin_bit + p * radix_bits; }
  KNN_PRIM_DEVICE int width(int p) const {
    return end_bit - shift(p) < radix_bits ? end_bit - shift(p) : radix_bits;
  }
};

template <typename K, typename V, bool HasValues, int IPT>
struct SegmentedSortShared {
  static constexpr int tile = SegmentedSortPolicy::block_threads * IPT;
  static constexpr int item_bytes = sizeof(K) > sizeof(V) || !HasValues ? sizeof(K) : sizeof(V);
  using Rank = BlockRadixRank<IPT>;
  union {
    typename Rank::TempStorage rank;
    alignas(16) unsigned char exchange[tile * item_bytes];
  };
};

// Puts the items through shared memory at `ranks` and reads them back in warp-striped order.
template <typename T, int IPT>
__device__ void exchange_by_rank(T* buffer, T (&items)[IPT], const int (&ranks)[IPT], int active) {
#pragma unroll
  for (int j = 0; j < IPT; ++j)
    if (j < active) buffer[ranks[j]] = items[j];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < IPT; ++j)
    if (j < active) items[j] = buffer[BlockRadixRank<IPT>::striped_index(j, active)];
  __syncthreads();
}

template <typename K>
struct DigitOf {
  typename RadixTraits<K>::Bits flip;
  SortDigits bits;
  KNN_PRIM_DEVICE unsigned operator()(const K& key, int p) const {
    return radix_digit(RadixTraits<K>::to_ordered(key) ^ flip, bits.shift(p), bits.width(p));
  }
};

// Segments with min_len < length <= BT * IPT, sorted in shared memory.
template <int IPT, typename K, typename V, bool HasValues, typename Segments>
__global__ void __launch_bounds__(SegmentedSortPolicy::block_threads)
segmented_sort_shared_kernel(const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                             Segments segments, DigitOf<K> digit_of, long long min_len) {
  constexpr int BT = SegmentedSortPolicy::block_threads;
  using Rank = BlockRadixRank<IPT>;
  __shared__ SegmentedSortShared<K, V, HasValues, IPT> smem;
  K* key_buffer = reinterpret_cast<K*>(smem.exchange);
  V* value_buffer = reinterpret_cast<V*>(smem.exchange);

  const long long seg_begin = segments.begin(blockIdx.x);
  const long long len = segments.end(blockIdx.x) - seg_begin;
  if (len <= min_len || len > BT * IPT) return;
  const int n = static_cast<int>(len);
  const int active = (n + BT - 1) / BT;  // items per thread in use
  const int passes = digit_of.bits.passes();

  K keys[IPT];
  V values[HasValues ? IPT : 1];
  unsigned digits[IPT];
  int ranks[IPT];
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    const int idx = Rank::striped_index(j, active);
    if (j < active && idx < n) {
      keys[j] = keys_in[seg_begin + idx];
      if constexpr (HasValues) values[j] = values_in[seg_begin + idx];
    }
  }
  for (int p = 0; p < passes; ++p) {
#pragma unroll
    for (int j = 0; j < IPT; ++j)
      if (j < active) digits[j] = Rank::striped_index(j, active) < n ? digit_of(keys[j], p) : radix_bins - 1;
    unsigned count, start;
    Rank::rank(smem.rank, digits, ranks, count, start, active);
    exchange_by_rank(key_buffer, keys, ranks, active);
    if constexpr (HasValues) exchange_by_rank(value_buffer, values, ranks, active);
  }
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    const int idx = Rank::striped_index(j, active);
    if (j < active && idx < n) {
      keys_out[seg_begin + idx] = keys[j];
      if constexpr (HasValues) values_out[seg_begin + idx] = values[j];
    }
  }
}

// Segments longer than min_len, sorted by their block in passes over global memory,
// ping-ponging with the alternate buffers so that the last pass lands in the output.
template <typename K, typename V, bool HasValues, typename Segments>
__global__ void __launch_bounds__(SegmentedSortPolicy::block_threads)
segmented_sort_global_kernel(const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                             K* keys_alt, V* values_alt, Segments segments, DigitOf<K> digit_of,
                             long long min_len) {
  constexpr int IPT = SegmentedSortPolicy::items_per_thread;
  constexpr int BT = SegmentedSortPolicy::block_threads;
  constexpr int tile_items = BT * IPT;
  using Rank = BlockRadixRank<IPT>;
  __shared__ SegmentedSortShared<K, V, HasValues, IPT> smem;
  __shared__ unsigned long long digit_offset[radix_bins];  // where each digit goes next
  __shared__ unsigned tile_digit_start[radix_bins];
  __shared__ unsigned histogram[radix_bins];
  K* key_buffer = reinterpret_cast<K*>(smem.exchange);
  V* value_buffer = reinterpret_cast<V*>(smem.exchange);

  const long long seg_begin = segments.begin(blockIdx.x);
  const long long len = segments.end(blockIdx.x) - seg_begin;
  if (len <= min_len) return;
  const int t = static_cast<int>(threadIdx.x);
  const int passes = digit_of.bits.passes();
  if (passes == 0) {  // empty bit range: a copy
    for (long long i = t; i < len; i += BT) {
      keys_out[seg_begin + i] = keys_in[seg_begin + i];
      if constexpr (HasValues) values_out[seg_begin + i] = values_in[seg_begin + i];
    }
    return;
  }

  K keys[IPT];
  V values[HasValues ? IPT : 1];
  unsigned digits[IPT];
  int ranks[IPT];
  const K* src_keys = keys_in + seg_begin;
  const V* src_values = values_in + seg_begin;
  for (int p = 0; p < passes; ++p) {
    const bool to_out = (passes - 1 - p) % 2 == 0;
    K* dst_keys = (to_out ? keys_out : keys_alt) + seg_begin;
    V* dst_values = (to_out ? values_out : values_alt) + seg_begin;

    histogram[t] = 0;
    __syncthreads();
    for (long long i = t; i < len; i += BT) atomicAdd(&histogram[digit_of(src_keys[i], p)], 1u);
    __syncthreads();
    {
      using Scan = BlockScan<unsigned long long, BT, 1>;
      // The rank storage is idle here; reuse its bytes for the scan.
      auto& scan_temp = *reinterpret_cast<typename Scan::TempStorage*>(smem.exchange);
      unsigned long long c[1] = {histogram[t]}, start[1];
      Scan(scan_temp).exclusive_scan(c, start, 0ull, Sum{});
      digit_offset[t] = start[0];
      __syncthreads();
    }
    for (long long tile_begin = 0; tile_begin < len; tile_begin += tile_items) {
      const long long left = len - tile_begin;
      const int num_valid = left < tile_items ? static_cast<int>(left) : tile_items;
#pragma unroll
      for (int j = 0; j < IPT; ++j) {
        const int idx = Rank::striped_index(j);
        if (idx < num_valid) {
          keys[j] = src_keys[tile_begin + idx];
          if constexpr (HasValues) values[j] = src_values[tile_begin + idx];
          digits[j] = digit_of(keys[j], p);
        } else {
          digits[j] = radix_bins - 1;
        }
      }
      unsigned count, start;
      Rank::rank(smem.rank, digits, ranks, count, start);
      tile_digit_start[t] = start;
#pragma unroll
      for (int j = 0; j < IPT; ++j) key_buffer[ranks[j]] = keys[j];
      __syncthreads();
      unsigned sorted_digit[IPT];
#pragma unroll
      for (int j = 0; j < IPT; ++j) {
        const int i = j * BT + t;
        if (i < num_valid) {
          const K key = key_buffer[i];
          sorted_digit[j] = digit_of(key, p);
          dst_keys[digit_offset[sorted_digit[j]] + (i - tile_digit_start[sorted_digit[j]])] = key;
        }
      }
      if constexpr (HasValues) {
        __syncthreads();
#pragma unroll
        for (int j = 0; j < IPT; ++j) value_buffer[ranks[j]] = values[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
          const int i = j * BT + t;
          if (i < num_valid)
            dst_values[digit_offset[sorted_digit[j]] + (i - tile_digit_start[sorted_digit[j]])] =
                value_buffer[i];
        }
      }
      __syncthreads();
      digit_offset[t] += count;
      __syncthreads();
    }
    src_keys = dst_keys;
    src_values = dst_values;
  }
}

}  // namespace knn::prim::detail
