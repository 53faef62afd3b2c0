#pragma once
// The defined distance (arith/distance.hpp) of 32 pairs of rows at once, a pair to each lane of a
// warp, for the passes that rank candidates.
//
// A thread that reads its own training row whole makes each load of its warp touch 32 rows: 32
// cache lines for 128 bytes used, and one load in flight a thread. Here the warp reads the 32
// rows a chunk of 32 features at a time, each load taking whole lines of one row (or four rows
// with float4 loads), stores the chunk in shared memory, and each lane then feeds its own pair's
// features to arith::DistanceSums in feature order while the next chunk loads. The value is
// arith::defined_distance's to the bit: the same operations on the same values in the same order.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "arith/distance.hpp"

namespace knn::cuda {

/// One warp's shared memory for warp_defined_distance: a chunk of 32 features of the 32 training
/// rows (and of the 32 query rows, unless every lane has the same one), feature-major with a pitch
/// of 33 so that neither the stores nor the lanes' reads meet a bank twice; and the rows' addresses.
template <bool OneQuery>
struct WarpRowsStage {
  static constexpr int kPitch = 33;
  float t[32 * kPitch];
  float q[OneQuery ? 1 : 32 * kPitch];
  const float* t_row[32];
  const float* q_row[OneQuery ? 1 : 32];
};

namespace warp_rows {

constexpr unsigned kAll = 0xFFFFFFFFu;

// This lane's part of features [c0, c0 + 32) of the 32 rows rows[r] (null: no row, read as 0).
// Vec (d % 4 == 0 and rows 16-byte aligned): lane l loads features c0 + 4 (l % 8) .. + 3 of rows
// 4 i + l / 8 for i < 8, as float4. Otherwise lane l loads feature c0 + l of every row.
template <bool Vec>
__device__ __forceinline__ void load_chunk(const float* const* rows, int c0, int d, float (&v)[32]) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  if constexpr (Vec) {
    const int f = c0 + (lane & 7) * 4;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float* r = rows[4 * i + (lane >> 3)];
      float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (r && f < d) x = *reinterpret_cast<const float4*>(r + f);
      v[4 * i] = x.x, v[4 * i + 1] = x.y, v[4 * i + 2] = x.z, v[4 * i + 3] = x.w;
    }
  } else {
    const int f = c0 + lane;
#pragma unroll
    for (int r = 0; r < 32; ++r) v[r] = rows[r] && f < d ? rows[r][f] : 0.0f;
  }
}

// The chunk load_chunk left in this lane's registers, to stage[feature * 33 + row].
template <bool Vec, int Pitch>
__device__ __forceinline__ void store_chunk(const float (&v)[32], float* stage) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  if constexpr (Vec) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) stage[((lane & 7) * 4 + e) * Pitch + 4 * i + (lane >> 3)] = v[4 * i + e];
  } else {
#pragma unroll
    for (int r = 0; r < 32; ++r) stage[lane * Pitch + r] = v[r];
  }
}

}  // namespace warp_rows

/// Lane x's defined distance between its query row q and training row t, d floats each, for the
/// whole warp at once: every lane of the warp calls it together. A lane with no pair passes t =
/// null (and, unless OneQuery, q = null); its result means nothing. OneQuery: every lane passes
/// the same q; with Halves, the lanes of each half-warp (0 to 15, 16 to 31) pass the same q, not
/// null. Vec: d % 4 == 0 and every row starts 16-byte aligned.
template <Metric M, bool Vec, bool OneQuery, bool Halves = false>
__device__ double warp_defined_distance(const float* q, const float* t, int d, WarpRowsStage<OneQuery>& s) {
  static_assert(OneQuery || !Halves, "each half-warp shares a query");
  using warp_rows::kAll;
  constexpr int P = WarpRowsStage<OneQuery>::kPitch;
  const int lane = static_cast<int>(threadIdx.x & 31);
  __syncwarp();  // the warp's previous call has read the stage
  s.t_row[lane] = t;
  if constexpr (!OneQuery) s.q_row[lane] = q;
  __syncwarp();
  // OneQuery: lane l holds feature c0 + l of the query (qv[0]); with Halves, of the first
  // half's query (qv[0]) and of the second's (qv[1]).
  const float* q_first = q;
  const float* q_second = q;
  if constexpr (Halves) {
    const auto at = reinterpret_cast<unsigned long long>(q);
    q_first = reinterpret_cast<const float*>(__shfl_sync(kAll, at, 0));
    q_second = reinterpret_cast<const float*>(__shfl_sync(kAll, at, 16));
  }
  float tv[32], qv[OneQuery ? (Halves ? 2 : 1) : 32];
  warp_rows::load_chunk<Vec>(s.t_row, 0, d, tv);
  if constexpr (OneQuery) {
    qv[0] = lane < d ? q_first[lane] : 0.0f;
    if constexpr (Halves) qv[1] = lane < d ? q_second[lane] : 0.0f;
  } else {
    warp_rows::load_chunk<Vec>(s.q_row, 0, d, qv);
  }
  arith::DistanceSums<M> sums;
  for (int c0 = 0; c0 < d; c0 += 32) {
    warp_rows::store_chunk<Vec, P>(tv, s.t);
    if constexpr (!OneQuery) warp_rows::store_chunk<Vec, P>(qv, s.q);
    const float q_here = qv[0];                     // OneQuery: the (first half's) query's feature c0 + lane
    const float q_there = Halves ? qv[1] : q_here;  // the second half's
    __syncwarp();
    // The next chunk loads while this one is summed.
    if (c0 + 32 < d) {
      warp_rows::load_chunk<Vec>(s.t_row, c0 + 32, d, tv);
      if constexpr (OneQuery) {
        qv[0] = c0 + 32 + lane < d ? q_first[c0 + 32 + lane] : 0.0f;
        if constexpr (Halves) qv[1] = c0 + 32 + lane < d ? q_second[c0 + 32 + lane] : 0.0f;
      } else {
        warp_rows::load_chunk<Vec>(s.q_row, c0 + 32, d, qv);
      }
    }
    const auto feature = [&](int j) {
      float x;
      if constexpr (OneQuery) {
        x = __shfl_sync(kAll, q_here, j);
        if constexpr (Halves) {
          const float y = __shfl_sync(kAll, q_there, j);
          if (lane >= 16) x = y;
        }
      } else {
        x = s.q[j * P + lane];
      }
      sums.feature(static_cast<double>(x), static_cast<double>(s.t[j * P + lane]));
    };
    if (c0 + 32 <= d) {
#pragma unroll
      for (int j = 0; j < 32; ++j) feature(j);
    } else {
      for (int j = 0; j < d - c0; ++j) feature(j);
    }
    __syncwarp();  // the chunk is read before the next one is stored
  }
  return sums.value();
}

/// f(std::integral_constant<Metric, M>{}, std::bool_constant<Vec>{}) for the metric and for
/// whether rows of d floats at q and t may load as float4 (warp_defined_distance's Vec).
template <typename F>
void with_rows_kind(Metric metric, int d, const float* q, const float* t, F&& f) {
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(q) % 16 == 0 && reinterpret_cast<std::uintptr_t>(t) % 16 == 0;
  const auto by_vec = [&](auto m) {
    if (vec) f(m, std::true_type{});
    else f(m, std::false_type{});
  };
  switch (metric) {
    case Metric::l2: by_vec(std::integral_constant<Metric, Metric::l2>{}); break;
    case Metric::l1: by_vec(std::integral_constant<Metric, Metric::l1>{}); break;
    default: by_vec(std::integral_constant<Metric, Metric::cosine>{}); break;
  }
}

}  // namespace knn::cuda
