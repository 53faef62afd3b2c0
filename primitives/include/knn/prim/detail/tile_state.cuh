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

// Values of at most 4 bytes travel with their status in one 64-bit word, written and read by
// single instructions, so no memory fence is needed between value and flag.
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
    const unsigned long long word = (static_cast<unsigned long long>(bits) << 32) | status;
    *reinterpret_cast<volatile unsigned long long*>(words + tile) = word;
  }
  // Spins until the tile has published something.
  __device__ void wait(long long tile, unsigned& status, T& value) const {
    unsigned long long word;
    do {
      word = *reinterpret_cast<volatile unsigned long long*>(words + tile);
    } while (static_cast<unsigned>(word) == tile_invalid);
    status = static_cast<unsigned>(word);
    const unsigned bits = static_cast<unsigned>(word >> 32);
    std::memcpy(&value, &bits, sizeof(T));
  }
};

// Larger values: status words and values in separate arrays, ordered by fences.
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
    volatile unsigned* slot = values + (tile * 2 + (st == tile_inclusive)) * value_words;
#pragma unroll
    for (int i = 0; i < value_words; ++i) slot[i] = w[i];
    __threadfence();
    *reinterpret_cast<volatile unsigned*>(status + tile) = st;
  }
  __device__ void wait(long long tile, unsigned& st, T& value) const {
    unsigned s;
    do {
      s = *reinterpret_cast<volatile unsigned*>(status + tile);
    } while (s == tile_invalid);
    __threadfence();
    const volatile unsigned* slot = values + (tile * 2 + (s == tile_inclusive)) * value_words;
    unsigned w[value_words];
#pragma unroll
    for (int i = 0; i < value_words; ++i) w[i] = slot[i];
    std::memcpy(&value, w, sizeof(T));
    st = s;
  }
};

// Counters (selection counts, element counts) up to 2^62: status in the top two bits of the same
// 64-bit word, so like small values they need no fence.
struct CountTileState {
  unsigned long long* words;
  static constexpr unsigned long long count_mask = (1ull << 62) - 1;

  static constexpr std::size_t bytes(long long num_tiles) {
    return static_cast<std::size_t>(num_tiles) * sizeof(unsigned long long);
  }
  __device__ void publish(long long tile, unsigned status, long long count) const {
    const unsigned long long word = (static_cast<unsigned long long>(status) << 62) |
                                    (static_cast<unsigned long long>(count) & count_mask);
    *reinterpret_cast<volatile unsigned long long*>(words + tile) = word;
  }
  __device__ void wait(long long tile, unsigned& status, long long& count) const {
    unsigned long long word;
    do {
      word = *reinterpret_cast<volatile unsigned long long*>(words + tile);
    } while ((word >> 62) == tile_invalid);
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

// Called by all 32 lanes of one warp of tile `tile` (>= 1): returns, to every lane, the total
// of tiles 0 .. tile-1 in order. Lane i looks at tile (window_end - i); the nearest tile that
// has published an inclusive prefix ends the walk.
template <typename T, typename State, typename Op>
__device__ T lookback_prefix(const State& state, long long tile, Op op) {
  const int lane = lane_id();
  T running{};
  bool have_running = false;
  long long window_end = tile - 1;
  for (;;) {
    const long long t = window_end - lane;
    unsigned status = tile_aggregate;
    T value{};
    if (t >= 0) state.wait(t, status, value);  // t < 0 lies beyond tile 0, which is inclusive
    const unsigned inclusive_lanes = __ballot_sync(full_mask, status == tile_inclusive);
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
    window_end -= warp_threads;
  }
}

// Prefix callback for BlockScan::*_with_prefix inside a tile of a device-wide scan.
template <typename T, typename Op, typename State = TileState<T>>
struct LookbackCallback {
  State state;
  long long tile;
  Op op;
  __device__ T operator()(const T& block_aggregate) {
    if (lane_id() == 0) state.publish(tile, tile_aggregate, block_aggregate);
    const T prefix = lookback_prefix<T>(state, tile, op);
    if (lane_id() == 0) state.publish(tile, tile_inclusive, op(prefix, block_aggregate));
    return prefix;
  }
};

}  // namespace knn::prim::detail
