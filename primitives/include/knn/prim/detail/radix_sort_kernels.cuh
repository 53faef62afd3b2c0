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

// The onesweep pass's shape. BlockThreads (>= 256: threads below 256 own a digit each) x
// ItemsPerThread keys make a tile. MinBlocks: resident blocks per SM the compiler must allow
// (caps registers). PauseNs: __nanosleep while a predecessor tile has published nothing.
template <int BlockThreads, int ItemsPerThread, int MinBlocks = 1, int PauseNs = 0>
struct OnesweepTuning {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int pause_ns = PauseNs;
  static constexpr int tile_items = block_threads * items_per_thread;
  // Keys per onesweep launch, whole tiles: per-digit look-back counts stay below 2^30 (packed
  // with a 2-bit status in 32 bits) and the look-back buffer stays bounded whatever n is.
  static constexpr long long portion_items = ((1ll << 28) / tile_items) * tile_items;
  static constexpr int histogram_blocks = 1024;
};

struct NoValue {};

// Tiles of 384 threads: two blocks fill an SM's registers at up to 80 per thread, and a tile of
// 7,680 4-byte keys halves the tiles (and their look-back steps) of a 256 x 16 tile. 8-byte keys
// or values keep fewer per thread: the exchange buffer must fit in 48 KiB of static shared
// memory. (H200, 2^28 u32 keys: 384 x 20 0.99x CUB's time, 384 x 16 1.10x, 256 x 24 1.12x;
// f32 -> u32 pairs: 384 x 20 1.10-1.12x, 384 x 16 1.20-1.25x, 384 x 22 1.10-1.11x.)
template <typename K, typename V = NoValue, bool HasValues = false>
using RadixSortPolicy =
    OnesweepTuning<384, sizeof(K) == 4 ? (HasValues ? (sizeof(V) == 4 ? 20 : 12) : 20) : (HasValues ? 8 : 12), 2>;

constexpr unsigned lookback_aggregate = 1u << 30;
constexpr unsigned lookback_inclusive = 2u << 30;
constexpr unsigned lookback_count_mask = (1u << 30) - 1;

// Per-pass digit histograms of all keys, into counts[pass][256] (zeroed by the caller). The
// keys are read once, as 16-byte vectors from the first 16-byte boundary on, four vectors per
// thread in flight (with one 4-byte key at a time in flight the pass ran at a third of the
// copy rate); the few keys before that boundary and after the last whole vector are read one
// by one.
template <typename K>
__global__ void __launch_bounds__(radix_bins)
radix_histogram_kernel(const K* keys, long long n, int begin_bit, int end_bit, int passes,
                       typename RadixTraits<K>::Bits flip, unsigned long long* counts) {
  using Bits = typename RadixTraits<K>::Bits;
  constexpr int max_passes = 8 * sizeof(K) / radix_bits;
  constexpr int per_vector = 16 / sizeof(K);
  constexpr int vectors = 4;
  __shared__ unsigned hist[max_passes][radix_bins];
  for (int i = threadIdx.x; i < max_passes * radix_bins; i += blockDim.x) (&hist[0][0])[i] = 0;
  __syncthreads();
  auto count = [&](K key) {
    const Bits bits = RadixTraits<K>::to_ordered(key) ^ flip;
#pragma unroll
    for (int p = 0; p < max_passes; ++p) {
      if (p < passes) {
        const int shift = begin_bit + p * radix_bits;
        const int width = end_bit - shift < radix_bits ? end_bit - shift : radix_bits;
        atomicAdd(&hist[p][radix_digit(bits, shift, width)], 1u);
      }
    }
  };
  const long long thread = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const auto misalign = static_cast<long long>(reinterpret_cast<unsigned long long>(keys) % 16);
  const long long head = n < (16 - misalign) % 16 / static_cast<long long>(sizeof(K)) ? n : (16 - misalign) % 16 / static_cast<long long>(sizeof(K));
  const long long body = (n - head) / per_vector;  // whole vectors
  const long long tail = head + body * per_vector;
  const uint4* vec = reinterpret_cast<const uint4*>(keys + head);
  for (long long v0 = thread; v0 < body; v0 += vectors * stride) {
    uint4 buf[vectors];
#pragma unroll
    for (int u = 0; u < vectors; ++u)
      if (v0 + u * stride < body) buf[u] = vec[v0 + u * stride];
#pragma unroll
    for (int u = 0; u < vectors; ++u) {
      if (v0 + u * stride >= body) break;
      K k[per_vector];
      memcpy(k, &buf[u], sizeof buf[u]);
#pragma unroll
      for (int e = 0; e < per_vector; ++e) count(k[e]);
    }
  }
  if (thread < head) count(keys[thread]);
  if (thread < n - tail) count(keys[tail + thread]);
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

template <typename K, typename V, bool HasValues, typename Policy>
struct OnesweepStorage {
  using Rank = BlockRadixRankCounts<Policy::block_threads, Policy::items_per_thread>;
  union {
    typename Rank::TempStorage rank;
    K keys[Policy::tile_items];
    V values[HasValues ? Policy::tile_items : 1];
  };
  // Output index of a key = scatter_base[digit] + its position in the sorted tile (mod 2^64).
  unsigned long long scatter_base[radix_bins];
  int tile;
};

// One tile of a onesweep pass. Full: the tile holds tile_items keys (all but a portion's last
// tile), so no item needs a bounds check.
template <typename K, typename V, bool HasValues, typename Policy, bool Full>
__device__ __forceinline__ void onesweep_tile(OnesweepStorage<K, V, HasValues, Policy>& smem, const K* keys_in, K* keys_out,
                                              const V* values_in, V* values_out, typename RadixTraits<K>::Bits flip,
                                              const OnesweepPass& pass, int tile, int num_valid) {
  constexpr int IPT = Policy::items_per_thread;
  constexpr int block_threads = Policy::block_threads;
  constexpr int tile_items = Policy::tile_items;
  using Rank = typename OnesweepStorage<K, V, HasValues, Policy>::Rank;
  const int t = static_cast<int>(threadIdx.x);
  const long long tile_begin = static_cast<long long>(tile) * tile_items;
  const K* tile_keys = keys_in + pass.portion_begin + tile_begin;
  auto digit_of = [&](K key) {
    return radix_digit(RadixTraits<K>::to_ordered(key) ^ flip, pass.shift, pass.width);
  };
  auto valid = [&](int position) { return Full || position < num_valid; };

  K keys[IPT];
#pragma unroll
  for (int j = 0; j < IPT; ++j)
    if (valid(Rank::striped_index(j))) keys[j] = tile_keys[Rank::striped_index(j)];

  // Thread t < 256 owns digit t: the tile's count is published before ranking, so that the
  // tiles after it find it in their look-back while this one still ranks.
  unsigned* my_slot = pass.lookback + static_cast<long long>(tile) * radix_bins + (t < radix_bins ? t : 0);
  int ranks[IPT];
  unsigned count = 0, start = 0;
  // Digits are recomputed from the keys where needed: an array of them would stay live across
  // the ranking and cost IPT registers.
  Rank::template rank<Full>(smem.rank, keys, [&](const K& key) { return digit_of(key); }, num_valid, ranks, count, start,
                            [&](unsigned c) {
    *reinterpret_cast<volatile unsigned*>(my_slot) = (tile == 0 ? lookback_inclusive : lookback_aggregate) | c;
  });

  // The keys in tile order by digit, staged for the scatter while the look-back waits.
#pragma unroll
  for (int j = 0; j < IPT; ++j)
    if (valid(Rank::striped_index(j))) smem.keys[ranks[j]] = keys[j];

  if (t < radix_bins) {
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
      *reinterpret_cast<volatile unsigned*>(my_slot) = lookback_inclusive | static_cast<unsigned>(before + count);
    }
    const unsigned long long digit_base = pass.bins_in[t] + before;
    smem.scatter_base[t] = digit_base - start;
    if (tile_begin + tile_items >= pass.portion_items) pass.bins_out[t] = digit_base + count;
  }
  __syncthreads();

  // Consecutive threads take consecutive sorted keys: a digit's keys go out as one run.
  unsigned sorted_digits[HasValues ? IPT : 1];
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    const int i = j * block_threads + t;
    if (valid(i)) {
      const K key = smem.keys[i];
      const unsigned d = digit_of(key);
      if constexpr (HasValues) sorted_digits[j] = d;
      keys_out[smem.scatter_base[d] + i] = key;
    }
  }
  if constexpr (HasValues) {
    // Values are loaded only now, so they are not live across the ranking. (Loading them right
    // after the ranking, with the sorted digits in shared memory, measured slower: 1.12x CUB's
    // time against 1.10-1.11x for f32 -> u32 pairs at 2^28 on an H200.)
    V values[IPT];
    const V* tile_values = values_in + pass.portion_begin + tile_begin;
#pragma unroll
    for (int j = 0; j < IPT; ++j)
      if (valid(Rank::striped_index(j))) values[j] = tile_values[Rank::striped_index(j)];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; ++j)
      if (valid(Rank::striped_index(j))) smem.values[ranks[j]] = values[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      const int i = j * block_threads + t;
      if (valid(i)) values_out[smem.scatter_base[sorted_digits[j]] + i] = smem.values[i];
    }
  }
}

template <typename K, typename V, bool HasValues, typename Policy = RadixSortPolicy<K, V, HasValues>>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks)
onesweep_kernel(const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                typename RadixTraits<K>::Bits flip, OnesweepPass pass) {
  __shared__ OnesweepStorage<K, V, HasValues, Policy> smem;
  if (threadIdx.x == 0) smem.tile = static_cast<int>(atomicAdd(pass.tile_counter, 1u));
  __syncthreads();
  const int tile = smem.tile;
  const long long remaining = pass.portion_items - static_cast<long long>(tile) * Policy::tile_items;
  if (remaining >= Policy::tile_items)
    onesweep_tile<K, V, HasValues, Policy, true>(smem, keys_in, keys_out, values_in, values_out, flip, pass, tile,
                                                 Policy::tile_items);
  else
    onesweep_tile<K, V, HasValues, Policy, false>(smem, keys_in, keys_out, values_in, values_out, flip, pass, tile,
                                                  static_cast<int>(remaining));
}

}  // namespace knn::prim::detail
