#pragma once
// Where the candidate passes (collect, fused_collect) append each query's candidates, and the
// select pass's shared sizes.
#include <cstdint>
#include <type_traits>

#include "backend/cuda/bounds.cuh"

namespace knn::cuda {

constexpr int kSelectThreads = 256;
constexpr int kFastK = 2048;          // k up to this takes the two-pass path
constexpr int kRankCapacity = 4096;   // candidates ranked in shared memory per query (64 KiB)
constexpr unsigned kNoKey = 0xFFFFFFFFu;  // NaN's ordered key, above every number's

// Where each query's candidate list lives. A slot is one query of the tile: in the first pass
// slot s is query s with `cap` places at s * cap; lists that overflowed are collected again
// with a slot per such query, at `base[s]`, with `limit[s]` places.
struct Slots {
  const int* row;             // slot -> query of the tile; null: the slot itself
  const std::int64_t* base;   // null: slot * cap
  const std::int64_t* limit;  // null: cap
  std::int64_t cap;
  std::int64_t* index;              // candidate training rows
  unsigned long long* count;        // per slot: candidates found (may exceed the limit)
  // Where set, each place's lower (x) and upper (y) bound of its candidate's defined distance, for
  // prune_lists; only the first round of wgmma_wide_fused_pass keeps them (wide_wgmma_takes).
  float2* bounds = nullptr;
  __device__ int row_of(int s) const { return row ? row[s] : s; }
  __device__ std::int64_t base_of(int s) const { return base ? base[s] : static_cast<std::int64_t>(s) * cap; }
  __device__ std::int64_t limit_of(int s) const { return limit ? limit[s] : cap; }
};

/// f(vec, f32l2) with both as compile-time constants: rows that start 16-byte aligned load as
/// float4, and l2 takes the float bounds.
template <typename F>
void with_pass_kind(const Bounds& b, F&& f) {
  using T = std::true_type;
  using N = std::false_type;
  const bool vec = b.pitch % 4 == 0, l2 = b.metric == Metric::l2;
  if (vec && l2) f(T{}, T{});
  else if (vec) f(T{}, N{});
  else if (l2) f(N{}, T{});
  else f(N{}, N{});
}

}  // namespace knn::cuda
