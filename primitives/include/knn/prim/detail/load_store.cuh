#pragma once
// Index-based element access used by the tile kernels: a device-level primitive turns its
// pointers (or a transformation of them) into these small functors.
#include <iterator>
#include <type_traits>

#include "config.hpp"

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

// Loads a whole tile striped (coalesced) into shared memory, then each thread takes its
// ItemsPerThread consecutive items (blocked). Items past num_valid repeat the last valid one,
// so operators only ever see real values.
template <int BlockThreads, int ItemsPerThread, typename T, typename Load>
KNN_PRIM_DEVICE void load_tile_blocked(const Load& load, long long base, int num_valid,
                                       T* exchange, T (&items)[ItemsPerThread]) {
  constexpr int tile = BlockThreads * ItemsPerThread;
  const int tid = static_cast<int>(threadIdx.x);
  if (num_valid == tile) {
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) exchange[j * BlockThreads + tid] = load(base + j * BlockThreads + tid);
  } else {
#pragma unroll
    for (int j = 0; j < ItemsPerThread; ++j) {
      const int idx = j * BlockThreads + tid;
      exchange[idx] = load(base + (idx < num_valid ? idx : num_valid - 1));
    }
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < ItemsPerThread; ++j) items[j] = exchange[tid * ItemsPerThread + j];
  __syncthreads();
}

// The reverse: blocked items through shared memory, stored striped; only the first num_valid.
template <int BlockThreads, int ItemsPerThread, typename T, typename Store>
KNN_PRIM_DEVICE void store_tile_blocked(const Store& store, long long base, int num_valid,
                                        T* exchange, const T (&items)[ItemsPerThread]) {
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int j = 0; j < ItemsPerThread; ++j) exchange[tid * ItemsPerThread + j] = items[j];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < ItemsPerThread; ++j) {
    const int idx = j * BlockThreads + tid;
    if (idx < num_valid) store(base + idx, exchange[idx]);
  }
}

}  // namespace knn::prim::detail
