#pragma once
// Device-wide LSD radix sort, onesweep style (Adinets & Merrill, 2022): one kernel computes the
// digit histograms of all passes, then each pass is a single kernel that ranks a tile in shared
// memory, finds the tile's place among earlier tiles per digit by decoupled look-back, and
// scatters straight to the output. Stable: ties keep tile order, and tiles are processed in
// order of their position through the look-back chain.
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "block_radix_rank.cuh"
#include "radix_traits.hpp"

// Kernels that need no template parameter still are templates (template <int Unused = 0>):
// a header-only library is included by many translation units of one program, and only
// templates (and inline functions) may be defined in each of them.
namespace knn::prim::detail {

// The onesweep pass's shape. ItemsPerThread: keys per thread of a tile. MinBlocks: resident
// blocks per SM the compiler must allow (caps registers). EarlyCounts: a tile publishes its
// digit counts from a shared-memory histogram before ranking, so that the tiles after it can
// finish their look-back sooner. PauseNs: __nanosleep while a predecessor has published nothing.
template <int ItemsPerThread, int MinBlocks = 1, bool EarlyCounts = false, int PauseNs = 0>
struct OnesweepTuning {
  static constexpr int block_threads = radix_bins;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks = MinBlocks;
  static constexpr bool early_counts = EarlyCounts;
  static constexpr int pause_ns = PauseNs;
  static constexpr int tile_items = block_threads * items_per_thread;
  // Keys per onesweep launch: per-digit look-back counts stay below 2^30 (packed with a 2-bit
  // status in 32 bits) and the look-back buffer stays bounded whatever n is.
  static constexpr long long portion_items = 1ll << 28;
  static constexpr int histogram_blocks = 1024;
};

template <typename K>
using RadixSortPolicy = OnesweepTuning<16>;

constexpr unsigned lookback_aggregate = 1u << 30;
constexpr unsigned lookback_inclusive = 2u << 30;
constexpr unsigned lookback_count_mask = (1u << 30) - 1;

// Per-pass digit histograms of all keys, into counts[pass][256] (zeroed by the caller).
template <typename K>
__global__ void __launch_bounds__(radix_bins)
radix_histogram_kernel(const K* keys, long long n, int begin_bit, int end_bit, int passes,
                       typename RadixTraits<K>::Bits flip, unsigned long long* counts) {
  using Bits = typename RadixTraits<K>::Bits;
  __shared__ unsigned hist[8 * sizeof(K) / radix_bits][radix_bins];
  for (int i = threadIdx.x; i < passes * radix_bins; i += blockDim.x) (&hist[0][0])[i] = 0;
  __syncthreads();
  // `unroll` keys per thread are loaded before any is counted, so loads stay in flight.
  constexpr int unroll = 4;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; base < n;
       base += unroll * stride) {
    K key[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u)
      if (base + u * stride < n) key[u] = keys[base + u * stride];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      if (base + u * stride >= n) break;
      const Bits bits = RadixTraits<K>::to_ordered(key[u]) ^ flip;
      for (int p = 0; p < passes; ++p) {
        const int shift = begin_bit + p * radix_bits;
        const int width = end_bit - shift < radix_bits ? end_bit - shift : radix_bits;
        atomicAdd(&hist[p][radix_digit(bits, shift, width)], 1u);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < passes * radix_bins; i += blockDim.x) {
    const unsigned c = (&hist[0][0])[i];
    if (c) atomicAdd(counts + i, static_cast<unsigned long long>(c));
  }
}

// bins[p * stride + d] = number of keys whose pass-p digit is below d (block p).
template <int Unused = 0>
__global__ void __launch_bounds__(radix_bins)
radix_exclusive_bins_kernel(const unsigned long long* counts, unsigned long long* bins,
                            long long stride) {
  using Scan = BlockScan<unsigned long long, radix_bins, 1>;
  __shared__ typename Scan::TempStorage temp;
  unsigned long long c[1] = {counts[blockIdx.x * radix_bins + threadIdx.x]}, start[1];
  Scan(temp).exclusive_scan(c, start, 0ull, Sum{});
  bins[blockIdx.x * stride + threadIdx.x] = start[0];
}

struct OnesweepPass {
  long long portion_begin;  // first key of this launch
  long long portion_items;  // keys in this launch
  int shift, width;         // digit bits
  const unsigned long long* bins_in;  // [256] where each digit's keys of this portion start
  unsigned long long* bins_out;       // [256] same for the next portion
  unsigned* lookback;                 // [tiles][256], zeroed
  unsigned* tile_counter;             // zeroed
};

template <typename K, typename V, bool HasValues, typename Policy = RadixSortPolicy<K>>
__global__ void __launch_bounds__(radix_bins, Policy::min_blocks)
onesweep_kernel(const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                typename RadixTraits<K>::Bits flip, OnesweepPass pass) {
  using Bits = typename RadixTraits<K>::Bits;
  constexpr int IPT = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  using Rank = BlockRadixRank<IPT>;
  struct KeyTile { K keys[tile_items]; };
  struct ValueTile { V values[HasValues ? tile_items : 1]; };
  __shared__ union {
    typename Rank::TempStorage rank;
    KeyTile keys;
    ValueTile values;
  } smem;
  __shared__ unsigned long long global_base[radix_bins];
  __shared__ unsigned early_hist[Policy::early_counts ? radix_bins : 1];
  __shared__ int tile_shared;

  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) tile_shared = static_cast<int>(atomicAdd(pass.tile_counter, 1u));
  __syncthreads();
  const int tile = tile_shared;
  const long long tile_begin = static_cast<long long>(tile) * tile_items;
  const long long remaining = pass.portion_items - tile_begin;
  const int num_valid = remaining < tile_items ? static_cast<int>(remaining) : tile_items;
  const K* tile_keys = keys_in + pass.portion_begin + tile_begin;

  K keys[IPT];
  V values[HasValues ? IPT : 1];
  unsigned digits[IPT];
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    const int idx = Rank::striped_index(j);
    if (idx < num_valid) {
      keys[j] = tile_keys[idx];
      if constexpr (HasValues) values[j] = values_in[pass.portion_begin + tile_begin + idx];
      digits[j] = radix_digit(RadixTraits<K>::to_ordered(keys[j]) ^ flip, pass.shift, pass.width);
    } else {
      digits[j] = radix_bins - 1;  // past the end: ranks last, never written
    }
  }

  // Thread t: digit t. Publish this tile's count (before ranking with early counts), then add
  // up the tiles before it.
  unsigned* my_slot = pass.lookback + static_cast<long long>(tile) * radix_bins + t;
  auto publish = [&](unsigned count) {
    *reinterpret_cast<volatile unsigned*>(my_slot) = (tile == 0 ? lookback_inclusive : lookback_aggregate) | count;
  };
  if constexpr (Policy::early_counts) {
    early_hist[t] = 0u;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; ++j)
      if (Rank::striped_index(j) < num_valid) atomicAdd(&early_hist[digits[j]], 1u);
    __syncthreads();
    publish(early_hist[t]);
  }

  int ranks[IPT];
  unsigned count, start;
  Rank::rank(smem.rank, digits, ranks, count, start);
  if constexpr (!Policy::early_counts) publish(count);

  unsigned long long before = 0;
  if (tile != 0) {
    for (int p = tile - 1; p >= 0; --p) {
      const volatile unsigned* slot = pass.lookback + static_cast<long long>(p) * radix_bins + t;
      unsigned word;
      while (((word = *slot) & ~lookback_count_mask) == 0)
        if constexpr (Policy::pause_ns > 0) __nanosleep(Policy::pause_ns);
      before += word & lookback_count_mask;
      if (word & lookback_inclusive) break;
    }
    *reinterpret_cast<volatile unsigned*>(my_slot) =
        lookback_inclusive | static_cast<unsigned>(before + count);
  }
  const unsigned long long digit_base = pass.bins_in[t] + before;
  global_base[t] = digit_base - start;  // + position in sorted tile = output index (mod 2^64)
  if (tile_begin + tile_items >= pass.portion_items) pass.bins_out[t] = digit_base + count;

  // Scatter through shared memory so that writes of one digit are contiguous.
#pragma unroll
  for (int j = 0; j < IPT; ++j) smem.keys.keys[ranks[j]] = keys[j];
  __syncthreads();
  unsigned sorted_digits[IPT];
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    const int i = j * radix_bins + t;
    if (i < num_valid) {
      const K key = smem.keys.keys[i];
      sorted_digits[j] = radix_digit(RadixTraits<K>::to_ordered(key) ^ flip, pass.shift, pass.width);
      keys_out[global_base[sorted_digits[j]] + i] = key;
    }
  }
  if constexpr (HasValues) {
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; ++j) smem.values.values[ranks[j]] = values[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      const int i = j * radix_bins + t;
      if (i < num_valid) values_out[global_base[sorted_digits[j]] + i] = smem.values.values[i];
    }
  }
}

}  // namespace knn::prim::detail
