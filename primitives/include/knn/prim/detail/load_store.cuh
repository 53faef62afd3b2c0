#pragma once
// Index-based element access used by the tile kernels (a device-level primitive turns its
// pointers, or a transformation of them, into these small functors), and the per-warp moves
// between the coalesced order of global memory and the blocked order the scans work in.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "config.hpp"
#include "shuffle.cuh"

namespace knn::prim::detail {

template <typename It>
using value_of = typename std::iterator_traits<It>::value_type;

// Whether two pointers name the same address (other iterators: assumed distinct).
template <typename A, typename B>
constexpr bool same_pointer(const A& a, const B& b) {
  if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>)
    return static_cast<const void*>(a) == static_cast<const void*>(b);
  else return false;
}

// Null check for pointers; other iterators are never null.
template <typename It>
constexpr bool is_null(const It& it) {
  if constexpr (std::is_pointer_v<It>) return it == nullptr;
  else return false;
}

template <typename T, typename InputIt>
struct PointerLoad {
  InputIt in;
  KNN_PRIM_DEVICE T operator()(long long i) const { return static_cast<T>(in[i]); }
};

template <typename OutputIt>
struct PointerStore {
  OutputIt out;
  template <typename T>
  KNN_PRIM_DEVICE void operator()(long long i, const T& v) const { out[i] = v; }
};

// The unit of vectorized access: one 16-byte load or store per lane.
struct alignas(16) Chunk {
  unsigned w[4];
};

// Items of T per chunk; 0 when T cannot be moved in whole chunks.
template <typename T>
constexpr int items_per_chunk = std::is_trivially_copyable_v<T> && sizeof(T) <= 16 && 16 % sizeof(T) == 0
                                    ? static_cast<int>(16 / sizeof(T))
                                    : 0;

// Whether a Load or Store reads or writes T itself through a raw pointer (no conversion), so
// that a tile may be moved in chunks when the pointer is 16-byte aligned.
template <typename T, typename Access>
struct is_raw_access : std::false_type {};
template <typename T, typename U>
struct is_raw_access<T, PointerLoad<T, U*>> : std::is_same<std::remove_cv_t<U>, T> {};
template <typename T, typename U>
struct is_raw_access<T, PointerStore<U*>> : std::is_same<U, T> {};

KNN_PRIM_HD bool is_aligned_16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

KNN_PRIM_HD constexpr int trailing_zeros(int x) {
  int s = 0;
  while (x > 0 && (x & 1) == 0) {
    x >>= 1;
    ++s;
  }
  return s;
}

// Position of element i in a warp's exchange buffer. Shared memory serves 128 bytes per pass,
// i.e. `lanes` = 128 / ElemBytes lanes at a time. Element i sits in row i / lanes; XOR-ing its
// column with a function of the row keeps both passes over the buffer free of bank conflicts:
// the striped one (the lanes of a pass touch consecutive elements of one row) and the blocked
// one (stride PerThread = 2^s * odd: within a pass, the rows of lanes that meet the same column
// differ in their low s bits, or, for s >= log2(lanes), in the bits above s - log2(lanes)).
template <int ElemBytes, int PerThread>
KNN_PRIM_DEVICE int swizzle(int i) {
  if constexpr (ElemBytes != 4 && ElemBytes != 8 && ElemBytes != 16) {
    return i;
  } else {
    constexpr int log_lanes = ElemBytes == 4 ? 5 : (ElemBytes == 8 ? 4 : 3);
    constexpr int lanes = 1 << log_lanes;
    constexpr int s = trailing_zeros(PerThread);
    const int row = i >> log_lanes;
    if constexpr (s < log_lanes) return i ^ (row & ((1 << s) - 1));
    else return i ^ ((row >> (s - log_lanes)) & (lanes - 1));
  }
}

// One warp's share of a tile: 32 * ItemsPerThread consecutive items. Global memory is accessed
// striped (coalesced: in chunks of 16 bytes per lane when the pointer allows, else one item per
// lane), the scans want them blocked (lane l holds items l * ItemsPerThread + j); the warp's own
// buffer in shared memory turns one into the other with __syncwarp only, no block barrier.
template <typename T, int ItemsPerThread>
struct WarpExchange {
  static constexpr int warp_items = warp_threads * ItemsPerThread;
  static constexpr int per_chunk = items_per_chunk<T>;
  static constexpr bool chunkable = per_chunk > 0 && ItemsPerThread % per_chunk == 0;
  static constexpr int chunks = chunkable ? ItemsPerThread / per_chunk : 1;

  struct alignas(16) Storage {
    T items[warp_items];
  };

  template <typename Load>
  static constexpr bool load_chunks = chunkable && is_raw_access<T, Load>::value;
  template <typename Store>
  static constexpr bool store_chunks = chunkable && is_raw_access<T, Store>::value;

  // Whether a full tile can be loaded in chunks: decided per launch (the same for every tile).
  template <typename Load>
  KNN_PRIM_DEVICE static bool can_load_chunks(const Load& load) {
    if constexpr (load_chunks<Load>) return is_aligned_16(load.in);
    else return false;
  }
  template <typename Store>
  KNN_PRIM_DEVICE static bool can_store_chunks(const Store& store) {
    if constexpr (store_chunks<Store>) return is_aligned_16(store.out);
    else return false;
  }

  // Items [warp_base, warp_base + warp_items) into blocked order. Only the first num_valid
  // (which may be <= 0) are read; the others repeat the last valid item of the tile, which
  // lies before warp_base + num_valid, so operators only ever see real values.
  template <bool Full, typename Load>
  KNN_PRIM_DEVICE static void load_blocked(const Load& load, long long warp_base, int num_valid, bool use_chunks,
                                           Storage& buf, T (&items)[ItemsPerThread]) {
    if constexpr (Full && load_chunks<Load>) {
      if (use_chunks) {
        load_chunked(reinterpret_cast<const Chunk*>(load.in + warp_base), buf, items);
        return;
      }
    }
    const int lane = lane_id();
    T striped[ItemsPerThread];
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      const int i = j * warp_threads + lane;
      striped[j] = load(warp_base + (Full || i < num_valid ? i : num_valid - 1));
    }
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j)
      buf.items[swizzle<sizeof(T), ItemsPerThread>(j * warp_threads + lane)] = striped[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j)
      items[j] = buf.items[swizzle<sizeof(T), ItemsPerThread>(lane * ItemsPerThread + j)];
  }

  // The reverse: blocked items out to [warp_base, warp_base + min(num_valid, warp_items)).
  // The warp must be done with buf since its last load (a block barrier in between will do).
  template <bool Full, typename Store>
  KNN_PRIM_DEVICE static void store_blocked(const Store& store, long long warp_base, int num_valid, bool use_chunks,
                                            Storage& buf, const T (&items)[ItemsPerThread]) {
    if constexpr (Full && store_chunks<Store>) {
      if (use_chunks) {
        store_chunked(reinterpret_cast<Chunk*>(store.out + warp_base), buf, items);
        return;
      }
    }
    const int lane = lane_id();
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j)
      buf.items[swizzle<sizeof(T), ItemsPerThread>(lane * ItemsPerThread + j)] = items[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      const int i = j * warp_threads + lane;
      if (Full || i < num_valid) store(warp_base + i, buf.items[swizzle<sizeof(T), ItemsPerThread>(i)]);
    }
  }

 private:
  KNN_PRIM_DEVICE static void load_chunked(const Chunk* src, Storage& buf, T (&items)[ItemsPerThread]) {
    const int lane = lane_id();
    Chunk* chunk_buf = reinterpret_cast<Chunk*>(buf.items);
    Chunk c[chunks];
#pragma unroll
    for (int v = 0; v < chunks; ++v) c[v] = src[v * warp_threads + lane];  // all loads in flight first
#pragma unroll
    for (int v = 0; v < chunks; ++v) chunk_buf[swizzle<16, chunks>(v * warp_threads + lane)] = c[v];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < chunks; ++k) {
      const Chunk x = chunk_buf[swizzle<16, chunks>(lane * chunks + k)];
      std::memcpy(&items[k * per_chunk], &x, sizeof(Chunk));
    }
  }

  KNN_PRIM_DEVICE static void store_chunked(Chunk* dst, Storage& buf, const T (&items)[ItemsPerThread]) {
    const int lane = lane_id();
    Chunk* chunk_buf = reinterpret_cast<Chunk*>(buf.items);
#pragma unroll
    for (int k = 0; k < chunks; ++k) {
      Chunk x;
      std::memcpy(&x, &items[k * per_chunk], sizeof(Chunk));
      chunk_buf[swizzle<16, chunks>(lane * chunks + k)] = x;
    }
    __syncwarp();
#pragma unroll
    for (int v = 0; v < chunks; ++v) dst[v * warp_threads + lane] = chunk_buf[swizzle<16, chunks>(v * warp_threads + lane)];
  }
};

}  // namespace knn::prim::detail
