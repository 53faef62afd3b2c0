// Exact k-nearest-neighbour search on the GPU.
//
// Per tile of queries: (1) a cuBLAS product (fp32, or TF32 tensor cores) against all training
// rows gives each pair an approximate value, from which an upper and a lower bound of the
// defined distance follow (common/bounds.hpp); (2) per query, tau: a value with at least k upper
// bounds at or below it; (3) every row whose lower bound is <= tau is a candidate; (4) candidates
// are ranked by the defined distance (double, feature order, no FMA) and sorted by
// (distance, index). The argument of the CPU backend carries over: the candidates contain the
// true k nearest, ties included, so the result is bit-identical to the CPU backend's whatever the
// precision of step (1).
//
// For k up to kFastK, steps (2)-(4) read the product twice: each thread keeps the M smallest
// upper bounds it sees in registers and tau is the k-th smallest of their union (a subset's k-th
// smallest is never below the whole row's, so it is a valid tau, and a tight one unless one thread
// holds more than M of the k nearest); a second pass appends candidates to a per-query list of
// fixed capacity, and one block per query ranks and sorts its list in shared memory. Lists that
// overflow are collected again at their exact size. Larger k take the radix path: tau is each
// query's k-th upper bound exactly, from knn::prim::radix_select_kth reading the bounds as they are
// computed from the product; candidates are counted, offsets come from knn::prim's device scan,
// a block-wide scan writes them in index order, and knn::prim's stable segmented sort orders each
// query's list by distance.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <future>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <knn/prim/block/block_scan.cuh>
#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/device/device_reduce.cuh>
#include <knn/prim/device/device_scan.cuh>
#include <knn/prim/device/device_segmented_sort.cuh>

#include "arith/bounds.hpp"
#include "distributed/distributed.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/host_staging.hpp"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

// With KNN_GPU_TIMING set, a search runs its stages one after another and prints how long each
// took on the device (stderr, one line per tile): where the time goes, without a profiler.
class StageTimer {
 public:
  StageTimer() : on_(std::getenv("KNN_GPU_TIMING") != nullptr) {}
  bool on() const { return on_; }
  void mark(cudaStream_t st, const char* stage) {
    if (!on_) return;
    marks_.push_back(std::make_unique<Event>(cudaEventDefault));
    names_.push_back(stage);
    KNN_CUDA(cudaEventRecord(marks_.back()->e, st));
  }
  void report(std::int64_t queries, std::int64_t n) {
    if (!on_ || marks_.empty()) return;
    KNN_CUDA(cudaEventSynchronize(marks_.back()->e));
    std::string line = "gpu stages (" + std::to_string(queries) + " queries x " + std::to_string(n) + " rows, ms):";
    float total = 0.0f;
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0.0f;
      KNN_CUDA(cudaEventElapsedTime(&ms, marks_[i - 1]->e, marks_[i]->e));
      total += ms;
      char part[64];
      std::snprintf(part, sizeof part, " %s %.3f", names_[i], ms);
      line += part;
    }
    char end[32];
    std::snprintf(end, sizeof end, "; total %.3f", total);
    std::fprintf(stderr, "%s%s\n", line.c_str(), end);
    marks_.clear();
    names_.clear();
  }

 private:
  bool on_;
  std::vector<std::unique_ptr<Event>> marks_;
  std::vector<const char*> names_;
};

__device__ __forceinline__ unsigned ordered_key(float f) {
  const unsigned b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ float key_to_float(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? (key ^ 0x80000000u) : ~key);
}

// The defined distance: double, feature order, each operation rounded on its own.
__device__ double exact_distance(const float* a, const float* b, int d, int metric) {
  if (metric == 0) {
    double s = 0.0;
    for (int i = 0; i < d; ++i) {
      const double t = __dsub_rn(static_cast<double>(a[i]), static_cast<double>(b[i]));
      s = __dadd_rn(s, __dmul_rn(t, t));
    }
    return __dsqrt_rn(s);
  }
  if (metric == 1) {
    double s = 0.0;
    for (int i = 0; i < d; ++i) s = __dadd_rn(s, fabs(__dsub_rn(static_cast<double>(a[i]), static_cast<double>(b[i]))));
    return s;
  }
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (int i = 0; i < d; ++i) {
    const double x = a[i], y = b[i];
    ab = __dadd_rn(ab, __dmul_rn(x, y));
    aa = __dadd_rn(aa, __dmul_rn(x, x));
    bb = __dadd_rn(bb, __dmul_rn(y, y));
  }
  if (aa == 0.0 || bb == 0.0) return 1.0;
  return __dsub_rn(1.0, __ddiv_rn(ab, __dsqrt_rn(__dmul_rn(aa, bb))));
}

// Squared norms in double (for the bounds; any summation order will do), one warp per row.
__global__ void squared_norms(const float* x, std::int64_t rows, int d, double* out) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* r = x + row * d;
  double s = 0.0;
  for (int i = lane; i < d; i += 32) s += static_cast<double>(r[i]) * r[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) out[row] = s;
}

// Squared norms rounded up and down to float, for the float bounds of l2.
__global__ void round_norms(const double* norms, std::int64_t n, float* up, float* dn) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  up[i] = __double2float_ru(norms[i]);
  dn[i] = __double2float_rd(norms[i]);
}

// x rounded to TF32 (10 explicit mantissa bits), to nearest, ties away from zero; infinities and
// NaN as they are. (Bit arithmetic rather than cvt.rna.tf32: the same result on any architecture.)
__device__ __forceinline__ float round_tf32(float x) {
  const unsigned b = __float_as_uint(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return __uint_as_float((b + 0x1000u) & 0xffffe000u);
}

// Float32's products on TF32 tensor cores: each value x of the rows x d matrix becomes hi and lo,
// hi = x rounded to TF32 and lo = x - hi (exact) rounded to TF32, laid out in rows of 3d so that
// one product of 3d terms gives q_hi.t_hi + q_hi.t_lo + q_lo.t_hi (split_tf32_dot_bound):
// training rows as [hi | lo | hi], queries as [hi | hi | lo]. A value that overflows in the
// rounding gives an infinite hi and a NaN product: the bounds keep such a row.
__global__ void split_tf32(const float* x, std::int64_t rows, int d, bool query_layout, float* out) {
  const std::int64_t count = rows * d;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / d;
    const int j = static_cast<int>(i - r * d);
    const float v = x[i], hi = round_tf32(v), lo = round_tf32(v - hi);
    float* o = out + r * 3 * d + j;
    o[0] = hi;
    o[d] = query_layout ? hi : lo;
    o[2 * d] = query_layout ? lo : hi;
  }
}

void split_rows(const float* x, std::int64_t rows, int d, bool query_layout, float* out, cudaStream_t st) {
  if (rows == 0) return;
  split_tf32<<<blocks_for(std::min<std::int64_t>(rows * d, std::int64_t{1} << 26), 256), 256, 0, st>>>(x, rows, d, query_layout,
                                                                                                       out);
  KNN_LAUNCHED(split_tf32);
}

// l2's float bound (Bounds::Row::l2_bound) from v = q.t, the query's and the training row's
// squared norms rounded the bound's way (qn, tnj), 1 +- c rounded so (c) and the absolute margin
// rounded up (abs_up).
template <bool Upper>
__device__ __forceinline__ float l2_float_bound(float v, float qn, float tnj, float c, float abs_up) {
  const float m2v = -2.0f * v;  // exact, unless it overflows
  float b;
  if (Upper) {
    b = __fadd_ru(__fadd_ru(__fmul_ru(__fadd_ru(qn, tnj), c), m2v), abs_up) + 0.0f;
    if (isnan(b) || isinf(m2v)) b = INFINITY;
  } else {
    b = __fadd_rd(__fadd_rd(__fmul_rd(__fadd_rd(qn, tnj), c), m2v), -abs_up) + 0.0f;
    if (isnan(b) || isinf(m2v)) b = -INFINITY;
  }
  return b;
}

// Bounds of the defined distance from a pair's approximate value s (metric 0: q.t for l2;
// 2: q.t for cosine; 1: the float l1 sum). U is rounded up and L down to float, so
// L <= defined <= U holds in float too. An excluded row gets NaN for both: NaN's ordered key is
// above +inf's, so it is never counted for tau nor taken as a candidate.
struct Bounds {
  const float* s;  // qt x n, row-major
  std::int64_t n;
  int metric;
  const double* qn;
  const double* tn;
  double c;
  const std::int64_t* exclude;  // indexed by q0 + row, or null
  std::int64_t q0;
  // l2 in float (the two-pass path): the training rows' squared norms rounded up and down to
  // float, and 1 + c rounded up, 1 - c rounded down.
  const float* tn_up = nullptr;
  const float* tn_dn = nullptr;
  float c_up = 1.0f, c_dn = 1.0f;
  // Absolute margins, for what underflow loses (bounds.hpp): l2's on a squared distance
  // (l2_underflow), in double and rounded up to float; cosine's from dot_underflow for d
  // features.
  double l2_abs = 0.0;
  float l2_abs_up = 0.0f;
  int d = 0;
  std::int64_t pitch = 0;  // floats from one query's values in s to the next (n, or more)

  // One query's bounds, with what is constant along its row read once.
  struct Row {
    const float* s;  // the query's approximate values
    const double* tn;
    double qn, c, l2_abs;
    std::int64_t n, excluded;
    int metric, d;
    const float* tn_up;
    const float* tn_dn;
    float qn_up, qn_dn, c_up, c_dn, l2_abs_up;

    // l2's upper (Upper) or lower bound of the squared distance from v = q.t and the training
    // row's squared norm rounded the same way, in float with every operation rounded away from
    // the true value: (|q|^2 + |t|^2)(1 +- c) - 2 q.t +- l2_abs bounds it as the double form of
    // at() does, with a few float roundings more (each 2^-24 of the norms, against c >= d 2^-24). A
    // product that overflowed gives NaN or an infinite bound: the row is kept (upper +inf,
    // lower -inf). Rows past the end and the excluded row are the caller's (masked()).
    template <bool Upper>
    __device__ float l2_bound(float v, float tnj) const {
      return l2_float_bound<Upper>(v, Upper ? qn_up : qn_dn, tnj, Upper ? c_up : c_dn, l2_abs_up);
    }

    // Rows past the end and the excluded row get NaN for both bounds: NaN's ordered key is above
    // +inf's, so they are never counted for tau nor taken as candidates.
    __device__ bool masked(std::int64_t j) const { return j == excluded || j >= n; }

    // Bounds of a training row from its approximate value v and squared norm tnj (masked() is
    // the caller's).
    __device__ void at(double v, double tnj, float& u, float& l) const {
      double a, e;
      if (metric == 0) {
        const double norms = qn + tnj;
        a = norms - 2.0 * v;
        e = c * norms + l2_abs;
      } else if (metric == 2) {
        const double nq = sqrt(qn), nt = sqrt(tnj);
        const bool zero = nq == 0.0 || nt == 0.0;  // the defined distance is 1, exactly
        a = zero ? 1.0 : 1.0 - v / (nq * nt);
        e = zero ? c : c + detail::dot_underflow(d, nq, nt) / (nq * nt);
      } else {
        a = v;
        e = c * v;
      }
      u = __double2float_ru(a + e) + 0.0f;  // + 0.0f: -0 becomes +0, so key order is float order
      l = __double2float_rd(a - e) + 0.0f;
      if (!(l <= u) || isinf(u) || isinf(l) || isnan(a)) {  // overflow in the fast pass: keep the row
        u = INFINITY;
        l = -INFINITY;
      }
    }

    // Bounds of training row j of this query's tile: NaN for both when masked().
    __device__ void bounds_at(std::int64_t j, float& u, float& l) const {
      at(s[j], metric == 1 ? 0.0 : tn[j], u, l);
      if (masked(j)) u = l = NAN;
    }
  };

  __device__ Row row_of(int row) const {
    const double q = qn[row];
    const std::int64_t at = static_cast<std::int64_t>(row) * pitch;
    return Row{s + at, tn, q, c, l2_abs, n, exclude ? exclude[q0 + row] : -1, metric, d, tn_up, tn_dn,
               __double2float_ru(q), __double2float_rd(q), c_up, c_dn, l2_abs_up};
  }

  __device__ void operator()(int row, std::int64_t j, float& u, float& l) const { row_of(row).bounds_at(j, u, l); }
};

// float l1 sums of a tile of queries against all training rows: 16 x 16 pairs per block.
__global__ void l1_sums(const float* q, const float* t, std::int64_t qt, std::int64_t n, int d, float* out) {
  __shared__ float qs[16][33];
  __shared__ float ts[16][33];
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.y) * 16 + threadIdx.y;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * 16 + threadIdx.x;
  const std::int64_t jt = static_cast<std::int64_t>(blockIdx.x) * 16 + threadIdx.y;  // row this thread loads
  float s = 0.0f;
  for (int f0 = 0; f0 < d; f0 += 32) {
    for (int f = threadIdx.x; f < 32; f += 16) {
      const int ff = f0 + f;
      qs[threadIdx.y][f] = (i < qt && ff < d) ? q[i * d + ff] : 0.0f;
      ts[threadIdx.y][f] = (jt < n && ff < d) ? t[jt * d + ff] : 0.0f;
    }
    __syncthreads();
    for (int f = 0; f < 32; ++f) s += fabsf(qs[threadIdx.y][f] - ts[threadIdx.x][f]);
    __syncthreads();
  }
  if (i < qt && j < n) out[i * n + j] = s;
}

// The upper bounds of a tile's rows as knn::prim::radix_select_kth reads its input: row(q)(j) is
// query q's upper bound for training row j, NaN for a masked row (above +inf in the select's
// order, so never counted).
struct UpperBounds {
  Bounds b;
  struct Row {
    Bounds::Row r;
    __device__ float operator()(long long j) const {
      float u, l;
      r.bounds_at(j, u, l);
      return u;
    }
  };
  __device__ Row row(long long q) const { return Row{b.row_of(static_cast<int>(q))}; }
};

// tau key per query from its k-th upper bound: at least k rows lie at or below it. A NaN (fewer
// than k rows not masked) or infinite k-th bound makes every row with a lower bound a candidate.
__global__ void tau_from_kth(const float* kth, std::int64_t qt, unsigned* tau) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < qt) tau[i] = min(ordered_key(kth[i]), ordered_key(INFINITY));
}

constexpr int kScanThreads = 256;

__global__ void count_candidates(Bounds b, const unsigned* tau, std::int64_t* count) {
  __shared__ unsigned long long total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  const int row = blockIdx.x;
  const unsigned t = tau[row];
  unsigned long long c = 0;
  for (std::int64_t j = threadIdx.x; j < b.n; j += blockDim.x) {
    float u, l;
    b(row, j, u, l);
    c += ordered_key(l) <= t;
  }
  atomicAdd(&total, c);
  __syncthreads();
  if (threadIdx.x == 0) count[row] = static_cast<std::int64_t>(total);
}

__global__ void write_candidates(Bounds b, const unsigned* tau, const std::int64_t* offset, std::int64_t* cand_index,
                                 int* cand_query) {
  using Scan = knn::prim::BlockScan<std::int64_t, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  const int row = blockIdx.x;
  const unsigned t = tau[row];
  std::int64_t base = offset[row];
  for (std::int64_t j0 = 0; j0 < b.n; j0 += kScanThreads) {
    const std::int64_t j = j0 + threadIdx.x;
    std::int64_t flag[1] = {0};
    if (j < b.n) {
      float u, l;
      b(row, j, u, l);
      flag[0] = ordered_key(l) <= t ? 1 : 0;
    }
    std::int64_t pos[1];
    std::int64_t total;
    Scan(temp).exclusive_scan(flag, pos, std::int64_t{0}, knn::prim::Sum{}, total);
    if (flag[0]) {
      cand_index[base + pos[0]] = j;
      cand_query[base + pos[0]] = row;
    }
    base += total;
    __syncthreads();
  }
}

__global__ void exact_distances(const float* q, const float* t, int d, int metric, const std::int64_t* cand_index,
                                const int* cand_query, std::int64_t count, double* dist) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  dist[i] = exact_distance(q + static_cast<std::int64_t>(cand_query[i]) * d, t + cand_index[i] * d, d, metric);
}

__device__ __forceinline__ bool before_pair(double da, std::int64_t ia, double db, std::int64_t ib) {
  return da < db || (da == db && ia < ib);
}

// Sorts `size` (a power of two) pairs in shared memory by (distance, index), ascending.
__device__ void block_sort_pairs(double* sd, std::int64_t* si, int size) {
  for (int len = 2; len <= size; len <<= 1)
    for (int stride = len >> 1; stride > 0; stride >>= 1) {
      for (int x = threadIdx.x; x < size; x += blockDim.x) {
        const int y = x ^ stride;
        if (y > x) {
          const bool up = (x & len) == 0;
          const bool swap = up ? before_pair(sd[y], si[y], sd[x], si[x]) : before_pair(sd[x], si[x], sd[y], si[y]);
          if (swap) {
            const double td = sd[x];
            sd[x] = sd[y];
            sd[y] = td;
            const std::int64_t ti = si[x];
            si[x] = si[y];
            si[y] = ti;
          }
        }
      }
      __syncthreads();
    }
}

__device__ __forceinline__ int pow2_at_least(std::int64_t m) {
  int size = 1;
  while (size < m) size <<= 1;
  return size;
}

// The first k of each sorted list (list x starts at begins[x] and holds at least k), to rows x of
// out_dist and out_index; with `only`, the lists x with only[x] set alone.
template <class BeginIt>
__global__ void take_first_k(const double* sorted_dist, const std::int64_t* sorted_index, BeginIt begins, const int* only,
                             std::int64_t lists, std::int64_t k, double* out_dist, std::int64_t* out_index) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lists * k;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t x = i / k;
    if (only && !only[x]) continue;
    const std::int64_t at = begins[x] + i % k;
    out_dist[i] = sorted_dist[at];
    out_index[i] = sorted_index[at];
  }
}

// Lists [begins[x], ends[x]) of candidates (distance, training row), each in row order, sorted by
// (distance, row) with knn::prim's stable segmented sort, and the first k of each (of those with
// only[x] set, when `only` is given) written to rows x of ctx.out_dist and ctx.out_index, which
// hold lists x k places. Uses ctx.sorted_dist, ctx.sorted_index and ctx.temp.
template <class BeginIt, class EndIt>
void rank_lists(GpuContext& ctx, const double* dist, const std::int64_t* index, std::int64_t places, std::int64_t lists,
                BeginIt begins, EndIt ends, const int* only, std::int64_t k, cudaStream_t st) {
  ctx.sorted_dist.resize(static_cast<std::size_t>(places));
  ctx.sorted_index.resize(static_cast<std::size_t>(places));
  std::size_t bytes = 0;
  check_prim(knn::prim::segmented_sort_pairs(nullptr, bytes, dist, ctx.sorted_dist.get(), index, ctx.sorted_index.get(), places, lists,
                                             begins, ends, 0, 64, st));
  ctx.temp.resize(bytes);
  check_prim(knn::prim::segmented_sort_pairs(ctx.temp.get(), bytes, dist, ctx.sorted_dist.get(), index, ctx.sorted_index.get(), places,
                                             lists, begins, ends, 0, 64, st));
  take_first_k<<<blocks_for(std::min<std::int64_t>(lists * k, std::int64_t{1} << 24), 256), 256, 0, st>>>(
      ctx.sorted_dist.get(), ctx.sorted_index.get(), begins, only, lists, k, ctx.out_dist.get(), ctx.out_index.get());
  KNN_LAUNCHED(take_first_k);
}

// ---- The path for k <= kFastK: two reads of the product, candidates ranked per query block ----

constexpr int kSelectThreads = 256;
constexpr int kFastK = 2048;          // k up to this takes the two-pass path
constexpr int kRankCapacity = 4096;   // candidates ranked in shared memory per query (64 KiB)
constexpr unsigned kNoKey = 0xFFFFFFFFu;  // above every float's ordered key, NaN's included

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
      } else if (r.metric != 1) {
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
        else t[x][e] = in && r.metric != 1 ? r.tn[p + e] : 0.0;
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
template <int M, bool Vec, bool F32L2>
__global__ void __launch_bounds__(kSelectThreads) union_tau(Bounds b, int k, int stride, unsigned* tau) {
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
        unsigned key = isnan(u[x][e]) ? kNoKey : ordered_key(u[x][e]);
        if (key < best[M - 1]) {
#pragma unroll
          for (int m = 0; m < M; ++m) {  // insert, keeping best ascending; the largest drops out
            const unsigned lo = min(best[m], key);
            key = max(best[m], key);
            best[m] = lo;
          }
        }
      }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) keys[m * kSelectThreads + threadIdx.x] = best[m];
  __syncthreads();
  for (int len = 2; len <= kUnion; len <<= 1)  // bitonic sort of the union, ascending
    for (int stride = len >> 1; stride > 0; stride >>= 1) {
      for (int x = threadIdx.x; x < kUnion; x += kSelectThreads) {
        const int y = x ^ stride;
        if (y > x) {
          const unsigned a = keys[x], c = keys[y];
          if (((x & len) == 0) == (c < a)) {
            keys[x] = c;
            keys[y] = a;
          }
        }
      }
      __syncthreads();
    }
  if (threadIdx.x == 0) tau[row] = min(keys[k - 1], ordered_key(INFINITY));
}

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
  __device__ int row_of(int s) const { return row ? row[s] : s; }
  __device__ std::int64_t base_of(int s) const { return base ? base[s] : static_cast<std::int64_t>(s) * cap; }
  __device__ std::int64_t limit_of(int s) const { return limit ? limit[s] : cap; }
};

// Appends each row whose lower bound is <= tau to its query's list, counting all of them
// (slots.count, zeroed before). A block takes kCollectQueries slots over one part of the
// training rows (blockIdx.y of gridDim.y), so each norm it loads serves all of them; the row's
// end and the excluded row are tested only in the steps that hold them, and lower bounds are
// compared with tau as floats. (H200, 10^6 x 128, TF32, k = 10: 3.04 ms a 2,147-query tile with
// one query a block and those tests on every value, 2.05 ms so, near the memory's bandwidth.) A
// warp reserves places for all its finds of a step with one atomic.
constexpr int kCollectQueries = 4;
template <bool Vec, bool F32L2>
__global__ void __launch_bounds__(kSelectThreads) collect(Bounds b, const unsigned* tau, Slots slots, int slot_count) {
  const int first_slot = static_cast<int>(blockIdx.x) * kCollectQueries;
  const int here = min(kCollectQueries, slot_count - first_slot);
  const std::int64_t steps = (b.n + kStep - 1) / kStep, per_part = (steps + gridDim.y - 1) / gridDim.y;
  const std::int64_t j_begin = blockIdx.y * per_part * kStep, j_end = min(b.n, (blockIdx.y + 1) * per_part * kStep);
  const int lane = threadIdx.x % 32;
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
      const int mine = __popc(flags);
      int upto = mine;  // inclusive scan over the warp
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, upto, o);
        if (lane >= o) upto += y;
      }
      const int warp_total = __shfl_sync(0xffffffffu, upto, 31);
      if (warp_total == 0) continue;
      unsigned long long first = 0;
      if (lane == 31) first = atomicAdd(slots.count + slot, static_cast<unsigned long long>(warp_total));
      first = __shfl_sync(0xffffffffu, first, 31);
      std::int64_t pos = static_cast<std::int64_t>(first) + (upto - mine);
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

// Per slot: the defined distance of each candidate, sorted by (distance, index) in shared
// memory, the first k written. A list that overflowed, or is longer than `capacity`, is left
// (flag set) for the next round.
__global__ void __launch_bounds__(kSelectThreads) rank_candidates(const float* q, const float* t, int d, int metric,
                                                                 Slots slots, int capacity, std::int64_t k,
                                                                 double* out_dist, std::int64_t* out_index, int* left) {
  extern __shared__ double rank_smem[];
  double* sd = rank_smem;
  auto* si = reinterpret_cast<std::int64_t*>(rank_smem + capacity);
  const int slot = blockIdx.x, row = slots.row_of(slot);
  const auto m = static_cast<std::int64_t>(slots.count[slot]);
  if (m > slots.limit_of(slot) || m > capacity) {
    if (threadIdx.x == 0) left[slot] = 1;
    return;
  }
  const std::int64_t base = slots.base_of(slot);
  const int size = pow2_at_least(m);
  const float* qr = q + static_cast<std::int64_t>(row) * d;
  for (int x = threadIdx.x; x < size; x += blockDim.x) {
    if (x < m) {
      const std::int64_t i = slots.index[base + x];
      sd[x] = exact_distance(qr, t + i * d, d, metric);
      si[x] = i;
    } else {
      sd[x] = INFINITY;
      si[x] = INT64_MAX;
    }
  }
  __syncthreads();
  block_sort_pairs(sd, si, size);
  for (std::int64_t x = threadIdx.x; x < k; x += blockDim.x) {
    out_dist[static_cast<std::int64_t>(slot) * k + x] = sd[x];
    out_index[static_cast<std::int64_t>(slot) * k + x] = si[x];
  }
}

// The squared norms of n training rows on the device: in double (the bounds' double form), and
// rounded up and down to float (l2's float bounds).
struct TrainNorms {
  // Device bytes a training row takes besides its values.
  static constexpr std::size_t row_bytes = sizeof(double) + 2 * sizeof(float);
  DeviceArray<double> exact;
  DeviceArray<float> up, dn;
  void compute(const float* rows, std::int64_t n, int d, cudaStream_t st) {
    exact.resize(static_cast<std::size_t>(n));
    up.resize(static_cast<std::size_t>(n));
    dn.resize(static_cast<std::size_t>(n));
    squared_norms<<<blocks_for(n * 32, 256), 256, 0, st>>>(rows, n, d, exact.get());
    KNN_LAUNCHED(squared_norms);
    round_norms<<<blocks_for(n, 256), 256, 0, st>>>(exact.get(), n, up.get(), dn.get());
    KNN_LAUNCHED(round_norms);
  }
};

// Whether float32 products on `device` are taken from split operands on TF32 tensor cores
// (compute capability 8.0 or later). KNN_GPU_SGEMM=1 keeps cuBLAS's float32 product instead, for
// comparisons.
bool split_products(int device) {
  if (const char* v = std::getenv("KNN_GPU_SGEMM"); v && std::string(v) == "1") return false;
  int major = 0;
  KNN_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 8;
}

// Training rows and their squared norms in device memory; for float32 searches on tensor cores,
// their TF32 parts too (three times the rows' bytes more).
// The fused pass (fused_collect, below) takes l2 products of at most kFusedMaxTerms terms, and by
// default only against kFusedDefaultRows training rows or more.
constexpr int kFusedMaxTerms = 128;  // product terms (features, or 3 x features for split operands)
constexpr std::int64_t kFusedDefaultRows = 1000000;
// Halves an FP16 training row takes: d rounded up to 8, so that rows start 16-byte aligned.
constexpr int fp16_pitch(int d) { return (d + 7) / 8 * 8; }
// What the fused pass reads of the training rows besides them: their largest squared norm
// (rounded up) into max_tn, and with `half` their FP16 operands (fp16_rows) into rows_h; queued on
// st, with `temp` for the reduction.
void prepare_fused_rows(const float* rows, const TrainNorms& norms, std::int64_t n, int d, bool half, DeviceArray<unsigned char>& temp,
                        DeviceArray<float>& max_tn, DeviceArray<__half>& rows_h, cudaStream_t st);

class DeviceTrain final : public PreparedTrain {
 public:
  DeviceTrain(const Matrix& train, int device, bool with_split, bool with_half)
      : device_(device), rows_(train.rows), cols_(train.cols) {
    KNN_CUDA(cudaSetDevice(device));
    rows.resize(train.values.size());
    KNN_CUDA(cudaMemcpy(rows.get(), train.values.data(), train.values.size() * sizeof(float), cudaMemcpyHostToDevice));
    finish(with_split, with_half);
  }
  // From rows already on the device (taken from `values`), once the work on `st` has finished.
  DeviceTrain(DeviceArray<float>& values, std::size_t n, std::size_t d, int device, bool with_split, bool with_half, cudaStream_t st)
      : device_(device), rows_(n), cols_(d) {
    KNN_CUDA(cudaSetDevice(device));
    KNN_CUDA(cudaStreamSynchronize(st));
    rows.swap(values);
    finish(with_split, with_half);
  }
  bool fits(const Matrix& m, int device) const { return device == device_ && m.rows == rows_ && m.cols == cols_; }
  DeviceArray<float> rows;
  DeviceArray<float> split;  // n x 3d, [hi | lo | hi], or empty
  TrainNorms norms;
  // For TF32 searches that take the fused pass by default (keeps_half): the largest squared norm
  // and the FP16 operands, made once here instead of in every search; else empty.
  DeviceArray<float> max_tn;
  DeviceArray<__half> half;

 private:
  void finish(bool with_split, bool with_half) {
    const auto n = static_cast<std::int64_t>(rows_);
    const int d = static_cast<int>(cols_);
    norms.compute(rows.get(), n, d, 0);
    if (with_split) {
      split.resize(rows_ * cols_ * 3);
      split_rows(rows.get(), n, d, false, split.get(), 0);
    }
    if (with_half) {
      DeviceArray<unsigned char> temp;
      prepare_fused_rows(rows.get(), norms, n, d, true, temp, max_tn, half, 0);
      KNN_CUDA(cudaDeviceSynchronize());  // before temp goes
    }
    KNN_CUDA(cudaDeviceSynchronize());
  }
  int device_;
  std::size_t rows_, cols_;
};

}  // namespace

// Whether rows kept for searches with `options` keep their TF32 parts too (float32 on tensor cores).
bool keeps_split(const BackendOptions& options, int device) {
  return options.precision == Precision::fp32 && split_products(device);
}

// Whether they keep their FP16 operands too: TF32 searches of the shapes where the fused pass is
// the default for small k (2 bytes a value more, against 4 more a value for the float32 parts).
bool keeps_half(const BackendOptions& options, std::size_t rows, std::size_t cols) {
  return options.precision == Precision::tf32 && cols <= static_cast<std::size_t>(kFusedMaxTerms) &&
         rows >= static_cast<std::size_t>(kFusedDefaultRows);
}

bool gpu_keeps(std::size_t rows, std::size_t cols, const BackendOptions& options, int device) {
  std::size_t free_bytes = 0, total_bytes = 0;
  KNN_CUDA(cudaSetDevice(device));
  KNN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave most of the memory (or of the budget) to the search's workspace; a set this large is
  // uploaded per search, in parts when it does not fit.
  const std::size_t bytes = rows * cols * sizeof(float) * (keeps_split(options, device) ? 4 : 1) + rows * TrainNorms::row_bytes +
                            (keeps_half(options, rows, cols) ? rows * fp16_pitch(static_cast<int>(cols)) * sizeof(__half) : 0);
  return bytes <= free_bytes / 4 && !(options.device_memory_budget && bytes > options.device_memory_budget / 2);
}

std::shared_ptr<const PreparedTrain> gpu_prepare(const Matrix& train, const BackendOptions& options, int device) {
  if (!gpu_keeps(train.rows, train.cols, options, device)) return nullptr;
  return std::make_shared<DeviceTrain>(train, device, keeps_split(options, device), keeps_half(options, train.rows, train.cols));
}

std::shared_ptr<const PreparedTrain> gpu_prepare_device(DeviceArray<float>& values, std::size_t rows, std::size_t cols,
                                                        const BackendOptions& options, int device, cudaStream_t st) {
  return std::make_shared<DeviceTrain>(values, rows, cols, device, keeps_split(options, device), keeps_half(options, rows, cols), st);
}

GpuContext::GpuContext(int device_id) : device(device_id) {
  KNN_CUDA(cudaSetDevice(device));
  stream = std::make_unique<Stream>();
  select_stream = std::make_unique<Stream>();
  copy_stream = std::make_unique<Stream>();
  blas = std::make_unique<Blas>();
  tensor_cores = split_products(device);
  KNN_CUDA(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  check_blas(cublasSetStream(blas->h, stream->s), "cublasSetStream");
  KNN_CUDA(cudaFuncSetAttribute(rank_candidates, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                kRankCapacity * static_cast<int>(sizeof(double) + sizeof(std::int64_t))));
}

std::shared_ptr<GpuContext> make_gpu_context(int device) { return std::make_shared<GpuContext>(device); }

namespace {

// count floats from host memory to dst through the next staging buffer; `st` waits for them.
void upload_queries(GpuContext& ctx, float* dst, const float* src, std::size_t count, cudaStream_t st) {
  const int which = ctx.next_stage;
  ctx.next_stage ^= 1;
  PinnedArray<float>& stage = ctx.stage[which];
  if (ctx.stage_used[which]) KNN_CUDA(cudaEventSynchronize(ctx.staged[which].e));
  stage.resize(count);
  parallel_copy(stage.get(), src, count * sizeof(float));
  KNN_CUDA(cudaMemcpyAsync(dst, stage.get(), count * sizeof(float), cudaMemcpyHostToDevice, ctx.copy_stream->s));
  KNN_CUDA(cudaEventRecord(ctx.staged[which].e, ctx.copy_stream->s));
  ctx.stage_used[which] = true;
  KNN_CUDA(cudaStreamWaitEvent(st, ctx.staged[which].e, 0));
}

// What a tile of queries needs on the device: the product's bounds, and the data to rank with.
struct Tile {
  Bounds bounds;
  const float* q;      // qt x d queries
  const float* train;  // n x d training rows
  std::int64_t q0, qt, n, k;
  int d, metric;
  int results;  // the set of ctx.host its first-round results go to
  const struct FusedPlan* fused = nullptr;  // set: candidates by fused_collect, tau from its sample
};

// First-round places per query: room for the k nearest and what ties with them within the
// margin; most queries need far fewer.
std::int64_t first_round_places(std::int64_t k) { return std::min<std::int64_t>(2 * k + 256, kRankCapacity); }

// f(vec, f32l2) with both as compile-time constants: rows that start 16-byte aligned load as
// float4, and l2 takes the float bounds.
template <typename F>
void with_pass_kind(const Bounds& b, F&& f) {
  using T = std::true_type;
  using N = std::false_type;
  const bool vec = b.pitch % 4 == 0, l2 = b.metric == 0;
  if (vec && l2) f(T{}, T{});
  else if (vec) f(T{}, N{});
  else if (l2) f(N{}, T{});
  else f(N{}, N{});
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

// ---- Products and candidates in one kernel: l2, small k, up to 128 product terms ----
//
// With few features a product is cheap to compute and dear to keep: 10^6 x 128 in TF32 writes
// 8.6 GB a 2,147-query tile, which the candidate pass then reads back, and the two transfers
// take more time than the tensor cores do. Here a block holds the operand rows of 256 queries in
// shared memory, streams the training rows through in stages of 128 (cp.async, in chunks of 32
// terms through a ring of four buffers), takes each 256 x 128 product on tensor cores (mma.sync
// m16n8k8 on TF32 operands, or m16n8k16 on FP16 ones; 16 warps of 64 x 32) and tests every pair's
// lower bound against tau at once: no
// product leaves the SM. tau must be known first; it comes from a cuBLAS product with every
// stride-th training row (fused_stride()).
//
// How it got here (H200, 10^4 queries against 10^6 x 128, TF32, the pass alone): 38.3 ms with 8
// warps of 64 x 32 and two whole-stage buffers, latency-bound; 28.8 with 32 warps of 32 x 16.
// Nsight Compute then showed 39% of the instructions were register moves that put A's values in
// the order the MMA takes them, so the queries are now stored in that order (fused_fill_queries):
// 7.7 instead of 13.0 billion instructions, but no faster, since half the stalls were waits on
// shared-memory loads; a 64 x 32 warp tile reads half as much shared memory a product step,
// and took the pass to 21.1 ms (about 120 TFLOPS; mma.sync's own TF32 peak measured 319 TFLOPS on
// this GPU). A version on Hopper's wgmma (commit a476f27) was no faster than the 8-warp one.
// FP16 operands (TF32 searches, below) then took it to 14.3 ms: twice the MMA rate, half the
// shared-memory bytes, and half the barriers (64-term chunks).
// It also keeps less device memory than the written products: a tile holds only the sample's.
//
// The product is the same sum as cuBLAS's in another order: the bounds hold for any order
// (tf32_dot_bound, split_tf32_dot_bound: inputs cut to TF32 by rounding or truncation, either).
// Within each 32 terms a thread loads 8 consecutive values of a training row with two 16-byte
// loads and feeds them to four k-steps (two per load), pairing A's and B's values of the same
// term (fused_term); which term sits in which of the MMA's 8 places does not change the sum's
// terms.
constexpr int kFusedQueries = 256;   // queries a block (their operand rows stay in shared memory)
constexpr int kFusedRows = 128;      // training rows a stage
constexpr int kFusedChunk = 32;      // product terms a chunk of a stage (the unit of the copy ring)
constexpr int kFusedRing = 4;        // chunk buffers: one multiplied while three are copied
constexpr int kFusedThreads = 512;   // 16 warps: 4 x 4 over the 256 x 128 stage, 64 x 32 each

// FP16 operands (TF32 searches, by default): the same 10 mantissa bits as TF32 at twice mma.sync's
// rate (m16n8k16; H200: 639 against 319 TFLOPS) and half the shared-memory bytes a term. Their
// range is the catch: each query row is scaled by a power of 2 that puts its largest possible
// value just under 2^15, the training rows by one for all of them (from the largest squared
// norm), and fused_fp16_limits() turns what rounding to FP16 loses, subnormals included, into
// each query's bound. A chunk holds 64 terms (32 when there are only 32), 128 bytes a row with no
// padding: the 16-byte words of odd rows are swizzled (word w at w ^ 4) so that a quarter warp's
// loads from two rows fall in distinct banks.
constexpr int kFp16MinExponent = -40;  // rows smaller than 2^-40 are scaled as if they were that large

template <bool Half>
__host__ __device__ constexpr int fused_chunk_terms(int kp) { return Half ? (kp < 64 ? kp : 64) : kFusedChunk; }
// Elements a training row takes in a chunk buffer: kFusedChunk + 4 floats (so that the 16-byte
// loads of a quarter warp fall in distinct banks), or the chunk's halves (swizzled).
template <bool Half>
__host__ __device__ constexpr int fused_chunk_stride(int kp) { return Half ? fused_chunk_terms<true>(kp) : kFusedChunk + 4; }

// Dynamic shared memory of fused_collect for kp product terms (32, 64 or 128): the queries
// (A-fragment order) and the ring of chunks. 200 KiB at kp = 128 with TF32 operands, 128 with FP16.
template <bool Half>
constexpr std::size_t fused_smem_bytes(int kp) {
  const std::size_t element = Half ? 2 : 4;
  return (static_cast<std::size_t>(kFusedQueries) * kp + static_cast<std::size_t>(kFusedRing) * kFusedRows * fused_chunk_stride<Half>(kp)) *
         element;
}

struct FusedArgs {
  const float* q;   // operand rows of the tile's queries, kdim floats each
  const float* t;   // operand rows of the training set, kdim floats each
  const __half* th; // FP16 operands: the training rows scaled (fp16_rows), kh halves each; else null
  int kdim;         // product terms (zero-filled up to the kernel's KP)
  int kh;           // th's row pitch: kdim rounded up to a multiple of 8
  Bounds b;        // l2 over all n rows: norms, margins, excluded rows (b.s is not read)
  const unsigned* tau;
  Slots slots;
  int slot_count;
  std::int64_t stages_per_part;  // stages of training rows a block takes (blockIdx.y's part)
  const float* max_tn;           // the largest of the training rows' squared norms, rounded up (b.tn_up)
};

// The fused pass's cheap test. Its exact test (l2_float_bound<false>, four operations rounded
// down, NaN and overflow handling) takes about a dozen instructions, and almost every product
// fails it, so each product first takes x = fl(fl(tn c) - 2v) <= P (two operations rounded to
// nearest), and only those that pass take the exact test. P is chosen so that no product the
// exact test would accept fails the cheap one:
//   with qn, tn, c, a the floats of the exact test (c = 1 - c rounded down, a = l2_abs_up) and
//   R = (qn + tn) c - 2v - a in real arithmetic, the exact bound l (four roundings, each off by
//   less than 2^-23 of a value under 1.01 (qn c + tn c + 2|v| + a), plus 2^-149 below float's
//   normal range) is at least R - E, and x is at most tn c - 2v + e_x (two roundings to nearest:
//   2^-24 each, of values under 1.01 (tn c + 2|v|)). So l <= tau gives
//   x <= tau - qn c + a + E + e_x, with E + e_x <= 2^-20 (qn c + tn c + 2|v| + a) + 2^-146.
//   The product v is within c' |q||t| of q.t (c' < 1, the product's relative bound) plus an
//   absolute part that a holds twice over (dot_underflow(); with FP16 operands, also what their
//   range loses: fused_fp16_limits), so 2|v| <= 2 (qn_up + max_tn) + a + 2^-100 with
//   |q|^2 <= qn_up and |t|^2 <= max_tn; and qn c + tn c <= qn_up + max_tn. Hence
//   P = tau - qn c + a + 2^-18 (qn_up + max_tn + a) + 2^-99, taken in double rounded up and then
//   up to float, is enough. (With FP16 operands x is fl(fl(tn c) + s acc) for the accumulator acc
//   and s = -2 times its unscaling power of 2: the same two roundings of tn c - 2v, v = acc s / -2
//   taken exactly.)
// Where qn_up + max_tn > 2^120 (a product could overflow: the exact test's overflow handling is
// needed) or tau is not finite, P is NaN: !(x > NaN) holds, so every product takes the exact test.
__device__ __forceinline__ float fused_cheap_limit(float qn, double qn_exact, float tau, float c, float abs_up, float max_tn) {
  const double qn_up = __double2float_ru(qn_exact);
  const double scale = qn_up + static_cast<double>(max_tn);
  if (!(scale <= 0x1p120) || !isfinite(tau)) return NAN;
  const double a = abs_up;
  const double slack = __dadd_ru(__dmul_ru(0x1p-18, __dadd_ru(scale, a)), 0x1p-99);
  const double p = __dadd_ru(__dadd_ru(__dadd_ru(static_cast<double>(tau), -__dmul_rd(static_cast<double>(qn), static_cast<double>(c))), a), slack);
  return __double2float_ru(p);
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int bytes) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, int bytes) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory"); }

__device__ __forceinline__ void mma_tf32(float (&c)[4], float a0, float a1, float a2, float a3, float b0, float b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// mma.sync m16n8k16 on FP16 pairs (the lower half of each register first), float accumulators.
__device__ __forceinline__ void mma_f16(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The term a lane's k-slot `tig` holds in k-step s of a 32-term block's order: each lane takes 8
// consecutive terms of a row (two 16-byte loads of B), two per k-step, so that B's b0 and b1
// come as a register pair from one load. (b1, at k-slot tig + 4, is the term after b0's.)
__device__ __forceinline__ int fused_term(int s, int tig) { return (s / 4) * 32 + (s / 2 % 2) * 4 + 8 * tig + 2 * (s % 2); }

// The queries' operand rows of a block in the order mma_tf32 takes them as A: for 16-row tile mt,
// k-step s and lane (gid, tig) the float4 {a0, a1, a2, a3} = rows gid, gid + 8 at term t, then
// both at t + 1 (t = fused_term(s, tig)), so that each A operand is one 16-byte shared load that
// needs no register moves (with the rows stored plainly, moving the values into place took four
// instructions a product step: 39% of the pass's instructions). Zeros past kdim and past the
// slots.
template <int KP>
__device__ __forceinline__ void fused_fill_queries(float4* qf, const float* q, int kdim, const Slots& slots, int first_slot, int slot_count) {
  constexpr int steps = KP / 8;
  for (int i = threadIdx.x; i < kFusedQueries / 16 * steps * 32; i += kFusedThreads) {
    const int lane = i % 32, s = i / 32 % steps, mt = i / 32 / steps;
    const int t = fused_term(s, lane % 4), r0 = mt * 16 + lane / 4;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = r0 + (e % 2) * 8, slot = first_slot + r, term = t + e / 2;
      v[e] = slot < slot_count && term < kdim ? q[static_cast<std::int64_t>(slots.row_of(slot)) * kdim + term] : 0.0f;
    }
    qf[i] = make_float4(v[0], v[1], v[2], v[3]);
  }
}

// FP16 operands: the exponent e of a row's scaling from r2, an upper bound of its squared norm (so
// of each value's square): sqrt(r2) < 2^e, so the row times 2^(15 - e) has every value under
// 2^15 (FP16 holds up to 65,504). At least kFp16MinExponent; 128 when r2 is not finite (every
// float is under 2^128).
__device__ __forceinline__ int fp16_exponent(double r2) {
  if (!(r2 < INFINITY)) return 128;
  int e = kFp16MinExponent;
  if (r2 > 0.0) frexp(sqrt(r2) * (1.0 + 0x1p-20), &e);
  return min(max(e, kFp16MinExponent), 128);
}

__device__ __forceinline__ unsigned fp16_pair(float lo, float hi) {
  return static_cast<unsigned>(__half_as_ushort(__float2half_rn(lo))) | static_cast<unsigned>(__half_as_ushort(__float2half_rn(hi))) << 16;
}

// The training rows as FP16 operands: n rows of kh halves (zeros past d), each value times
// 2^(15 - e), e = fp16_exponent(*max_tn) (the largest squared norm, rounded up). Four halves a
// thread.
__global__ void fp16_rows(const float* t, std::int64_t n, int d, int kh, const float* max_tn, __half* out) {
  const float scale = ldexpf(1.0f, 15 - fp16_exponent(*max_tn));
  const std::int64_t groups = n * (kh / 4);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < groups;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i / (kh / 4);
    const int f = static_cast<int>(i - j * (kh / 4)) * 4;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = f + e < d ? t[j * d + f + e] * scale : 0.0f;
    reinterpret_cast<uint2*>(out)[i] = make_uint2(fp16_pair(v[0], v[1]), fp16_pair(v[2], v[3]));
  }
}

void prepare_fused_rows(const float* rows, const TrainNorms& norms, std::int64_t n, int d, bool half, DeviceArray<unsigned char>& temp,
                        DeviceArray<float>& max_tn, DeviceArray<__half>& rows_h, cudaStream_t st) {
  max_tn.resize(1);
  std::size_t temp_bytes = 0;
  check_prim(knn::prim::reduce_max(nullptr, temp_bytes, norms.up.get(), max_tn.get(), n, st));
  temp.resize(temp_bytes);
  check_prim(knn::prim::reduce_max(temp.get(), temp_bytes, norms.up.get(), max_tn.get(), n, st));
  if (!half) return;
  const int kh = fp16_pitch(d);
  rows_h.resize(static_cast<std::size_t>(n) * kh);
  fp16_rows<<<blocks_for(std::min<std::int64_t>(n * (kh / 4), std::int64_t{1} << 24), 256), 256, 0, st>>>(rows, n, d, kh, max_tn.get(),
                                                                                                    rows_h.get());
  KNN_LAUNCHED(fp16_rows);
}

// A query's FP16 scaling, and what its products' bound must add. With e_q = fp16_exponent(qn) and
// e_t the training rows', the query is scaled by 2^(15 - e_q) and the training rows by
// 2^(15 - e_t), so the accumulator holds q.t 2^(30 - e_q - e_t), and v = acc 2^g with
// g = e_q + e_t - 30 (inv2 = -2^(g + 1)). Rounding a scaled value x to FP16 is off by at most
// u|x| + h (u = 2^-11; h = 2^-25, half the spacing of FP16's subnormals, under 2^-14), so a term's
// product is off by at most (2u + u^2)|xq xt| + h (1 + u)(|xq| + |xt|) + h^2 (products of FP16
// values are exact in float). The first part is within the TF32 bound's 2^-9 (c, with its float
// accumulation), which allows for inputs truncated to TF32: rounding to nearest leaves 2^-10 of it
// free, far more than a tensor core's alignment of a k-step's 16 products to the largest, with
// truncation, can lose (16 x 2^-23 of the largest). The rest, summed over d terms with
// |x|_1 <= sqrt(d) |x| and |xq| <= R_q = sqrt(qn) 2^(15 - e_q) (R_t likewise), is
// A = 2^g (h (1 + u) sqrt(d) (R_q + R_t) + d h^2), taken 1.01 times for its share of the
// accumulation's error. The squared distance's bound adds 2A, the float unscaling of v (exact
// unless it underflows: 2^-149 at most, doubled) and l2_abs. A query whose g leaves float's range
// (products past 2^120) gets abs = +inf: every row is its candidate, and the second round ranks
// them.
struct Fp16Limits {
  float scale;  // 2^(15 - e_q)
  float inv2;   // -2^(g + 1)
  float abs;    // the bound's absolute margin, rounded up
};
__device__ Fp16Limits fused_fp16_limits(double qn, float max_tn, int et, int d, double l2_abs) {
  const int eq = fp16_exponent(qn), g = eq + et - 30;
  Fp16Limits r{ldexpf(1.0f, 15 - eq), -2.0f, INFINITY};
  if (g < -126 || g > 120) return r;
  r.inv2 = -ldexpf(1.0f, g + 1);
  const double rq = sqrt(qn) * (1.0 + 0x1p-20) * ldexp(1.0, 15 - eq);
  const double rt = sqrt(static_cast<double>(max_tn)) * (1.0 + 0x1p-20) * ldexp(1.0, 15 - et);
  const double a = 1.01 * ldexp(0x1p-25 * (1.0 + 0x1p-11) * sqrt(static_cast<double>(d)) * (rq + rt) + d * 0x1p-50, g);
  r.abs = __double2float_ru(2.0 * 1.001 * a + l2_abs + 0x1p-148);
  return r;
}

// The term of a lane's first k-slot pair in k-step s with FP16 operands (chunks of CH terms): a
// lane takes 8 consecutive terms of a training row (one 16-byte load of B) for two k-steps, 4 a
// step: terms t, t + 1 in k-slots 2 tig, 2 tig + 1 (B's first register) and t + 2, t + 3 in
// 2 tig + 8, 2 tig + 9 (its second).
template <int CH>
__device__ __forceinline__ int fused_term_h(int s, int tig) {
  constexpr int per_chunk = CH / 16;
  const int c = s / per_chunk, si = s % per_chunk;
  return c * CH + (si / 2) * 32 + 8 * tig + 4 * (si % 2);
}

// The queries as FP16 operands in the order mma_f16 takes them as A: for 16-row tile mt, k-step s
// and lane (gid, tig), with t = fused_term_h(s, tig), the registers {rows gid, gid + 8 at terms
// t, t + 1; then both at t + 2, t + 3}, one 16-byte shared load. Each row scaled by its
// q_scale; zeros past kdim and past the slots.
template <int KP>
__device__ __forceinline__ void fused_fill_queries_h(uint4* qh, const float* q, int kdim, const Slots& slots, int first_slot, int slot_count,
                                                     const float* q_scale) {
  constexpr int steps = KP / 16, CH = fused_chunk_terms<true>(KP);
  for (int i = threadIdx.x; i < kFusedQueries / 16 * steps * 32; i += kFusedThreads) {
    const int lane = i % 32, s = i / 32 % steps, mt = i / 32 / steps;
    const int t = fused_term_h<CH>(s, lane % 4), r0 = mt * 16 + lane / 4;
    unsigned w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = r0 + (e % 2) * 8, slot = first_slot + r, term = t + (e / 2) * 2;
      float v[2] = {0.0f, 0.0f};
      if (slot < slot_count) {
        const float* row = q + static_cast<std::int64_t>(slots.row_of(slot)) * kdim;
#pragma unroll
        for (int x = 0; x < 2; ++x)
          if (term + x < kdim) v[x] = row[term + x] * q_scale[r];
      }
      w[e] = fp16_pair(v[0], v[1]);
    }
    qh[i] = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// Appends, per slot, every training row whose l2 lower bound is <= tau, counting all of them
// (slots.count, zeroed before), as collect() does from a written product. Block (x, y): slots
// x * 256 .. + 255 against the stages of part y. One barrier a chunk: chunk c's copy is in, and
// every warp is done with chunk c - 1, whose buffer then takes chunk c + 3. Half: FP16 operands
// (a.th), else TF32 (a.t; Vec: rows start 16-byte aligned).
template <int KP, bool Vec, bool Half>
__global__ void __launch_bounds__(kFusedThreads, 1) fused_collect(FusedArgs a) {
  using Element = std::conditional_t<Half, __half, float>;
  constexpr int CH = fused_chunk_terms<Half>(KP);        // terms a chunk
  constexpr int cstride = fused_chunk_stride<Half>(KP);  // elements a training row takes in a chunk buffer
  constexpr int chunks_per_stage = KP / CH;
  constexpr int kstep = Half ? 16 : 8;                   // terms an MMA takes
  constexpr int per_word = 16 / sizeof(Element);         // elements a 16-byte word holds
  extern __shared__ uint4 fused_smem[];
  uint4* const qf = fused_smem;  // the queries, 16-byte words in A-fragment order
  Element* const ring = reinterpret_cast<Element*>(qf + kFusedQueries * KP / per_word);
  __shared__ float q_norm[kFusedQueries], q_tau[kFusedQueries], q_cheap[kFusedQueries], q_abs[kFusedQueries];
  __shared__ float q_scale[Half ? kFusedQueries : 1], q_inv2[Half ? kFusedQueries : 1];
  __shared__ std::int64_t q_excluded[kFusedQueries];
  // The stage's squared norms (rounded down), copied with its last chunk into that chunk's place.
  __shared__ __align__(16) float t_norm[kFusedRing][kFusedRows];
  const Bounds& b = a.b;
  const int first_slot = static_cast<int>(blockIdx.x) * kFusedQueries;
  const std::int64_t all_stages = (b.n + kFusedRows - 1) / kFusedRows, stage0 = blockIdx.y * a.stages_per_part;
  const std::int64_t stages = min(a.stages_per_part, all_stages - stage0);
  if (stages <= 0) return;  // the same for the whole block
  const std::int64_t chunks = stages * chunks_per_stage;
  const float max_tn = *a.max_tn;
  const int et = Half ? fp16_exponent(max_tn) : 0;

  for (int r = threadIdx.x; r < kFusedQueries; r += kFusedThreads) {
    const int slot = first_slot + r;
    float abs_up = b.l2_abs_up, scale = 0.0f, inv2 = -2.0f;
    if (slot < a.slot_count) {
      const int row = a.slots.row_of(slot);
      if (Half) {
        const Fp16Limits h = fused_fp16_limits(b.qn[row], max_tn, et, b.d, b.l2_abs);
        abs_up = h.abs, scale = h.scale, inv2 = h.inv2;
      }
      q_norm[r] = __double2float_rd(b.qn[row]);
      q_tau[r] = key_to_float(a.tau[row]);  // at most +inf; l <= it as floats is the keys' order
      q_excluded[r] = b.exclude ? b.exclude[b.q0 + row] : -1;
      q_cheap[r] = fused_cheap_limit(q_norm[r], b.qn[row], q_tau[r], b.c_dn, abs_up, max_tn);
    } else {
      q_norm[r] = 0.0f;
      q_tau[r] = NAN;  // no bound is <= NaN
      q_cheap[r] = -INFINITY;  // nor any cheap value (a finite x) under -inf
      q_excluded[r] = -1;
    }
    q_abs[r] = abs_up;
    if (Half) q_scale[r] = scale, q_inv2[r] = inv2;
  }
  if (Half) {
    __syncthreads();  // q_scale
    fused_fill_queries_h<KP>(qf, a.q, a.kdim, a.slots, first_slot, a.slot_count, q_scale);
  } else {
    fused_fill_queries<KP>(reinterpret_cast<float4*>(qf), a.q, a.kdim, a.slots, first_slot, a.slot_count);
  }
  // Chunk c: terms (c % chunks_per_stage) * CH .. + CH - 1 of the training rows of stage
  // c / chunks_per_stage, into ring place c % kFusedRing (zeros past kdim and past the rows).
  const auto load_chunk = [&](std::int64_t c) {
    const std::int64_t s = c / chunks_per_stage;
    const int k0 = static_cast<int>(c - s * chunks_per_stage) * CH, place = static_cast<int>(c % kFusedRing);
    const std::int64_t j0 = (stage0 + s) * kFusedRows;
    Element* const dst = ring + place * kFusedRows * cstride;
    if (Half) {
      // 16-byte word w of row r at w ^ 4 in odd rows of 64-term chunks (the swizzle above).
      for (int i = threadIdx.x; i < kFusedRows * CH / 8; i += kFusedThreads) {
        const int r = i / (CH / 8), w = i % (CH / 8), f = k0 + w * 8;
        const int at = CH == 64 ? w ^ ((r & 1) << 2) : w;
        const std::int64_t j = j0 + r;
        const bool in = j < b.n && f < a.kh;
        cp_async16(dst + r * cstride + at * 8, in ? a.th + j * a.kh + f : a.th, in ? 16 : 0);
      }
    } else if (Vec) {
      for (int i = threadIdx.x; i < kFusedRows * CH / 4; i += kFusedThreads) {
        const int r = i / (CH / 4), f = k0 + (i % (CH / 4)) * 4;
        const std::int64_t j = j0 + r;
        const bool in = j < b.n && f < a.kdim;
        cp_async16(dst + r * cstride + (f - k0), in ? a.t + j * a.kdim + f : a.t, in ? 16 : 0);
      }
    } else {
      for (int i = threadIdx.x; i < kFusedRows * CH; i += kFusedThreads) {
        const int r = i / CH, f = k0 + i % CH;
        const std::int64_t j = j0 + r;
        const bool in = j < b.n && f < a.kdim;
        cp_async4(reinterpret_cast<float*>(dst) + r * cstride + (f - k0), in ? a.t + j * a.kdim + f : a.t, in ? 4 : 0);
      }
    }
    if (k0 + CH == KP && threadIdx.x < kFusedRows / 4) {  // b.tn_dn + j0 is 16-byte aligned: j0 is a multiple of 128
      const std::int64_t j = j0 + threadIdx.x * 4, left = b.n - j;
      float* to = &t_norm[place][threadIdx.x * 4];
      if (left >= 4) {
        cp_async16(to, b.tn_dn + j, 16);
      } else {  // the end of the rows: no read past them, zeros after
#pragma unroll
        for (int e = 0; e < 4; ++e) cp_async4(to + e, e < left ? b.tn_dn + j + e : b.tn_dn, e < left ? 4 : 0);
      }
    }
  };
  // A copy group a chunk, empty ones past the last, so that "all but the newest kFusedRing - 2
  // groups done" means chunk c is in.
#pragma unroll
  for (int c = 0; c < kFusedRing - 1; ++c) {
    if (c < chunks) load_chunk(c);
    cp_async_commit();
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 4, wn = warp % 4, gid = lane / 4, tig = lane % 4;
  __syncthreads();  // the queries (fused_fill_queries) and their limits, written above
  float cheap[4][2];  // the cheap test's limit of this thread's 8 query rows, wm * 64 + m * 16 + h * 8 + gid
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) cheap[m][h] = q_cheap[wm * 64 + m * 16 + h * 8 + gid];
  const uint4* const qa = qf + (wm * 4) * (KP / kstep) * 32 + lane;  // this warp's first 16-row tile
  float acc[4][4][4];
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;

  for (std::int64_t c = 0; c < chunks; ++c) {
    cp_async_wait<kFusedRing - 2>();
    // Chunk c is in for every thread, and every thread is done with chunk c - 1, whose place the
    // copy below refills.
    __syncthreads();
    if (c + kFusedRing - 1 < chunks) load_chunk(c + kFusedRing - 1);
    cp_async_commit();
    const int place = static_cast<int>(c % kFusedRing);
    const int k0 = static_cast<int>(c % chunks_per_stage) * CH;
    const Element* const tb = ring + place * kFusedRows * cstride + (wn * 32 + gid) * cstride;
    if (Half) {
      // The chunk's terms 32 at a time: one 16-byte word of B (8 terms) a lane and column tile,
      // for k-steps s and s + 1.
#pragma unroll
      for (int p = 0; p < CH / 32; ++p) {
        const int s = k0 / 16 + p * 2, w = p * 4 + tig, at = CH == 64 ? w ^ ((gid & 1) << 2) : w;
        uint4 bf[4];
#pragma unroll
        for (int n = 0; n < 4; ++n) bf[n] = *reinterpret_cast<const uint4*>(tb + n * 8 * cstride + at * 8);
#pragma unroll
        for (int step = 0; step < 2; ++step)
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            const uint4 af = qa[(m * (KP / 16) + s + step) * 32];
#pragma unroll
            for (int n = 0; n < 4; ++n)
              mma_f16(acc[m][n], af.x, af.y, af.z, af.w, step ? bf[n].z : bf[n].x, step ? bf[n].w : bf[n].y);
          }
      }
    } else {
      // The chunk's 32 terms in two halves (4 of this thread's 8 values of B): k-steps s and s + 1.
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int s = k0 / 8 + half * 2;
        float4 bf[4];
#pragma unroll
        for (int n = 0; n < 4; ++n) bf[n] = *reinterpret_cast<const float4*>(reinterpret_cast<const float*>(tb) + tig * 8 + n * 8 * cstride + half * 4);
#pragma unroll
        for (int step = 0; step < 2; ++step)
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            const float4 af = reinterpret_cast<const float4*>(qa)[(m * (KP / 8) + s + step) * 32];
#pragma unroll
            for (int n = 0; n < 4; ++n) {
              const float b0 = step ? bf[n].z : bf[n].x, b1 = step ? bf[n].w : bf[n].y;
              mma_tf32(acc[m][n], af.x, af.y, af.z, af.w, b0, b1);
            }
          }
      }
    }
    if (k0 + CH < KP) continue;  // the stage's products are not whole yet
    // acc[m][n][e]: query row wm * 64 + m * 16 + gid (+ 8 for e >= 2), training row
    // wn * 32 + n * 8 + 2 tig (+ 1 for odd e) of the stage; v = acc (TF32) or acc inv2 / -2 (FP16).
    const std::int64_t j0 = (stage0 + c / chunks_per_stage) * kFusedRows;
    const float* const tn = t_norm[place];
    float tnc[4][2];  // tn c of this thread's 8 columns (fused_cheap_limit)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) tnc[n][e] = tn[wn * 32 + n * 8 + 2 * tig + e] * b.c_dn;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      float inv2[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) inv2[h] = Half ? q_inv2[wm * 64 + m * 16 + h * 8 + gid] : -2.0f;
      // The cheap test of the 16 products of this 16-row tile first, as bits; the rare products
      // that pass take the exact test after.
      unsigned pass = 0;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            pass |= static_cast<unsigned>(!(fmaf(inv2[h], acc[m][n][2 * h + e], tnc[n][e]) > cheap[m][h])) << ((h * 4 + n) * 2 + e);
      if (pass != 0) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = wm * 64 + m * 16 + h * 8 + gid;
#pragma unroll
          for (int n = 0; n < 4; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (pass >> ((h * 4 + n) * 2 + e) & 1u) {
                const float v = Half ? acc[m][n][2 * h + e] * (-0.5f * inv2[h]) : acc[m][n][2 * h + e];
                const float l = l2_float_bound<false>(v, q_norm[r], tn[wn * 32 + n * 8 + 2 * tig + e], b.c_dn, q_abs[r]);
                const std::int64_t j = j0 + wn * 32 + n * 8 + 2 * tig + e;
                if (l <= q_tau[r] && j < b.n && j != q_excluded[r]) {
                  const int slot = first_slot + r;
                  const unsigned long long pos = atomicAdd(a.slots.count + slot, 1ull);
                  if (static_cast<std::int64_t>(pos) < a.slots.limit_of(slot)) a.slots.index[a.slots.base_of(slot) + pos] = j;
                }
              }
        }
      }
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;
    }
  }
  cp_async_wait<0>();  // no copy outlives the block (the last groups are empty)
}

// The operands of the fused path for a tile (or chunk), and the sample that gives its tau.
struct FusedPlan {
  const float* q;    // the queries' operand rows
  const float* t;    // the training rows' operand rows
  const __half* th;  // FP16 operands: the training rows scaled (fp16_rows), kh halves each; else null
  int kdim, kh;
  // The product with every stride-th training row (its rows, norms, exclusions): the first
  // round's; null in the second, which reuses the first round's tau.
  const Bounds* sample;
  const float* max_tn;  // the largest squared norm of the training rows, rounded up
};

// fused_collect over `slot_count` slots, queued on st: the training rows split into as many parts
// as keep the device's blocks busy to the last wave (each part costs one more stage: the load of
// its queries).
void launch_fused(const FusedPlan& p, const Bounds& b, const unsigned* tau, const Slots& slots, int slot_count,
                  int multiprocessors, cudaStream_t st) {
  if (slot_count == 0) return;
  KNN_CUDA(cudaMemsetAsync(slots.count, 0, static_cast<std::size_t>(slot_count) * sizeof(unsigned long long), st));
  // Terms rounded up to 32, 64 or 128 (zero-filled): the count is a constant of the kernel.
  const int kp = p.kdim <= 32 ? 32 : p.kdim <= 64 ? 64 : 128;
  const bool half = p.th != nullptr, vec = p.kdim % 4 == 0;
  const std::size_t smem = half ? fused_smem_bytes<true>(kp) : fused_smem_bytes<false>(kp);
  using Kernel = void (*)(FusedArgs);
  const Kernel kernels[3][3] = {{fused_collect<32, false, false>, fused_collect<32, true, false>, fused_collect<32, true, true>},
                                {fused_collect<64, false, false>, fused_collect<64, true, false>, fused_collect<64, true, true>},
                                {fused_collect<128, false, false>, fused_collect<128, true, false>, fused_collect<128, true, true>}};
  const Kernel kernel = kernels[kp == 32 ? 0 : kp == 64 ? 1 : 2][half ? 2 : vec ? 1 : 0];
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int resident = 0;
  KNN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kFusedThreads, smem));
  const std::int64_t places = std::int64_t{std::max(resident, 1)} * multiprocessors;
  const std::int64_t blocks = (slot_count + kFusedQueries - 1) / kFusedQueries;
  const std::int64_t stages = std::max<std::int64_t>((b.n + kFusedRows - 1) / kFusedRows, 1);
  std::int64_t best_parts = 1, best_cost = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t parts = 1; parts <= std::min<std::int64_t>(stages, 8192); ++parts) {
    const std::int64_t per = (stages + parts - 1) / parts, used = (stages + per - 1) / per;
    const std::int64_t cost = (blocks * used + places - 1) / places * (per + 1);
    if (cost < best_cost) best_cost = cost, best_parts = used;
  }
  FusedArgs args{p.q, p.t, p.th, p.kdim, p.kh, b, tau, slots, slot_count, (stages + best_parts - 1) / best_parts, p.max_tn};
  kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(best_parts)), kFusedThreads, smem, st>>>(args);
  KNN_LAUNCHED(fused_collect);
}

// tau's sample for the fused path: one training row in `stride`. The candidates then number
// about stride * k plus those within the margin (many with TF32's: at 10^6 x 128, k = 10, one
// row in 13 left a third of the queries' lists overflowing), which must fit the first round's
// lists of 2k + 256 places: stride up to a quarter of (2k + 256) / k, at most 32, and the sample
// at least 4k rows. A smaller sample did not pay with longer lists either (H200, 10^4 queries,
// 10^6 x 128, k = 10, lists of 592: 27.2 ms with one row in 6, 27.1 in 10, 27.9 in 14 and 29.2
// in 20): the pass and the ranking slow down with the candidates.
int fused_stride(std::int64_t k, std::int64_t n) {
  const std::int64_t by_lists = (2 * k + 256) / (4 * k), by_rows = n / (4 * k);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(by_lists, by_rows), 1, 32));
}

// The sample's squared norms (every stride-th row's), and each query's excluded row as a row of
// the sample (-1 when it is not in it), so that the sample's bounds mask it as the full ones do.
__global__ void take_sample(const double* tn, const float* up, const float* dn, std::int64_t n_s, int stride, double* s_tn,
                            float* s_up, float* s_dn, const std::int64_t* exclude, std::int64_t nq, std::int64_t* s_exclude) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_s) {
    s_tn[i] = tn[i * stride];
    s_up[i] = up[i * stride];
    s_dn[i] = dn[i * stride];
  }
  if (exclude && i < nq) {
    const std::int64_t e = exclude[i];
    s_exclude[i] = e >= 0 && e % stride == 0 ? e / stride : -1;
  }
}

// Steps of the row that tau's pass reads: one in `stride`. The candidate pass then finds about
// stride * k rows (plus those within the margin), which must fit the first round's lists of
// 2k + 256 places: so a stride up to (k + 128) / 2k, at most 8, and none for k >= 128.
int sample_stride(std::int64_t k) { return static_cast<int>(std::clamp<std::int64_t>((k + 128) / (2 * k), 1, 8)); }

// Buffers of the two-pass path for a tile of qt queries.
void fast_select_reserve(GpuContext& ctx, std::int64_t qt, std::int64_t k) {
  const auto rows = static_cast<std::size_t>(qt), items = rows * static_cast<std::size_t>(k);
  ctx.tau.resize(rows);
  ctx.cand.resize(rows * static_cast<std::size_t>(first_round_places(k)));
  ctx.found.resize(rows);
  ctx.left.resize(rows);
  ctx.out_dist.resize(items);
  ctx.out_index.resize(items);
  for (auto& h : ctx.host) {
    h.dist.resize(items);
    h.index.resize(items);
    h.left.resize(rows);
    h.found.resize(rows);
  }
}

// Steps (2)-(4) for k <= kFastK, first round, for one chunk of a tile (`t` describes the chunk,
// whose first query is row c0 of the tile), queued on `st`: results go to pinned host memory.
void fast_select_chunk(GpuContext& ctx, const Tile& t, std::int64_t c0, cudaStream_t st, StageTimer& timer) {
  GpuContext::HostResults& h = ctx.host[t.results];
  const std::int64_t rows = t.qt, k = t.k, cap = first_round_places(k);
  int capacity = 1;
  while (capacity < cap) capacity <<= 1;
  unsigned* tau = ctx.tau.get() + c0;
  const auto grid = static_cast<unsigned>(rows);
  // The fused path's tau comes from its sample's product, read whole; the others' from one step
  // in sample_stride(k) of the tile's product.
  const Bounds& tb = t.fused ? *t.fused->sample : t.bounds;
  const int stride = t.fused ? 1 : sample_stride(k);
  with_pass_kind(tb, [&](auto vec, auto f32l2) {
    constexpr bool v = decltype(vec)::value, f = decltype(f32l2)::value;
    if (k <= 256) union_tau<4, v, f><<<grid, kSelectThreads, 0, st>>>(tb, static_cast<int>(k), stride, tau);
    else union_tau<16, v, f><<<grid, kSelectThreads, 0, st>>>(tb, static_cast<int>(k), stride, tau);
  });
  KNN_LAUNCHED(union_tau);
  timer.mark(st, "tau");
  const Slots first{nullptr, nullptr, nullptr, cap, ctx.cand.get() + c0 * cap, ctx.found.get() + c0};
  if (t.fused) launch_fused(*t.fused, t.bounds, tau, first, static_cast<int>(rows), ctx.multiprocessors, st);
  else launch_collect(t.bounds, tau, first, static_cast<int>(rows), ctx.multiprocessors, st);
  timer.mark(st, "candidates");
  KNN_CUDA(cudaMemsetAsync(ctx.left.get() + c0, 0, static_cast<std::size_t>(rows) * sizeof(int), st));
  const std::size_t pair_bytes = sizeof(double) + sizeof(std::int64_t);
  rank_candidates<<<static_cast<unsigned>(rows), kSelectThreads, capacity * pair_bytes, st>>>(
      t.q, t.train, t.d, t.metric, first, capacity, k, ctx.out_dist.get() + c0 * k, ctx.out_index.get() + c0 * k,
      ctx.left.get() + c0);
  KNN_LAUNCHED(rank_candidates);
  timer.mark(st, "rank");
  const auto items = static_cast<std::size_t>(rows * k);
  KNN_CUDA(cudaMemcpyAsync(h.dist.get() + c0 * k, ctx.out_dist.get() + c0 * k, items * sizeof(double), cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(h.index.get() + c0 * k, ctx.out_index.get() + c0 * k, items * sizeof(std::int64_t),
                           cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(h.left.get() + c0, ctx.left.get() + c0, static_cast<std::size_t>(rows) * sizeof(int),
                           cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(h.found.get() + c0, ctx.found.get() + c0, static_cast<std::size_t>(rows) * sizeof(unsigned long long),
                           cudaMemcpyDeviceToHost, st));
  timer.mark(st, "download");
}

// v = n copies of x, in memory the kernel may back with huge pages: a fresh list of 80 MB
// (10^4 queries, k = 1,000) takes the host tens of milliseconds to fault in 4 KiB at a time.
template <class T>
void fill_fresh(std::vector<T>& v, std::size_t n, T x) {
  v.clear();
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1), last = (begin + n * sizeof(T)) & ~(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  v.assign(n, x);
}

// A tile's neighbour lists waiting for the host to copy them into the caller's: the first round's
// in page-locked memory (ctx.host[results]), and the second round's for the queries it redid.
struct TileResults {
  std::int64_t q0 = 0, qt = 0, k = 0;
  int results = 0;
  std::vector<std::int64_t> redone;  // queries of the tile (0-based in it), in the order of dist and index
  std::vector<double> dist;
  std::vector<std::int64_t> index;
};

// The lists of a finished tile into out: the first round's by several threads (tens of megabytes
// with k = 1,000), then the second round's over them.
void deliver(GpuContext& ctx, const TileResults& r, Neighbors& out) {
  const GpuContext::HostResults& h = ctx.host[r.results];
  const auto at = static_cast<std::size_t>(r.q0 * r.k), items = static_cast<std::size_t>(r.qt * r.k);
  parallel_copy(out.distance.data() + at, h.dist.get(), items * sizeof(double));
  parallel_copy(out.index.data() + at, h.index.get(), items * sizeof(std::int64_t));
  const auto k = static_cast<std::size_t>(r.k);
  for (std::size_t x = 0; x < r.redone.size(); ++x) {
    const std::size_t to = at + static_cast<std::size_t>(r.redone[x]) * k;
    std::copy_n(r.dist.begin() + static_cast<std::ptrdiff_t>(x * k), k, out.distance.begin() + static_cast<std::ptrdiff_t>(to));
    std::copy_n(r.index.begin() + static_cast<std::ptrdiff_t>(x * k), k, out.index.begin() + static_cast<std::ptrdiff_t>(to));
  }
}

// Lists of the second round longer than rank_candidates' shared memory (many rows tied within
// the margin; flagged in `left`): the defined distance of each of their candidates, a block a list.
__global__ void long_list_distances(const float* q, const float* t, int d, int metric, Slots s, const int* left, double* dist) {
  const int x = static_cast<int>(blockIdx.x);
  if (!left[x]) return;
  const float* qr = q + static_cast<std::int64_t>(s.row_of(x)) * d;
  const std::int64_t b = s.base_of(x), m = s.limit_of(x);
  for (std::int64_t c = threadIdx.x; c < m; c += blockDim.x) dist[b + c] = exact_distance(qr, t + s.index[b + c] * d, d, metric);
}

// The second round's lists as segments for rank_lists: list x is [base[x], base[x] + limit[x]) when
// left[x] is set, empty otherwise.
struct LongListEnds {
  const std::int64_t* base;
  const std::int64_t* limit;
  const int* left;
  __device__ std::int64_t operator[](std::int64_t x) const { return left[x] ? base[x] + limit[x] : base[x]; }
};

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
  const std::int64_t qt = t.qt, k = t.k, cap = first_round_places(k);
  const auto nq_tile = static_cast<std::size_t>(qt);
  res.q0 = t.q0;
  res.qt = qt;
  res.k = k;
  res.results = t.results;
  res.redone.clear();
  res.dist.clear();
  res.index.clear();
  const int* left = ctx.host[t.results].left.get();
  const unsigned long long* found = ctx.host[t.results].found.get();
  const std::size_t pair_bytes = sizeof(double) + sizeof(std::int64_t);

  // Second round, for the queries whose list overflowed: collected again at their exact size,
  // in groups no larger than the first round's lists; ranked in shared memory when they fit, by
  // knn::prim's segmented sort otherwise.
  std::vector<int> rows;
  for (std::size_t i = 0; i < nq_tile; ++i)
    if (left[i]) rows.push_back(static_cast<int>(i));
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
    while (r < rows.size() && (group.empty() || places + static_cast<std::int64_t>(found[rows[r]]) <= group_places)) {
      group.push_back(rows[r]);
      base.push_back(places);
      limit.push_back(static_cast<std::int64_t>(found[rows[r]]));
      places += limit.back();
      ++r;
    }
    const std::size_t g = group.size();
    ctx.slot_row.resize(g);
    ctx.slot_base.resize(g);
    ctx.slot_limit.resize(g);
    ctx.cand.resize(static_cast<std::size_t>(places));
    KNN_CUDA(cudaMemcpyAsync(ctx.slot_row.get(), group.data(), g * sizeof(int), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.slot_base.get(), base.data(), g * sizeof(std::int64_t), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.slot_limit.get(), limit.data(), g * sizeof(std::int64_t), cudaMemcpyHostToDevice, st));
    const Slots again{ctx.slot_row.get(), ctx.slot_base.get(), ctx.slot_limit.get(), 0, ctx.cand.get(), ctx.found.get()};
    if (t.fused) launch_fused(*t.fused, t.bounds, ctx.tau.get(), again, static_cast<int>(g), ctx.multiprocessors, st);
    else launch_collect(t.bounds, ctx.tau.get(), again, static_cast<int>(g), ctx.multiprocessors, st);
    KNN_CUDA(cudaMemsetAsync(ctx.left.get(), 0, g * sizeof(int), st));
    rank_candidates<<<static_cast<unsigned>(g), kSelectThreads, kRankCapacity * pair_bytes, st>>>(
        t.q, t.train, t.d, t.metric, again, kRankCapacity, k, ctx.out_dist.get(), ctx.out_index.get(), ctx.left.get());
    KNN_LAUNCHED(rank_candidates);
    // Lists longer than shared memory holds: their distances, then sorted by knn::prim's segmented
    // sort (each list is in row order) into the same rows of out_dist and out_index.
    std::vector<int> longer(g);
    KNN_CUDA(cudaMemcpyAsync(longer.data(), ctx.left.get(), g * sizeof(int), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    const auto long_lists = static_cast<std::size_t>(std::count(longer.begin(), longer.end(), 1));
    if (long_lists) {
      // collect() appends in no particular order: the lists are put in row order first, so that the
      // stable sort by distance breaks ties by the smaller row.
      const LongListEnds ends{ctx.slot_base.get(), ctx.slot_limit.get(), ctx.left.get()};
      ctx.row_ordered.resize(static_cast<std::size_t>(places));
      std::size_t bytes = 0;
      check_prim(knn::prim::segmented_sort_keys(nullptr, bytes, ctx.cand.get(), ctx.row_ordered.get(), places, static_cast<std::int64_t>(g),
                                                ctx.slot_base.get(), ends, 0, 64, st));
      ctx.temp.resize(bytes);
      check_prim(knn::prim::segmented_sort_keys(ctx.temp.get(), bytes, ctx.cand.get(), ctx.row_ordered.get(), places,
                                                static_cast<std::int64_t>(g), ctx.slot_base.get(), ends, 0, 64, st));
      Slots ordered = again;
      ordered.index = ctx.row_ordered.get();
      ctx.dist.resize(static_cast<std::size_t>(places));
      long_list_distances<<<static_cast<unsigned>(g), 256, 0, st>>>(t.q, t.train, t.d, t.metric, ordered, ctx.left.get(), ctx.dist.get());
      KNN_LAUNCHED(long_list_distances);
      rank_lists(ctx, ctx.dist.get(), ctx.row_ordered.get(), places, static_cast<std::int64_t>(g), ctx.slot_base.get(), ends, ctx.left.get(), k,
                 st);
      on_sorted += long_lists;
    }
    gd.resize(g * static_cast<std::size_t>(k));
    gi.resize(g * static_cast<std::size_t>(k));
    KNN_CUDA(cudaMemcpyAsync(gd.data(), ctx.out_dist.get(), gd.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaMemcpyAsync(gi.data(), ctx.out_index.get(), gi.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    res.redone.insert(res.redone.end(), group.begin(), group.end());
    res.dist.insert(res.dist.end(), gd.begin(), gd.end());
    res.index.insert(res.index.end(), gi.begin(), gi.end());
  }
  if (timing)
    std::fprintf(stderr, "gpu stages: %zu of %zu queries collected again, %zu of them ranked by the segmented sort\n", rows.size(),
                 nq_tile, on_sorted);
}

}  // namespace

Neighbors gpu_search(const SearchRequest& req, const BackendOptions& options, int device, GpuContext* shared_ctx) {
  const Matrix& train = *req.train;
  const Matrix& queries = *req.queries;
  const auto n = static_cast<std::int64_t>(train.rows), nq = static_cast<std::int64_t>(queries.rows);
  const int d = static_cast<int>(train.cols);
  const auto k = static_cast<std::int64_t>(req.k);
  const int metric = req.metric == Metric::l2 ? 0 : req.metric == Metric::l1 ? 1 : 2;

  Neighbors out;
  out.queries = queries.rows;
  out.k = req.k;
  if (nq == 0) return out;
  // The lists: made by two host threads while the device works on the first tiles when they are
  // large (160 MB for 10^4 queries and k = 1,000), else when first needed.
  const std::size_t items = queries.rows * req.k;
  std::future<void> index_made, distance_made;
  const auto allocate_out = [&] {
    if (index_made.valid()) {
      index_made.get();
      distance_made.get();
    }
    if (out.index.size() == items) return;
    fill_fresh(out.index, items, std::int64_t{-1});
    fill_fresh(out.distance, items, 0.0);
  };

  KNN_CUDA(cudaSetDevice(device));
  std::shared_ptr<GpuContext> own_ctx;
  if (!shared_ctx || shared_ctx->device != device) {
    own_ctx = make_gpu_context(device);
    shared_ctx = own_ctx.get();
  }
  GpuContext& ctx = *shared_ctx;
  // A budget of the user's own bounds what this search holds, kept buffers included.
  if (options.device_memory_budget) ctx.release();
  cudaStream_t st = ctx.stream->s;
  const bool tf32 = options.precision == Precision::tf32 && metric != 1;
  // float32 products from split operands on tensor cores: float32's accuracy (within a small
  // factor) at a third of TF32's speed, several times cuBLAS's float32 product.
  const bool split = !tf32 && metric != 1 && ctx.tensor_cores;
  check_blas(cublasSetMathMode(ctx.blas->h, tf32 || split ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  const double c = metric == 1 ? detail::fp32_l1_bound(train.cols)
                   : tf32      ? detail::tf32_dot_bound(train.cols)
                   : split     ? detail::split_tf32_dot_bound(train.cols)
                               : detail::fp32_dot_bound(train.cols);
  const int kdim = split ? 3 * d : d;  // the product's inner dimension
  const bool fast = k <= kFastK;
  // The fused path (fused_collect): l2 on tensor cores with at most kFusedMaxTerms product terms
  // and k <= kFastK. By default it takes TF32 products, k <= 10 and 10^6 training rows or more,
  // where it measured faster than writing the products (H200, 1,000 queries, k = 10, at 10^6 and
  // 10^7 rows, FP16 operands: d = 16, 1.62 / 12.13 ms against 2.59 / 28.48; d = 64, 1.81 / 14.19
  // against 2.80 / 30.15; d = 128, 2.79 / 20.71 against 3.12 / 34.87). Below 10^6 rows it was no
  // faster.
  // KNN_GPU_FUSED=1 takes it wherever it applies, KNN_GPU_FUSED=0 never.
  const int stride = fused_stride(k, n);
  const char* fused_env = std::getenv("KNN_GPU_FUSED");
  const bool fused_fits = fast && metric == 0 && (tf32 || split) && kdim <= kFusedMaxTerms;
  const bool fused_pays = tf32 && k <= 10 && n >= kFusedDefaultRows;
  const bool fused = fused_fits && (fused_env && *fused_env ? std::string(fused_env) == "1" : fused_pays);
  // A TF32 fused pass takes FP16 operands (fused_fp16_limits): the same 10 mantissa bits as TF32,
  // at twice the rate. KNN_GPU_FP16=0 keeps TF32 operands, for comparison.
  const char* fp16_env = std::getenv("KNN_GPU_FP16");
  const bool fp16 = fused && tf32 && !(fp16_env && std::string(fp16_env) == "0");
  const int kh = fp16_pitch(d);
  // Columns of the product a tile writes. The fused path's sample is every stride-th row, less the
  // last few so that it counts a multiple of 4 (a subset's k-th upper bound is a valid tau all the
  // same): cuBLAS takes a slower kernel for an odd count (H200, TF32, 10^4 queries x 166,667
  // sample rows x 128 terms: 5.38 ms, against 2.37 for 166,668 rows).
  const std::int64_t n_s_all = fused ? (n + stride - 1) / stride : n;
  const std::int64_t n_s = fused && n_s_all >= 8 ? n_s_all / 4 * 4 : n_s_all;
  // Floats from one query's products to the next: the sample's rounded up to a multiple of 32, so
  // that every row starts 16-byte aligned and tau's pass reads it four floats at a time.
  const std::int64_t s_pitch = fused ? (n_s + 31) / 32 * 32 : n;

  // The training rows: prepared by this backend, or uploaded now.
  const auto* prepared = dynamic_cast<const DeviceTrain*>(req.prepared);
  if (prepared && !prepared->fits(train, device)) prepared = nullptr;
  std::size_t free_bytes = 0, total_bytes = 0;
  KNN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  free_bytes += ctx.bytes();  // buffers kept from earlier searches are this search's to reuse
  const bool need_split = split && !(prepared && prepared->split.get());
  // Bytes of a training row on the device: its values, their split or FP16 copy, its norms.
  const std::size_t row_bytes = static_cast<std::size_t>(d) * sizeof(float) * (split ? 4 : 1) + TrainNorms::row_bytes +
                                (fp16 ? static_cast<std::size_t>(kh) * sizeof(__half) : 0);
  const std::size_t train_bytes = static_cast<std::size_t>(n) * row_bytes;
  std::size_t budget = options.device_memory_budget ? options.device_memory_budget : free_bytes / 10 * 8;
  // Rows already resident count in what is free; a budget the user set holds them too.
  if (prepared && !options.device_memory_budget) budget += train_bytes;
  // Per query row: its data and candidates, and its approximate values against every training row.
  // A candidate of the large-k path holds 68 bytes (index, query, distance, their sorted copies and
  // the sort's temporary) and each of its k results 16; 80 bytes a candidate covers the radix
  // select's 8 KiB a query too, since k > kFastK there.
  const std::size_t per_query_fixed =
      static_cast<std::size_t>(split ? 4 * d : d) * sizeof(float) + static_cast<std::size_t>(k + 64) * (fast ? 32 : 80) + 64;
  const std::size_t per_query = static_cast<std::size_t>(s_pitch) * sizeof(float) + per_query_fixed;
  if (train_bytes + per_query > budget) {
    // The training rows do not fit beside one query: search them in parts that do (half of what
    // is left after a query's fixed needs holds a part, the rest its queries' values), each
    // uploaded in turn, and merge the parts' nearest on the host.
    const std::size_t rows = budget > per_query_fixed ? (budget - per_query_fixed) / (2 * (row_bytes + sizeof(float))) : 0;
    if (rows == 0)
      throw Error("the GPU memory budget of " + std::to_string(budget) + " bytes is too small: one training row and one query need " +
                  std::to_string(row_bytes + sizeof(float) + per_query_fixed) + " (use " + param("device") + " cpu)");
    BackendOptions part_options = options;
    part_options.device_memory_budget = budget;
    return detail::search_in_parts([&](const SearchRequest& r) { return gpu_search(r, part_options, device, &ctx); }, req, rows);
  }
  std::int64_t tile = std::min<std::int64_t>(nq, static_cast<std::int64_t>((budget - train_bytes) / per_query));
  tile = std::min<std::int64_t>(tile, std::numeric_limits<int>::max() / std::max<std::int64_t>(s_pitch, 1));  // cuBLAS ldc*cols

  // Queries given unscaled (SearchRequest::scaler): each chunk is scaled in device memory as it
  // arrives (scale_rows, Scaler::transform's arithmetic), and the first value that overflows is
  // reported once the search is done. Overflowing values become 0 meanwhile, so the search runs
  // on finite numbers; its results are dropped then.
  const Scaler* scaler = req.scaler && req.scaler->kind() != Scaling::none ? req.scaler : nullptr;
  if (scaler) {
    if (scaler->offset().size() != train.cols || scaler->scale().size() != train.cols)
      throw Error("scaler fitted on " + std::to_string(scaler->offset().size()) + " features, given " + std::to_string(train.cols));
    ctx.scaler_offset.resize(train.cols);
    ctx.scaler_scale.resize(train.cols);
    ctx.scale_bad.resize(1);
    KNN_CUDA(cudaMemcpyAsync(ctx.scaler_offset.get(), scaler->offset().data(), train.cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.scaler_scale.get(), scaler->scale().data(), train.cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemsetAsync(ctx.scale_bad.get(), 0xff, sizeof(unsigned long long), st));
  }

  DeviceArray<float> own_train, own_split;
  TrainNorms own_norms;
  const float* d_train = nullptr;
  const float* d_split = nullptr;
  const TrainNorms* norms = nullptr;
  if (prepared) {
    d_train = prepared->rows.get();
    d_split = prepared->split.get();
    norms = &prepared->norms;
  } else {
    own_train.resize(static_cast<std::size_t>(n) * d);
    KNN_CUDA(cudaMemcpyAsync(own_train.get(), train.values.data(), static_cast<std::size_t>(n) * d * sizeof(float),
                             cudaMemcpyHostToDevice, st));
    own_norms.compute(own_train.get(), n, d, st);
    d_train = own_train.get();
    norms = &own_norms;
  }
  if (need_split) {
    own_split.resize(static_cast<std::size_t>(n) * 3 * d);
    split_rows(d_train, n, d, false, own_split.get(), st);
    d_split = own_split.get();
  }
  const double* d_tn = norms->exact.get();
  // 1 + c and 1 - c rounded away from 1, for the float bounds of l2.
  const float c_up = std::nextafter(static_cast<float>(1.0 + c), 2.0f);
  const float c_dn = std::nextafter(static_cast<float>(1.0 - c), 0.0f);
  // l2's absolute margin: what underflow may lose.
  const double l2_abs = detail::l2_underflow(train.cols);
  // The bounds of a tile's (or chunk's) products, which start at row `first_row` of ctx.s.
  auto make_bounds = [&](std::int64_t first_row, const double* qn, std::int64_t first_query) {
    Bounds b{ctx.s.get() + first_row * n, n, metric, qn, d_tn, c, req.exclude ? ctx.exclude.get() : nullptr, first_query};
    b.tn_up = norms->up.get();
    b.tn_dn = norms->dn.get();
    b.c_up = c_up;
    b.c_dn = c_dn;
    b.l2_abs = l2_abs;
    b.l2_abs_up = std::nextafter(static_cast<float>(l2_abs), INFINITY);
    b.d = d;
    b.pitch = n;
    return b;
  };
  if (req.exclude) {
    ctx.exclude.resize(static_cast<std::size_t>(nq));
    KNN_CUDA(cudaMemcpyAsync(ctx.exclude.get(), req.exclude, static_cast<std::size_t>(nq) * sizeof(std::int64_t),
                             cudaMemcpyHostToDevice, st));
  }
  // The fused path's sample: every stride-th training row, its norms and exclusions gathered.
  auto make_sample_bounds = [&](std::int64_t first_row, const double* qn, std::int64_t first_query) {
    Bounds b = make_bounds(first_row, qn, first_query);
    b.s = ctx.s.get() + first_row * s_pitch;
    b.n = n_s;
    b.pitch = s_pitch;
    b.tn = ctx.sample_tn.get();
    b.tn_up = ctx.sample_up.get();
    b.tn_dn = ctx.sample_dn.get();
    b.exclude = req.exclude ? ctx.sample_exclude.get() : nullptr;
    return b;
  };
  const float* d_max_tn = nullptr;  // the fused path's (FusedPlan)
  const __half* d_half = nullptr;
  if (fused) {
    ctx.sample_tn.resize(static_cast<std::size_t>(n_s));
    ctx.sample_up.resize(static_cast<std::size_t>(n_s));
    ctx.sample_dn.resize(static_cast<std::size_t>(n_s));
    if (req.exclude) ctx.sample_exclude.resize(static_cast<std::size_t>(nq));
    const std::int64_t items_s = std::max(n_s, req.exclude ? nq : 0);
    take_sample<<<blocks_for(items_s, 256), 256, 0, st>>>(d_tn, norms->up.get(), norms->dn.get(), n_s, stride, ctx.sample_tn.get(),
                                                         ctx.sample_up.get(), ctx.sample_dn.get(), req.exclude ? ctx.exclude.get() : nullptr,
                                                         nq, ctx.sample_exclude.get());
    KNN_LAUNCHED(take_sample);
    // The largest squared norm, rounded up (fused_cheap_limit), and the FP16 operands: kept with
    // the prepared rows, or made now.
    if (prepared && prepared->max_tn.get()) {
      d_max_tn = prepared->max_tn.get();
      d_half = prepared->half.get();
    } else {
      prepare_fused_rows(d_train, *norms, n, d, fp16, ctx.temp, ctx.max_tn, ctx.half_rows, st);
      d_max_tn = ctx.max_tn.get();
      d_half = ctx.half_rows.get();
    }
    if (!fp16) d_half = nullptr;
  }

  std::vector<std::int64_t> offsets;

  StageTimer timer;
  if (items * (sizeof(std::int64_t) + sizeof(double)) >= (std::size_t{32} << 20)) {
    index_made = std::async(std::launch::async, [&] { fill_fresh(out.index, items, std::int64_t{-1}); });
    distance_made = std::async(std::launch::async, [&] { fill_fresh(out.distance, items, 0.0); });
  }
  TileResults finished;  // the last tile's lists, delivered while the device works on the next
  bool undelivered = false;
  int results = 0;
  for (std::int64_t q0 = 0; q0 < nq; q0 += tile) {
    const std::int64_t qt = std::min(tile, nq - q0);
    ctx.q.resize(static_cast<std::size_t>(qt) * d);
    if (split) ctx.q_split.resize(static_cast<std::size_t>(qt) * 3 * d);
    ctx.qn.resize(static_cast<std::size_t>(qt));
    ctx.s.resize(static_cast<std::size_t>(qt) * static_cast<std::size_t>(s_pitch));
    if (fast) fast_select_reserve(ctx, qt, k);
    // The two-pass path works through the tile in chunks of queries: the selection of one chunk
    // (select_stream) runs beside the upload and product of the next (stream). That pays where
    // the product is long against its output (d >= 256) or the selection is heavy (k > 256); with
    // few features and small k the product writes its values as fast as the selection reads
    // them, and the two only slow each other down (H200: 10^6 x 128, k = 10 took 98.7 ms in one
    // chunk a tile, 110.7 in two; Fashion-MNIST took 23.6 ms in four chunks, 25.8 in one; 10^6 x
    // 128, k = 1,000 218.3 ms in two, 229.9 in one). KNN_GPU_CHUNKS sets the count, for such
    // measurements; timing runs the stages one after another.
    std::int64_t chunks = fast && !timer.on() && (d >= 256 || k > 256) ? std::clamp<std::int64_t>(qt / 1024, 1, 4) : 1;
    if (const char* force = std::getenv("KNN_GPU_CHUNKS"); force && fast && !fused && !timer.on())
      chunks = std::clamp<std::int64_t>(std::atoll(force), 1, std::max<std::int64_t>(qt, 1));
    const std::int64_t chunk = (qt + chunks - 1) / chunks;
    timer.mark(st, "start");
    FusedPlan plan{};  // the chunk's, on the fused path
    Bounds sample{};
    for (std::int64_t c0 = 0; c0 < qt; c0 += chunk) {
      const std::int64_t cq = std::min(chunk, qt - c0);
      float* q_chunk = ctx.q.get() + c0 * d;
      float* s_chunk = ctx.s.get() + c0 * n;
      // (A stream of its own for uploads straight from the caller's pageable memory measured
      // slower on an H200: 25.6 ms against 23.0 ms on the Fashion-MNIST shape in fp32.)
      upload_queries(ctx, q_chunk, queries.row(static_cast<std::size_t>(q0 + c0)), static_cast<std::size_t>(cq) * d, st);
      if (scaler)
        scale_rows(q_chunk, static_cast<std::size_t>(cq), train.cols, ctx.scaler_offset.get(), ctx.scaler_scale.get(),
                   static_cast<std::size_t>(q0 + c0), ctx.scale_bad.get(), st);
      timer.mark(st, "upload");
      squared_norms<<<blocks_for(cq * 32, 256), 256, 0, st>>>(q_chunk, cq, d, ctx.qn.get() + c0);
      KNN_LAUNCHED(squared_norms);

      // (1) approximate values, row-major cq x n: column-major n x cq = T^T Q.
      if (metric == 1) {
        const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((cq + 15) / 16));
        l1_sums<<<grid, dim3(16, 16), 0, st>>>(q_chunk, d_train, cq, n, d, s_chunk);
        KNN_LAUNCHED(l1_sums);
      } else {
        const float one = 1.0f, zero = 0.0f;
        const float* a = d_train;
        const float* b = q_chunk;
        if (split) {
          float* q_parts = ctx.q_split.get() + c0 * 3 * d;
          split_rows(q_chunk, cq, d, true, q_parts, st);
          a = d_split;
          b = q_parts;
        }
        if (fused) {
          // Only the sample's products: every stride-th training row, stride * kdim floats apart.
          check_blas(cublasGemmEx(ctx.blas->h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_s), static_cast<int>(cq), kdim, &one, a,
                                  CUDA_R_32F, stride * kdim, b, CUDA_R_32F, kdim, &zero, ctx.s.get() + c0 * s_pitch, CUDA_R_32F,
                                  static_cast<int>(s_pitch), CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
          sample = make_sample_bounds(c0, ctx.qn.get() + c0, q0 + c0);
          plan = FusedPlan{b, a, d_half, kdim, kh, &sample, d_max_tn};
        } else {
          check_blas(cublasGemmEx(ctx.blas->h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(cq), kdim, &one, a,
                                  CUDA_R_32F, kdim, b, CUDA_R_32F, kdim, &zero, s_chunk, CUDA_R_32F, static_cast<int>(n),
                                  tf32 || split ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
        }
      }
      timer.mark(st, "product");
      if (!fast) continue;
      const Bounds chunk_bounds = make_bounds(c0, ctx.qn.get() + c0, q0 + c0);
      KNN_CUDA(cudaEventRecord(ctx.product_done.e, st));
      KNN_CUDA(cudaStreamWaitEvent(ctx.select_stream->s, ctx.product_done.e, 0));
      fast_select_chunk(ctx, Tile{chunk_bounds, q_chunk, d_train, q0 + c0, cq, n, k, d, metric, results, fused ? &plan : nullptr},
                        c0, ctx.select_stream->s, timer);
    }
    const Bounds bounds = make_bounds(0, ctx.qn.get(), q0);
    if (fast) {
      const auto host_start = std::chrono::steady_clock::now();
      if (undelivered) deliver(ctx, finished, out);
      else allocate_out();
      if (timer.on())
        std::fprintf(stderr, "gpu stages: lists of the tile before, or allocating them, %.3f ms on the host\n",
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count());
      // The second round's fused passes take the whole tile's operands.
      const FusedPlan whole{split ? ctx.q_split.get() : ctx.q.get(), split ? d_split : d_train, d_half, kdim, kh, nullptr, d_max_tn};
      fast_select_finish(ctx, Tile{bounds, ctx.q.get(), d_train, q0, qt, n, k, d, metric, results, fused ? &whole : nullptr},
                         finished, timer.on());
      undelivered = true;
      results ^= 1;
      timer.report(qt, n);
      if (timer.on())
        std::fprintf(stderr, "gpu stages: host part of the selection %.3f ms\n",
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count());
      continue;
    }
    // (2) tau, (3) candidates.
    ctx.tau.resize(static_cast<std::size_t>(qt));
    ctx.count.resize(static_cast<std::size_t>(qt) + 1);
    ctx.offset.resize(static_cast<std::size_t>(qt) + 1);
    // tau from each query's k-th upper bound, by knn::prim's batched radix select over the bounds
    // as they are computed (no temporary at all for 1,024 queries or more; 8 KiB a query below).
    ctx.kth.resize(static_cast<std::size_t>(qt));
    std::size_t kth_bytes = 0;
    check_prim(knn::prim::radix_select_kth(nullptr, kth_bytes, UpperBounds{bounds}, qt, n, k, ctx.kth.get(), false, st));
    ctx.temp.resize(kth_bytes);
    check_prim(knn::prim::radix_select_kth(ctx.temp.get(), kth_bytes, UpperBounds{bounds}, qt, n, k, ctx.kth.get(), false, st));
    tau_from_kth<<<blocks_for(qt, 256), 256, 0, st>>>(ctx.kth.get(), qt, ctx.tau.get());
    KNN_LAUNCHED(tau_from_kth);
    timer.mark(st, "tau");
    count_candidates<<<static_cast<unsigned>(qt), 256, 0, st>>>(bounds, ctx.tau.get(), ctx.count.get());
    KNN_LAUNCHED(count_candidates);
    KNN_CUDA(cudaMemsetAsync(ctx.count.get() + qt, 0, sizeof(std::int64_t), st));
    std::size_t temp_bytes = 0;
    check_prim(knn::prim::exclusive_sum(nullptr, temp_bytes, ctx.count.get(), ctx.offset.get(), qt + 1, st));
    ctx.temp.resize(temp_bytes);
    check_prim(knn::prim::exclusive_sum(ctx.temp.get(), temp_bytes, ctx.count.get(), ctx.offset.get(), qt + 1, st));
    offsets.resize(static_cast<std::size_t>(qt) + 1);
    KNN_CUDA(cudaMemcpyAsync(offsets.data(), ctx.offset.get(), offsets.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    const std::int64_t total = offsets.back();
    ctx.cand.resize(static_cast<std::size_t>(total));
    ctx.cand_query.resize(static_cast<std::size_t>(total));
    ctx.dist.resize(static_cast<std::size_t>(total));
    write_candidates<<<static_cast<unsigned>(qt), kScanThreads, 0, st>>>(bounds, ctx.tau.get(), ctx.offset.get(), ctx.cand.get(),
                                                                          ctx.cand_query.get());
    KNN_LAUNCHED(write_candidates);
    // (4) exact distances, sorted per query.
    exact_distances<<<blocks_for(total, 128), 128, 0, st>>>(ctx.q.get(), d_train, d, metric, ctx.cand.get(), ctx.cand_query.get(),
                                                            total, ctx.dist.get());
    KNN_LAUNCHED(exact_distances);
    // Each query's candidates sorted by (distance, index), the first k taken.
    ctx.out_dist.resize(static_cast<std::size_t>(qt * k));
    ctx.out_index.resize(static_cast<std::size_t>(qt * k));
    rank_lists(ctx, ctx.dist.get(), ctx.cand.get(), total, qt, ctx.offset.get(), ctx.offset.get() + 1, nullptr, k, st);
    timer.mark(st, "rank");
    // The host's result arrays are filled (allocate_out) while the device works on the above.
    allocate_out();
    KNN_CUDA(cudaMemcpyAsync(out.distance.data() + q0 * k, ctx.out_dist.get(), static_cast<std::size_t>(qt * k) * sizeof(double),
                             cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaMemcpyAsync(out.index.data() + q0 * k, ctx.out_index.get(), static_cast<std::size_t>(qt * k) * sizeof(std::int64_t),
                             cudaMemcpyDeviceToHost, st));
    timer.mark(st, "download");
    KNN_CUDA(cudaStreamSynchronize(st));
    timer.report(qt, n);
  }
  if (undelivered) deliver(ctx, finished, out);
  // The training rows uploaded for this search only are freed on return, so nothing may still
  // read them.
  KNN_CUDA(cudaStreamSynchronize(st));
  KNN_CUDA(cudaStreamSynchronize(ctx.select_stream->s));
  if (scaler) {
    unsigned long long bad = ~0ull;
    KNN_CUDA(cudaMemcpyAsync(&bad, ctx.scale_bad.get(), sizeof bad, cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    if (bad != ~0ull) {
      const auto i = static_cast<std::size_t>(bad / train.cols), j = static_cast<std::size_t>(bad % train.cols);
      throw ScaleOverflow(i, j, queries(i, j), scaler->kind());
    }
  }
  return out;
}

}  // namespace knn::cuda
