#include "backend/cuda/small_k_select.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <knn/prim/block/block_bitonic_sort.cuh>
#include <knn/prim/device/device_segmented_sort.cuh>
#include <knn/prim/warp/warp_append.cuh>

#include "arith/bounds.hpp"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/prune_lists.cuh"
#include "backend/cuda/rank_lists.cuh"
#include "backend/cuda/staging.cuh"
#include "backend/cuda/tau_guess.cuh"
#include "backend/cuda/warp_distances.cuh"

namespace knn::cuda {

namespace {

// A row is read in steps: per step each thread takes kStepVectors groups of four consecutive
// values, group x at j0 + (x * kSelectThreads + threadIdx.x) * 4, so every load of a warp is
// coalesced and 16 values per thread are in flight at once (one at a time left these passes
// waiting on memory at a third of its bandwidth). Vec: rows start 16-byte aligned (n % 4 == 0),
// so the groups load as float4 and the norms as double2.
constexpr int kStepVectors = 4;
constexpr std::int64_t kStep = std::int64_t{kSelectThreads} * 4 * kStepVectors;

// What a pass reads of a step: the training rows' norms (load_norms), the same for every query,
// and the query's approximate values (load_values). F32L2 passes read the float norms of the
// bound they need (l2, Bounds::Row::l2_bound); the others the double norms (Bounds::Row::at).
template <bool Vec, bool F32L2, bool Upper>
__device__ __forceinline__ void load_norms(const Bounds::Row& r, std::int64_t j0, double (&t)[kStepVectors][4],
                                           float (&tf)[kStepVectors][4]) {
  const float* tnf = Upper ? r.tn_up : r.tn_dn;
#pragma unroll
  for (int x = 0; x < kStepVectors; ++x) {
    const std::int64_t p = j0 + (static_cast<std::int64_t>(x) * kSelectThreads + threadIdx.x) * 4;
    if (Vec && p + 3 < r.n) {
      if (F32L2) {
        const float4 g = *reinterpret_cast<const float4*>(tnf + p);
        tf[x][0] = g.x, tf[x][1] = g.y, tf[x][2] = g.z, tf[x][3] = g.w;
      } else if (r.metric != Metric::l1) {
        const double2 a = *reinterpret_cast<const double2*>(r.tn + p), b = *reinterpret_cast<const double2*>(r.tn + p + 2);
        t[x][0] = a.x, t[x][1] = a.y, t[x][2] = b.x, t[x][3] = b.y;
      } else {
        t[x][0] = t[x][1] = t[x][2] = t[x][3] = 0.0;
      }
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool in = p + e < r.n;
        if (F32L2) tf[x][e] = in ? tnf[p + e] : 0.0f;
        else t[x][e] = in && r.metric != Metric::l1 ? r.tn[p + e] : 0.0;
      }
    }
  }
}

template <bool Vec>
__device__ __forceinline__ void load_values(const Bounds::Row& r, std::int64_t j0, float (&v)[kStepVectors][4]) {
#pragma unroll
  for (int x = 0; x < kStepVectors; ++x) {
    const std::int64_t p = j0 + (static_cast<std::int64_t>(x) * kSelectThreads + threadIdx.x) * 4;
    if (Vec && p + 3 < r.n) {
      const float4 f = *reinterpret_cast<const float4*>(r.s + p);
      v[x][0] = f.x, v[x][1] = f.y, v[x][2] = f.z, v[x][3] = f.w;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[x][e] = p + e < r.n ? r.s[p + e] : 0.0f;
    }
  }
}

__device__ __forceinline__ std::int64_t step_row(std::int64_t j0, int x, int e) {
  return j0 + (static_cast<std::int64_t>(x) * kSelectThreads + threadIdx.x) * 4 + e;
}

// The upper (Upper) or lower bounds of this thread's 16 rows of the step at j0. The norms,
// loaded already (load_norms), serve every query of a block.
template <bool Vec, bool F32L2, bool Upper>
__device__ __forceinline__ void step_bounds(const Bounds::Row& r, std::int64_t j0, const double (&t)[kStepVectors][4],
                                            const float (&tf)[kStepVectors][4], float (&b)[kStepVectors][4]) {
  float v[kStepVectors][4];
  load_values<Vec>(r, j0, v);
#pragma unroll
  for (int x = 0; x < kStepVectors; ++x)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (F32L2) {
        b[x][e] = r.l2_bound<Upper>(v[x][e], tf[x][e]);
      } else {
        float u, l;
        r.at(v[x][e], t[x][e], u, l);
        b[x][e] = Upper ? u : l;
      }
    }
  // Most steps hold neither the row's end nor the excluded row: those skip the per-row test.
  if (j0 + kStep > r.n || (r.excluded >= j0 && r.excluded < j0 + kStep)) {
#pragma unroll
    for (int x = 0; x < kStepVectors; ++x)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (r.masked(step_row(j0, x, e))) b[x][e] = NAN;
  }
}

// tau per query: the k-th smallest key of the union of every thread's M smallest upper-bound
// keys (M * kSelectThreads >= k). Excluded rows (NaN) never count; tau is at most +inf's key, so
// a query with fewer than k finite upper bounds takes every row that is not excluded.
//
// Only every `stride`-th step of the row is read: the k-th smallest upper bound of any subset
// of the row is a valid tau, and a sample spread over the row gives one a little above the
// row's own at a fraction of the reads (the candidate pass then takes about stride times k rows
// instead of k, which the ranking absorbs for small k; see sample_stride()).
//
// `rank` is k, or a smaller rank whose key is a guess (guessed_tau_rank); then `valid`, where
// not null, takes the k-th (`valid_rank`) from the same union, a valid tau for the queries whose
// guess the ranking refutes.
template <int M, bool Vec, bool F32L2>
__global__ void __launch_bounds__(kSelectThreads) union_tau(Bounds b, int rank, int stride, unsigned* tau, int valid_rank, unsigned* valid) {
  constexpr int kUnion = M * kSelectThreads;
  __shared__ unsigned keys[kUnion];
  const int row = blockIdx.x;
  const Bounds::Row r = b.row_of(row);
  unsigned best[M];
#pragma unroll
  for (int m = 0; m < M; ++m) best[m] = kNoKey;
  for (std::int64_t j0 = 0; j0 < r.n; j0 += kStep * stride) {
    float u[kStepVectors][4], tf[kStepVectors][4];
    double t[kStepVectors][4];
    load_norms<Vec, F32L2, true>(r, j0, t, tf);
    step_bounds<Vec, F32L2, true>(r, j0, t, tf, u);
#pragma unroll
    for (int x = 0; x < kStepVectors; ++x)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const unsigned key = ordered_key(u[x][e]);  // a masked row's NaN: kNoKey
        if (key < best[M - 1]) insert_key(best, key);
      }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) keys[m * kSelectThreads + threadIdx.x] = best[m];
  __syncthreads();
  knn::prim::block_bitonic_sort<kSelectThreads>(keys, kUnion);  // the union, ascending
  if (threadIdx.x == 0) {
    tau[row] = min(keys[rank - 1], ordered_key(INFINITY));
    if (valid) valid[row] = min(keys[valid_rank - 1], ordered_key(INFINITY));
  }
}

// Appends each row whose lower bound is <= tau to its query's list, counting all of them
// (slots.count, zeroed before). A block takes kCollectQueries slots over one part of the
// training rows (blockIdx.y of gridDim.y), so each norm it loads serves all of them; the row's
// end and the excluded row are tested only in the steps that hold them, and lower bounds are
// compared with tau as floats. A warp reserves places for all its finds of a step with one atomic
// (knn::prim::warp_append).
constexpr int kCollectQueries = 4;
template <bool Vec, bool F32L2>
__global__ void __launch_bounds__(kSelectThreads) collect(Bounds b, const unsigned* tau, Slots slots, int slot_count) {
  const int first_slot = static_cast<int>(blockIdx.x) * kCollectQueries;
  const int here = min(kCollectQueries, slot_count - first_slot);
  const std::int64_t steps = (b.n + kStep - 1) / kStep, per_part = (steps + gridDim.y - 1) / gridDim.y;
  const std::int64_t j_begin = blockIdx.y * per_part * kStep, j_end = min(b.n, (blockIdx.y + 1) * per_part * kStep);
  const Bounds::Row any = b.row_of(slots.row_of(first_slot));  // what the norms' loads need
  for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kStep) {  // the same trip count for the whole block
    float tf[kStepVectors][4];
    double t[kStepVectors][4];
    load_norms<Vec, F32L2, false>(any, j0, t, tf);
#pragma unroll 1
    for (int q = 0; q < here; ++q) {
      const int slot = first_slot + q, row = slots.row_of(slot);
      const Bounds::Row r = b.row_of(row);
      // tau as a float (a key of one, at most +inf's): l <= it as floats is the keys' order, and
      // false for NaN.
      const float t_f = key_to_float(tau[row]);
      float l[kStepVectors][4];
      step_bounds<Vec, F32L2, false>(r, j0, t, tf, l);
      unsigned flags = 0;
#pragma unroll
      for (int x = 0; x < kStepVectors; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (l[x][e] <= t_f) flags |= 1u << (x * 4 + e);
      std::int64_t pos = static_cast<std::int64_t>(knn::prim::warp_append(slots.count + slot, static_cast<unsigned>(__popc(flags))));
      const std::int64_t base = slots.base_of(slot), limit = slots.limit_of(slot);
      while (flags) {
        const int bit = __ffs(flags) - 1;
        flags &= flags - 1;
        if (pos < limit) slots.index[base + pos] = step_row(j0, bit / 4, bit % 4);
        ++pos;
      }
    }
  }
}

// Per slot: the defined distance of each candidate (a warp computes 32 at once), sorted by
// (distance, index) in shared memory, the first k written. A list that overflowed, or is longer
// than `capacity`, is left (flag set) for the next round.
//
// With a guessed tau (`guess.tau`; l2 only), the list is also left when the guess is refuted
// (docs/exactness.md#guessed-tau): fewer than k candidates, or a k-th distance whose square (with
// room for its roundings) is above tau. Such a query, and one whose list overflowed, takes a
// valid tau for the next round: the k-th distance's square where there is one, at most the
// sample's k-th upper bound (`guess.valid`).
// `short_lists`: lists of at most this many candidates were ranked by rank_short_lists and are
// skipped here (-1: none were).
template <Metric M, bool Vec>
__global__ void __launch_bounds__(kSelectThreads) rank_candidates(const float* q, const float* t, int d, Slots slots, int capacity,
                                                                 std::int64_t k, double* out_dist, std::int64_t* out_index, int* left,
                                                                 TauGuess guess, std::int64_t short_lists) {
  extern __shared__ double rank_smem[];
  __shared__ WarpRowsStage<true> stages[kSelectThreads / 32];
  double* sd = rank_smem;
  auto* si = reinterpret_cast<std::int64_t*>(rank_smem + capacity);
  const int slot = blockIdx.x, row = slots.row_of(slot);
  const auto m = static_cast<std::int64_t>(slots.count[slot]);
  if (m <= short_lists) return;  // the same for the whole block
  // The guess, read by every thread before thread 0 may replace it.
  const float guessed = guess.tau ? key_to_float(guess.tau[row]) : 0.0f;
  if (m > slots.limit_of(slot) || m > capacity || (guess.tau && m < k)) {
    if (threadIdx.x == 0) {
      left[slot] = 1;
      if (guess.tau) guess.tau[row] = guess.valid[row];
    }
    return;
  }
  const std::int64_t base = slots.base_of(slot);
  const int size = knn::prim::pow2_at_least(m);
  const float* qr = q + static_cast<std::int64_t>(row) * d;
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (int x0 = warp * 32; x0 < m; x0 += kSelectThreads) {  // the same count of turns for a warp's lanes
    const int x = x0 + static_cast<int>(threadIdx.x % 32);
    const std::int64_t i = x < m ? slots.index[base + x] : -1;
    const double dist = warp_defined_distance<M, Vec, true>(qr, i >= 0 ? t + i * d : nullptr, d, stages[warp]);
    if (i >= 0) sd[x] = dist, si[x] = i;
  }
  for (int x = static_cast<int>(m) + static_cast<int>(threadIdx.x); x < size; x += kSelectThreads) sd[x] = INFINITY, si[x] = INT64_MAX;
  __syncthreads();
  knn::prim::block_bitonic_sort_pairs(sd, si, size);  // by (distance, index)
  if (guess.tau) {
    const double at_least = detail::l2_sum_ceiling(sd[k - 1]);
    if (!(at_least <= static_cast<double>(guessed))) {
      if (threadIdx.x == 0) {
        left[slot] = 1;
        guess.tau[row] = min(guess.valid[row], ordered_key(__double2float_ru(at_least)));
      }
      return;
    }
  }
  for (std::int64_t x = threadIdx.x; x < k; x += blockDim.x) {
    out_dist[static_cast<std::int64_t>(slot) * k + x] = sd[x];
    out_index[static_cast<std::int64_t>(slot) * k + x] = si[x];
  }
}

// rank_candidates for lists of at most kShortList candidates, k <= 32: a warp a list, a lane one
// candidate (two past 32), sorted by (distance, index) across the warp; and lists of at most
// kPairList with k <= kPairList two a warp, a half-warp each. The same distances, order, results
// and flags as rank_candidates (a list padded with +inf and the largest index sorts to the same
// first k), with many lists in flight a block where rank_candidates had one or two warps of eight
// busy with such a list and waited for their rows alone: a distance's reads are a chain of loads
// (its features in order), so a short list is bound by their latency, and a list of a few
// candidates leaves most of its warp's lanes idle. Longer lists are left to rank_candidates.
constexpr int kShortList = 64;
constexpr int kPairList = 16;

struct ShortLists {
  const float* q;
  const float* t;
  int d;
  Slots slots;
  int capacity;
  std::int64_t k;
  double* out_dist;
  std::int64_t* out_index;
  int* left;
  TauGuess guess;
  // Whether a list of m candidates is left for the next round (overflowed, longer than the
  // places, or fewer than k under a guessed tau).
  __device__ bool leaves(int slot, std::int64_t m) const { return m > slots.limit_of(slot) || m > capacity || (guess.tau && m < k); }
  // The end of a ranked list, by the lanes that hold it (element `rank` of its ascending order,
  // dist and index, in each; `kth` its k-th distance): a guessed tau whose square the k-th
  // distance passes is refuted, and `leader` leaves the list for the next round with a valid tau;
  // else the lanes of the first k write them.
  __device__ void finish(int slot, int row, float guessed, double kth, int rank, double dist, std::int64_t index, bool leader) const {
    if (guess.tau) {
      const double at_least = detail::l2_sum_ceiling(kth);
      if (!(at_least <= static_cast<double>(guessed))) {
        if (leader) {
          left[slot] = 1;
          guess.tau[row] = min(guess.valid[row], ordered_key(__double2float_ru(at_least)));
        }
        return;
      }
    }
    if (rank < k) {
      out_dist[static_cast<std::int64_t>(slot) * k + rank] = dist;
      out_index[static_cast<std::int64_t>(slot) * k + rank] = index;
    }
  }
};

// One list of at most kShortList, by the whole warp.
template <Metric M, bool Vec>
__device__ void rank_short_list(const ShortLists& a, int slot, WarpRowsStage<true>& stage) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = a.slots.row_of(slot);
  const auto m = static_cast<std::int64_t>(a.slots.count[slot]);
  if (m > kShortList) return;  // rank_candidates'
  // The guess, read by every lane before lane 0 may replace it.
  const float guessed = a.guess.tau ? key_to_float(a.guess.tau[row]) : 0.0f;
  __syncwarp();
  if (a.leaves(slot, m)) {
    if (lane == 0) {
      a.left[slot] = 1;
      if (a.guess.tau) a.guess.tau[row] = a.guess.valid[row];
    }
    return;
  }
  // Element e of the warp's 64 (candidate e, or padding past m) is held by lane e % 32 as its
  // (dist[e / 32], index[e / 32]).
  const float* const qr = a.q + static_cast<std::int64_t>(row) * a.d;
  double dist[2] = {INFINITY, INFINITY};
  std::int64_t index[2] = {INT64_MAX, INT64_MAX};
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (r * 32 >= m) break;  // the same for the whole warp
    const int x = r * 32 + lane;
    const std::int64_t i = x < m ? a.slots.index[a.slots.base_of(slot) + x] : -1;
    const double v = warp_defined_distance<M, Vec, true>(qr, i >= 0 ? a.t + i * a.d : nullptr, a.d, stage);
    if (i >= 0) dist[r] = v, index[r] = i;
  }
  // Bitonic sort of the 64 pairs, ascending by (distance, index) as rank_candidates'.
  const knn::prim::PairLess less;
#pragma unroll
  for (int size = 2; size <= 64; size <<= 1)
#pragma unroll
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      if (stride == 32) {  // elements lane and lane + 32, in one ascending run
        if (less(dist[1], index[1], dist[0], index[0])) {
          const double dd = dist[0];
          const std::int64_t ii = index[0];
          dist[0] = dist[1], index[0] = index[1], dist[1] = dd, index[1] = ii;
        }
        continue;
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int e = r * 32 + lane;
        const double od = __shfl_xor_sync(0xFFFFFFFFu, dist[r], stride);
        const std::int64_t oi = __shfl_xor_sync(0xFFFFFFFFu, index[r], stride);
        // The lower element of a pair keeps the lesser in an ascending run, the greater in a descending one.
        const bool keep_less = ((e & stride) == 0) == ((e & size) == 0);
        if (keep_less ? less(od, oi, dist[r], index[r]) : less(dist[r], index[r], od, oi)) dist[r] = od, index[r] = oi;
      }
    }
  // The first k (k <= 32) are element lane of the lanes below k.
  a.finish(slot, row, guessed, __shfl_sync(0xFFFFFFFFu, dist[0], static_cast<int>(a.k - 1)), lane, dist[0], index[0], lane == 0);
}

// Two lists of at most kPairList (k <= kPairList), list `half` by lanes 16 half .. + 15: a lane
// one candidate, each half its own query (warp_defined_distance's Halves), and each half sorted
// on its own (the xor partners of strides below 16 stay in their half).
template <Metric M, bool Vec>
__device__ void rank_list_pair(const ShortLists& a, int first_slot, WarpRowsStage<true>& stage) {
  const int lane = static_cast<int>(threadIdx.x % 32), half = lane / 16, hl = lane % 16;
  const int slot = first_slot + half, row = a.slots.row_of(slot);
  const auto m = static_cast<std::int64_t>(a.slots.count[slot]);
  const float guessed = a.guess.tau ? key_to_float(a.guess.tau[row]) : 0.0f;
  const std::int64_t i = hl < m ? a.slots.index[a.slots.base_of(slot) + hl] : -1;
  const float* const qr = a.q + static_cast<std::int64_t>(row) * a.d;
  const double v = warp_defined_distance<M, Vec, true, true>(qr, i >= 0 ? a.t + i * a.d : nullptr, a.d, stage);
  double dist = INFINITY;
  std::int64_t index = INT64_MAX;
  if (i >= 0) dist = v, index = i;
  const knn::prim::PairLess less;
#pragma unroll
  for (int size = 2; size <= 16; size <<= 1)
#pragma unroll
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      const double od = __shfl_xor_sync(0xFFFFFFFFu, dist, stride);
      const std::int64_t oi = __shfl_xor_sync(0xFFFFFFFFu, index, stride);
      const bool keep_less = ((hl & stride) == 0) == ((hl & size) == 0);
      if (keep_less ? less(od, oi, dist, index) : less(dist, index, od, oi)) dist = od, index = oi;
    }
  a.finish(slot, row, guessed, __shfl_sync(0xFFFFFFFFu, dist, half * 16 + static_cast<int>(a.k - 1)), hl, dist, index, hl == 0);
}

// A warp a slot. Slots 2 s and 2 s + 1 go to the first one's warp as a pair where both hold at
// most kPairList candidates and neither leaves for the next round (the second's warp is then
// idle); else each warp takes its own.
template <Metric M, bool Vec>
__global__ void __launch_bounds__(kSelectThreads) rank_short_lists(ShortLists a, int slot_count) {
  __shared__ WarpRowsStage<true> stages[kSelectThreads / 32];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int slot = static_cast<int>(blockIdx.x) * (kSelectThreads / 32) + warp;
  if (slot >= slot_count) return;  // the same for the whole warp
  const auto pairs = [&](int s) {
    if (s >= slot_count) return false;
    const auto m = static_cast<std::int64_t>(a.slots.count[s]);
    return m <= kPairList && !a.leaves(s, m);
  };
  const int first = slot & ~1;
  if (a.k <= kPairList && pairs(first) && pairs(first + 1)) {
    if (slot == first) rank_list_pair<M, Vec>(a, first, stages[warp]);
    return;
  }
  rank_short_list<M, Vec>(a, slot, stages[warp]);
}

// rank_candidates over `slots` slots, each with `capacity` places of shared memory (lists of at
// most kShortList candidates by rank_short_lists where k is at most 32); `guess` where their tau
// is a guess.
void launch_rank(const float* q, const float* t, int d, Metric metric, const Slots& slots, int slot_count, int capacity, std::int64_t k,
                 double* out_dist, std::int64_t* out_index, int* left, cudaStream_t st, TauGuess guess = {}) {
  if (slot_count == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(capacity) * (sizeof(double) + sizeof(std::int64_t));
  const bool short_lists = k <= 32;
  with_rows_kind(metric, d, q, t, [&](auto m, auto vec) {
    if (short_lists) {
      const ShortLists a{q, t, d, slots, capacity, k, out_dist, out_index, left, guess};
      rank_short_lists<decltype(m)::value, decltype(vec)::value><<<blocks_for(slot_count, kSelectThreads / 32), kSelectThreads, 0, st>>>(a, slot_count);
      KNN_LAUNCHED(rank_short_lists);
    }
    rank_candidates<decltype(m)::value, decltype(vec)::value><<<static_cast<unsigned>(slot_count), kSelectThreads, bytes, st>>>(
        q, t, d, slots, capacity, k, out_dist, out_index, left, guess, short_lists ? kShortList : -1);
  });
  KNN_LAUNCHED(rank_candidates);
}

// The candidate pass over `slot_count` slots: the training rows split into as many parts as
// give the device about eight waves of blocks (a few queries a block leave most of it idle, and
// a last wave a quarter full cost up to a fifth of the pass's time).
void launch_collect(const Bounds& b, const unsigned* tau, const Slots& slots, int slot_count, int multiprocessors,
                    cudaStream_t st) {
  if (slot_count == 0) return;
  KNN_CUDA(cudaMemsetAsync(slots.count, 0, static_cast<std::size_t>(slot_count) * sizeof(unsigned long long), st));
  const std::int64_t blocks = (slot_count + kCollectQueries - 1) / kCollectQueries;
  const std::int64_t steps = std::max<std::int64_t>((b.n + kStep - 1) / kStep, 1);
  with_pass_kind(b, [&](auto vec, auto f32l2) {
    const auto kernel = collect<decltype(vec)::value, decltype(f32l2)::value>;
    int resident = 0;
    KNN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kSelectThreads, 0));
    const std::int64_t wanted = std::int64_t{8} * std::max(resident, 1) * multiprocessors;
    const auto parts = static_cast<unsigned>(std::clamp<std::int64_t>((wanted + blocks - 1) / blocks, 1, steps));
    kernel<<<dim3(static_cast<unsigned>(blocks), parts), kSelectThreads, 0, st>>>(b, tau, slots, slot_count);
  });
  KNN_LAUNCHED(collect);
}

// Steps of the row that tau's pass reads: one in `stride`. The candidate pass then finds about
// stride * k rows (plus those within the margin), which must fit the first round's lists of
// 2k + 256 places: so a stride up to (k + 128) / 2k, at most 8, and none for k >= 128.
int sample_stride(std::int64_t k) { return static_cast<int>(std::clamp<std::int64_t>((k + 128) / (2 * k), 1, 8)); }

// Lists of the second round longer than rank_candidates' shared memory (many rows tied within
// the margin; flagged in `left`): the defined distance of each of their candidates, a block a list.
template <Metric M, bool Vec>
__global__ void __launch_bounds__(kSelectThreads) long_list_distances(const float* q, const float* t, int d, Slots s, const int* left,
                                                                     double* dist) {
  __shared__ WarpRowsStage<true> stages[kSelectThreads / 32];
  const int x = static_cast<int>(blockIdx.x);
  if (!left[x]) return;
  const float* qr = q + static_cast<std::int64_t>(s.row_of(x)) * d;
  const std::int64_t b = s.base_of(x), m = s.limit_of(x);
  const int warp = static_cast<int>(threadIdx.x / 32);
  for (std::int64_t c0 = warp * 32; c0 < m; c0 += kSelectThreads) {
    const std::int64_t c = c0 + threadIdx.x % 32;
    const double v = warp_defined_distance<M, Vec, true>(qr, c < m ? t + s.index[b + c] * d : nullptr, d, stages[warp]);
    if (c < m) dist[b + c] = v;
  }
}

// The second round's lists as segments for rank_lists: list x is [base[x], base[x] + limit[x]) when
// left[x] is set, empty otherwise.
struct LongListEnds {
  const std::int64_t* base;
  const std::int64_t* limit;
  const int* left;
  __device__ std::int64_t operator[](std::int64_t x) const { return left[x] ? base[x] + limit[x] : base[x]; }
};

// The second round's lists (rows x of dist and index, k each) to rows row[x] of to_dist and
// to_index: a search of device memory writes them there rather than through the host.
__global__ void scatter_lists(const double* dist, const std::int64_t* index, const int* row, std::int64_t lists, std::int64_t k,
                              double* to_dist, std::int64_t* to_index) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lists * k;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t at = static_cast<std::int64_t>(row[i / k]) * k + i % k;
    to_dist[at] = dist[i];
    to_index[at] = index[i];
  }
}

}  // namespace

bool Tile::guessed() const { return fused && fused->tau_rank && fused->tau_rank < k; }

void small_k_init() {
  // Every rank_candidates: the second round's lists take kRankCapacity places.
  const int bytes = kRankCapacity * static_cast<int>(sizeof(double) + sizeof(std::int64_t));
  const auto allow = [&](auto kernel) { KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)); };
  allow(rank_candidates<Metric::l2, true>), allow(rank_candidates<Metric::l2, false>);
  allow(rank_candidates<Metric::l1, true>), allow(rank_candidates<Metric::l1, false>);
  allow(rank_candidates<Metric::cosine, true>), allow(rank_candidates<Metric::cosine, false>);
}

// Buffers of the two-pass path for a tile of qt queries; with host_lists, the page-locked lists too.
void fast_select_reserve(GpuContext& ctx, std::int64_t qt, std::int64_t k, bool host_lists, bool guessed, bool prune) {
  const auto rows = static_cast<std::size_t>(qt), items = rows * static_cast<std::size_t>(k);
  ctx.small.tau.resize(rows);
  ctx.small.tau_valid.resize(rows);
  ctx.small.cand.resize(rows * static_cast<std::size_t>(first_round_places(k, guessed)));
  if (prune) ctx.small.cand_bounds.resize(rows * static_cast<std::size_t>(first_round_places(k, guessed)));
  ctx.small.found.resize(rows);
  ctx.small.left.resize(rows);
  ctx.small.out_dist.resize(items);
  ctx.small.out_index.resize(items);
  for (auto& h : ctx.small.host) {
    if (host_lists) {
      h.dist.resize(items);
      h.index.resize(items);
    }
    h.left.resize(rows);
    h.found.resize(rows);
  }
}

// Steps (2)-(4) for k <= kFastK, first round, for one chunk of a tile (`t` describes the chunk,
// whose first query is row c0 of the tile), queued on `st`: results go to pinned host memory.
void fast_select_chunk(GpuContext& ctx, const Tile& t, std::int64_t c0, cudaStream_t st, StageTimer& timer) {
  SmallKWorkspace::HostResults& h = ctx.small.host[t.results];
  const std::int64_t rows = t.qt, k = t.k, cap = first_round_places(k, t.guessed());
  int capacity = 1;
  while (capacity < cap) capacity <<= 1;
  unsigned* tau = ctx.small.tau.get() + c0;
  const auto grid = static_cast<unsigned>(rows);
  Slots first{nullptr, nullptr, nullptr, cap, ctx.small.cand.get() + c0 * cap, ctx.small.found.get() + c0};
  if (t.prune) first.bounds = ctx.small.cand_bounds.get() + c0 * cap;
  // The fused path's tau comes from its sample: the sample's pass in the product kernel, or its
  // products, read whole; the others' from one step in sample_stride(k) of the tile's product.
  const bool sample_tau = t.fused && t.fused->sample_tau;
  // A guessed tau (FusedPlan::tau_rank below k) comes with the sample's valid one, for the queries
  // whose guess the ranking refutes.
  const int tau_rank = t.guessed() ? t.fused->tau_rank : static_cast<int>(k);
  unsigned* tau_valid = t.guessed() ? ctx.small.tau_valid.get() + c0 : nullptr;
  if (sample_tau) {
    launch_sample_tau(*t.fused, *t.fused->sample, first, static_cast<int>(rows), static_cast<int>(k), ctx.multiprocessors, ctx.fused.tau_keys,
                      tau, st);
  } else {
    const Bounds& tb = t.fused ? *t.fused->sample : t.bounds;
    const int stride = t.fused ? 1 : sample_stride(k);
    // Four keys a thread (a union of 1,024) where tau's rank is up to 256, and where it is a guess
    // of rank up to 256 with k up to 1,024: the fallback's valid tau is then only looser (one
    // thread may hold more than 4 of the sample's k smallest), and the union's sort a quarter of
    // 16 keys' (4,096).
    const bool four = k <= 256 || (tau_valid && tau_rank <= 256 && k <= 4 * kSelectThreads);
    with_pass_kind(tb, [&](auto vec, auto f32l2) {
      constexpr bool v = decltype(vec)::value, f = decltype(f32l2)::value;
      if (four) union_tau<4, v, f><<<grid, kSelectThreads, 0, st>>>(tb, tau_rank, stride, tau, static_cast<int>(k), tau_valid);
      else union_tau<16, v, f><<<grid, kSelectThreads, 0, st>>>(tb, tau_rank, stride, tau, static_cast<int>(k), tau_valid);
    });
    KNN_LAUNCHED(union_tau);
  }
  // Named apart, so that KNN_GPU_TIMING shows which pass gave tau.
  timer.mark(st, sample_tau ? "sample-tau" : "tau");
  if (t.fused) launch_fused(*t.fused, t.bounds, tau, first, static_cast<int>(rows), ctx.multiprocessors, st);
  else launch_collect(t.bounds, tau, first, static_cast<int>(rows), ctx.multiprocessors, st);
  timer.mark(st, "candidates");
  if (first.bounds) {
    prune_lists(first.index, first.bounds, first.count, static_cast<int>(rows), cap, static_cast<int>(k), st);
    timer.mark(st, "prune");
  }
  KNN_CUDA(cudaMemsetAsync(ctx.small.left.get() + c0, 0, static_cast<std::size_t>(rows) * sizeof(int), st));
  // The lists: straight into the caller's device lists, or into the workspace on their way to
  // page-locked memory.
  double* to_dist = t.lists ? t.lists->dist + t.q0 * k : ctx.small.out_dist.get() + c0 * k;
  std::int64_t* to_index = t.lists ? t.lists->index + t.q0 * k : ctx.small.out_index.get() + c0 * k;
  launch_rank(t.q, t.train, t.d, t.metric, first, static_cast<int>(rows), capacity, k, to_dist, to_index, ctx.small.left.get() + c0, st,
              TauGuess{tau_valid ? tau : nullptr, tau_valid});
  timer.mark(st, "rank");
  const auto items = static_cast<std::size_t>(rows * k);
  if (!t.lists) {
    KNN_CUDA(cudaMemcpyAsync(h.dist.get() + c0 * k, to_dist, items * sizeof(double), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaMemcpyAsync(h.index.get() + c0 * k, to_index, items * sizeof(std::int64_t), cudaMemcpyDeviceToHost, st));
  }
  KNN_CUDA(cudaMemcpyAsync(h.left.get() + c0, ctx.small.left.get() + c0, static_cast<std::size_t>(rows) * sizeof(int),
                           cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(h.found.get() + c0, ctx.small.found.get() + c0, static_cast<std::size_t>(rows) * sizeof(unsigned long long),
                           cudaMemcpyDeviceToHost, st));
  timer.mark(st, "download");
}

// v = n copies of x, in memory the kernel may back with huge pages: a fresh list of 80 MB

// After every chunk of the tile `t` was queued: waits for them, and runs a second round for the
// queries whose list overflowed. What the tile found is left in `r` for deliver(), which can run
// while the device works on the next tile (the second round needs this tile's products, so it
// runs before the next tile's product overwrites them; the fused path computes its products again).
// timing: print the wait for the device and the second round's counts (KNN_GPU_TIMING).
void fast_select_finish(GpuContext& ctx, const Tile& t, TileResults& res, bool timing) {
  cudaStream_t st = ctx.select_stream->s;
  const auto wait_start = std::chrono::steady_clock::now();
  KNN_CUDA(cudaStreamSynchronize(st));
  if (timing)
    std::fprintf(stderr, "gpu stages: waited %.3f ms for the tile's device work\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wait_start).count());
  const std::int64_t qt = t.qt, k = t.k, cap = first_round_places(k, t.guessed());
  const auto nq_tile = static_cast<std::size_t>(qt);
  res.q0 = t.q0;
  res.qt = qt;
  res.k = k;
  res.results = t.results;
  res.redone.clear();
  res.dist.clear();
  res.index.clear();
  const int* left = ctx.small.host[t.results].left.get();
  const unsigned long long* found = ctx.small.host[t.results].found.get();

  // Second round, for the queries whose list overflowed: collected again at their exact size,
  // in groups no larger than the first round's lists; ranked in shared memory when they fit, by
  // knn::prim's segmented sort otherwise.
  std::vector<int> rows;
  for (std::size_t i = 0; i < nq_tile; ++i)
    if (left[i]) rows.push_back(static_cast<int>(i));
  // Each query's candidates under its tau, as counted by the first round; where tau was a guess,
  // the ranking gave the queries it left a valid tau, whose candidates are counted now (a pass
  // that appends none).
  std::vector<unsigned long long> counted(found, found + nq_tile);
  if (t.guessed() && !rows.empty()) {
    const std::size_t g = rows.size();
    ctx.small.slot_row.resize(g);
    KNN_CUDA(cudaMemcpyAsync(ctx.small.slot_row.get(), rows.data(), g * sizeof(int), cudaMemcpyHostToDevice, st));
    const Slots counting{ctx.small.slot_row.get(), nullptr, nullptr, 0, ctx.small.cand.get(), ctx.small.found.get()};
    launch_fused(*t.fused, t.bounds, ctx.small.tau.get(), counting, static_cast<int>(g), ctx.multiprocessors, st);
    std::vector<unsigned long long> now(g);
    KNN_CUDA(cudaMemcpyAsync(now.data(), ctx.small.found.get(), g * sizeof(unsigned long long), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    for (std::size_t x = 0; x < g; ++x) counted[static_cast<std::size_t>(rows[x])] = now[x];
  }
  std::size_t on_sorted = 0;
  const std::int64_t group_places = std::max<std::int64_t>(qt * cap, 1);
  std::vector<int> group;
  std::vector<std::int64_t> base, limit;
  std::vector<double> gd;
  std::vector<std::int64_t> gi;
  for (std::size_t r = 0; r < rows.size();) {
    group.clear();
    base.clear();
    limit.clear();
    std::int64_t places = 0;
    while (r < rows.size() && (group.empty() || places + static_cast<std::int64_t>(counted[rows[r]]) <= group_places)) {
      group.push_back(rows[r]);
      base.push_back(places);
      limit.push_back(static_cast<std::int64_t>(counted[rows[r]]));
      places += limit.back();
      ++r;
    }
    const std::size_t g = group.size();
    ctx.small.slot_row.resize(g);
    ctx.small.slot_base.resize(g);
    ctx.small.slot_limit.resize(g);
    ctx.small.cand.resize(static_cast<std::size_t>(places));
    KNN_CUDA(cudaMemcpyAsync(ctx.small.slot_row.get(), group.data(), g * sizeof(int), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.small.slot_base.get(), base.data(), g * sizeof(std::int64_t), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.small.slot_limit.get(), limit.data(), g * sizeof(std::int64_t), cudaMemcpyHostToDevice, st));
    const Slots again{ctx.small.slot_row.get(), ctx.small.slot_base.get(), ctx.small.slot_limit.get(), 0, ctx.small.cand.get(), ctx.small.found.get()};
    if (t.fused) launch_fused(*t.fused, t.bounds, ctx.small.tau.get(), again, static_cast<int>(g), ctx.multiprocessors, st);
    else launch_collect(t.bounds, ctx.small.tau.get(), again, static_cast<int>(g), ctx.multiprocessors, st);
    KNN_CUDA(cudaMemsetAsync(ctx.small.left.get(), 0, g * sizeof(int), st));
    launch_rank(t.q, t.train, t.d, t.metric, again, static_cast<int>(g), kRankCapacity, k, ctx.small.out_dist.get(), ctx.small.out_index.get(),
                ctx.small.left.get(), st);
    // Lists longer than shared memory holds: their distances, then sorted by knn::prim's segmented
    // sort (each list is in row order) into the same rows of out_dist and out_index.
    std::vector<int> longer(g);
    KNN_CUDA(cudaMemcpyAsync(longer.data(), ctx.small.left.get(), g * sizeof(int), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    const auto long_lists = static_cast<std::size_t>(std::count(longer.begin(), longer.end(), 1));
    if (long_lists) {
      // collect() appends in no particular order: the lists are put in row order first, so that the
      // stable sort by distance breaks ties by the smaller row.
      const LongListEnds ends{ctx.small.slot_base.get(), ctx.small.slot_limit.get(), ctx.small.left.get()};
      ctx.small.row_ordered.resize(static_cast<std::size_t>(places));
      std::size_t bytes = 0;
      check_prim(knn::prim::segmented_sort_keys(nullptr, bytes, ctx.small.cand.get(), ctx.small.row_ordered.get(), places, static_cast<std::int64_t>(g),
                                                ctx.small.slot_base.get(), ends, 0, 64, st));
      ctx.temp.resize(bytes);
      check_prim(knn::prim::segmented_sort_keys(ctx.temp.get(), bytes, ctx.small.cand.get(), ctx.small.row_ordered.get(), places,
                                                static_cast<std::int64_t>(g), ctx.small.slot_base.get(), ends, 0, 64, st));
      Slots ordered = again;
      ordered.index = ctx.small.row_ordered.get();
      ctx.small.dist.resize(static_cast<std::size_t>(places));
      with_rows_kind(t.metric, t.d, t.q, t.train, [&](auto m, auto vec) {
        long_list_distances<decltype(m)::value, decltype(vec)::value><<<static_cast<unsigned>(g), kSelectThreads, 0, st>>>(
            t.q, t.train, t.d, ordered, ctx.small.left.get(), ctx.small.dist.get());
      });
      KNN_LAUNCHED(long_list_distances);
      rank_lists(ctx.rank, ctx.temp, ctx.small.dist.get(), ctx.small.row_ordered.get(), places, static_cast<std::int64_t>(g),
                 ctx.small.slot_base.get(), ends, ctx.small.left.get(), k, ctx.small.out_dist.get(), ctx.small.out_index.get(), st);
      on_sorted += long_lists;
    }
    if (t.lists) {
      // Rows x of out_dist and out_index are query slot_row[x]'s lists.
      scatter_lists<<<blocks_for(std::min<std::int64_t>(static_cast<std::int64_t>(g) * k, std::int64_t{1} << 24), 256), 256, 0, st>>>(
          ctx.small.out_dist.get(), ctx.small.out_index.get(), ctx.small.slot_row.get(), static_cast<std::int64_t>(g), k,
          t.lists->dist + t.q0 * k, t.lists->index + t.q0 * k);
      KNN_LAUNCHED(scatter_lists);
      continue;
    }
    gd.resize(g * static_cast<std::size_t>(k));
    gi.resize(g * static_cast<std::size_t>(k));
    KNN_CUDA(cudaMemcpyAsync(gd.data(), ctx.small.out_dist.get(), gd.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaMemcpyAsync(gi.data(), ctx.small.out_index.get(), gi.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    res.redone.insert(res.redone.end(), group.begin(), group.end());
    res.dist.insert(res.dist.end(), gd.begin(), gd.end());
    res.index.insert(res.index.end(), gi.begin(), gi.end());
  }
  if (timing) {
    // The first round's candidates as ranked (after prune_lists, where it ran), of the lists that held them all.
    unsigned long long ranked = 0;
    for (std::size_t i = 0; i < nq_tile; ++i)
      if (found[i] <= static_cast<unsigned long long>(cap)) ranked += found[i];
    std::fprintf(stderr, "gpu stages: %zu of %zu queries collected again, %zu of them ranked by the segmented sort; %.1f candidates a query ranked in the first round\n",
                 rows.size(), nq_tile, on_sorted, static_cast<double>(ranked) / static_cast<double>(std::max<std::size_t>(nq_tile, 1)));
  }
}

}  // namespace knn::cuda
