#pragma once
// Per-tile status for single-pass scans with decoupled look-back (Merrill & Garland, 2016).
// A tile publishes its own aggregate as soon as it knows it, then its inclusive prefix once the
// look-back has found the total of the tiles before it. Successors read either.
#include <cstring>
#include <type_traits>

#include "config.hpp"
#include "shuffle.cuh"

namespace knn::prim::detail {

enum : unsigned { tile_invalid = 0u, tile_aggregate = 1u, tile_inclusive = 2u };

// Status words are read and written at GPU scope, never cached in L1. Relaxed order is enough
// where the value travels in the same word as its status; a status that guards a value stored
// apart is written with release and read with acquire (cheaper than a full __threadfence).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
KNN_PRIM_DEVICE unsigned long long load_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
KNN_PRIM_DEVICE void store_relaxed(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
KNN_PRIM_DEVICE unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
KNN_PRIM_DEVICE void store_relaxed(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}
KNN_PRIM_DEVICE unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
KNN_PRIM_DEVICE void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}
KNN_PRIM_DEVICE void sleep_ns(unsigned ns) { __nanosleep(ns); }
#else
template <typename W>
KNN_PRIM_DEVICE W load_relaxed(const W* p) { return *const_cast<const volatile W*>(p); }
template <typename W>
KNN_PRIM_DEVICE void store_relaxed(W* p, W v) { *const_cast<volatile W*>(p) = v; }
KNN_PRIM_DEVICE unsigned load_acquire(const unsigned* p) {
  const unsigned v = load_relaxed(p);
  __threadfence();
  return v;
}
KNN_PRIM_DEVICE void store_release(unsigned* p, unsigned v) {
  __threadfence();
  store_relaxed(p, v);
}
KNN_PRIM_DEVICE void sleep_ns(unsigned) {}
#endif

// Values of at most 4 bytes travel with their status in one 64-bit word, written and read by
// single instructions.
template <typename T, bool Packed = (sizeof(T) <= 4)>
struct TileState {
  unsigned long long* words;

  static constexpr std::size_t bytes(long long num_tiles) {
    return static_cast<std::size_t>(num_tiles) * sizeof(unsigned long long);
  }
  static TileState carve(void* p) { return {static_cast<unsigned long long*>(p)}; }

  __device__ void publish(long long tile, unsigned status, const T& value) const {
    unsigned bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    store_relaxed(words + tile, (static_cast<unsigned long long>(bits) << 32) | status);
  }
  // One look at the tile; value is meaningful unless status is tile_invalid.
  __device__ void read(long long tile, unsigned& status, T& value) const {
    const unsigned long long word = load_relaxed(words + tile);
    status = static_cast<unsigned>(word);
    const unsigned bits = static_cast<unsigned>(word >> 32);
    std::memcpy(&value, &bits, sizeof(T));
  }
};

// Larger values: status words and values in separate arrays, the status released after the
// value and acquired before it is read.
template <typename T>
struct TileState<T, false> {
  static_assert(std::is_trivially_copyable_v<T>, "scan values must be trivially copyable");
  static constexpr int value_words = (sizeof(T) + 3) / 4;
  unsigned* status;
  unsigned* values;  // two slots per tile: [aggregate, inclusive], value_words each

  static constexpr std::size_t status_bytes(long long num_tiles) {
    return (static_cast<std::size_t>(num_tiles) * sizeof(unsigned) + 15) / 16 * 16;
  }
  static constexpr std::size_t bytes(long long num_tiles) {
    return status_bytes(num_tiles) + static_cast<std::size_t>(num_tiles) * 2 * value_words * 4;
  }
  // Only the status words need zeroing: values are read after their status says so.
  static TileState carve(void* p) { return {static_cast<unsigned*>(p), nullptr}; }
  TileState with_tiles(long long num_tiles) const {
    return {status, reinterpret_cast<unsigned*>(reinterpret_cast<unsigned char*>(status) +
                                                status_bytes(num_tiles))};
  }

  __device__ void publish(long long tile, unsigned st, const T& value) const {
    unsigned w[value_words] = {};
    std::memcpy(w, &value, sizeof(T));
    unsigned* slot = values + (tile * 2 + (st == tile_inclusive)) * value_words;
#pragma unroll
    for (int i = 0; i < value_words; ++i) store_relaxed(slot + i, w[i]);
    store_release(status + tile, st);
  }
  __device__ void read(long long tile, unsigned& st, T& value) const {
    st = load_acquire(status + tile);
    if (st == tile_invalid) return;
    const unsigned* slot = values + (tile * 2 + (st == tile_inclusive)) * value_words;
    unsigned w[value_words];
#pragma unroll
    for (int i = 0; i < value_words; ++i) w[i] = load_relaxed(slot + i);
    std::memcpy(&value, w, sizeof(T));
  }
};

// Counters (selection counts, element counts) up to 2^62: status in the top two bits of the same
// 64-bit word, so like small values they need no ordering.
struct CountTileState {
  unsigned long long* words;
  static constexpr unsigned long long count_mask = (1ull << 62) - 1;

  static constexpr std::size_t bytes(long long num_tiles) {
    return static_cast<std::size_t>(num_tiles) * sizeof(unsigned long long);
  }
  __device__ void publish(long long tile, unsigned status, long long count) const {
    store_relaxed(words + tile, (static_cast<unsigned long long>(status) << 62) |
                                    (static_cast<unsigned long long>(count) & count_mask));
  }
  __device__ void read(long long tile, unsigned& status, long long& count) const {
    const unsigned long long word = load_relaxed(words + tile);
    status = static_cast<unsigned>(word >> 62);
    count = static_cast<long long>(word & count_mask);
  }
};

template <typename T>
struct TileStateLayout {
  static constexpr std::size_t bytes(long long num_tiles) { return TileState<T>::bytes(num_tiles); }
  // Bytes to zero before a scan (status words only).
  static constexpr std::size_t clear_bytes(long long num_tiles) {
    if constexpr (sizeof(T) <= 4) return TileState<T>::bytes(num_tiles);
    else return TileState<T>::status_bytes(num_tiles);
  }
  static TileState<T> make(void* p, long long num_tiles) {
    if constexpr (sizeof(T) <= 4) return TileState<T>::carve(p);
    else return TileState<T>::carve(p).with_tiles(num_tiles);
  }
};

// Pauses of the look-back, in ns: once before its first read (the predecessors' status words
// take about that long to land in L2) and between reads while a needed predecessor has published
// nothing yet (spinning would only add L2 traffic that the running tiles' loads compete with).
// Small grids do not pause: there, latency matters and contention is low.
constexpr unsigned lookback_pause_min_grid = 512;

KNN_PRIM_DEVICE void lookback_pause(int ns) {
  if (ns > 0 && gridDim.x >= lookback_pause_min_grid) sleep_ns(static_cast<unsigned>(ns));
}

// Called by all 32 lanes of one warp of tile `tile` (>= 1): returns, to every lane, the total
// of tiles 0 .. tile-1 in order. Lane i looks at tile (window_end - i); the nearest tile that
// has published an inclusive prefix ends the walk, and only the tiles up to it must have
// published something.
template <typename T, int FirstPauseNs, int RetryPauseNs, typename State, typename Op>
__device__ T lookback_prefix(const State& state, long long tile, Op op) {
  const int lane = lane_id();
  lookback_pause(FirstPauseNs);
  T running{};
  bool have_running = false;
  for (long long window_end = tile - 1;; window_end -= warp_threads) {
    const long long t = window_end - lane;
    unsigned status;
    T value;
    unsigned inclusive_lanes;
    for (;;) {
      status = tile_aggregate;  // lanes before tile 0 are never needed: tile 0 is inclusive
      value = T{};
      if (t >= 0) state.read(t, status, value);
      inclusive_lanes = __ballot_sync(full_mask, status == tile_inclusive);
      const unsigned invalid_lanes = __ballot_sync(full_mask, status == tile_invalid);
      const unsigned needed = inclusive_lanes ? inclusive_lanes ^ (inclusive_lanes - 1) : full_mask;
      if ((invalid_lanes & needed) == 0) break;
      lookback_pause(RetryPauseNs);
    }
    const int last = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : warp_threads - 1;
    // Combine lanes last .. 0, i.e. tiles in increasing order.
#pragma unroll
    for (int offset = 1; offset < warp_threads; offset <<= 1) {
      const T other = shfl_down(value, offset);
      if (lane + offset <= last) value = op(other, value);
    }
    const T window = shfl_idx(value, 0);
    running = have_running ? op(window, running) : window;
    have_running = true;
    if (inclusive_lanes) return running;
  }
}

// Prefix callback for BlockScan::*_with_prefix inside a tile of a device-wide scan.
template <typename T, typename Op, typename State, int FirstPauseNs, int RetryPauseNs>
struct LookbackCallback {
  State state;
  long long tile;
  Op op;
  __device__ T operator()(const T& block_aggregate) {
    if (lane_id() == 0) state.publish(tile, tile_aggregate, block_aggregate);
    const T prefix = lookback_prefix<T, FirstPauseNs, RetryPauseNs>(state, tile, op);
    if (lane_id() == 0) state.publish(tile, tile_inclusive, op(prefix, block_aggregate));
    return prefix;
  }
};

}  // namespace knn::prim::detail
