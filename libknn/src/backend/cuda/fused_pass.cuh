#pragma once
// What the fused pass's kernels share: a block of kFusedQueries queries, stages of kFusedRows
// training rows, their arguments, each query's limits (tau, the cheap test's limit, the margins),
// the exact test that appends a candidate, and the sample pass's keys. For rows of up to
// kFusedMaxTerms terms, fused_collect (fused_collect.cu) multiplies on mma.sync, TF32 or FP16
// operands, and wgmma_fused_pass (wgmma_fused.cu) on Hopper's warpgroup instructions, FP16
// operands, with a ring of kFusedRing stages; for wider FP16 rows wgmma_wide_fused_pass
// (wgmma_wide_fused.cu) streams the queries too. All take the same tests of the same float
// products, proved in docs/exactness.md#fused-cheap-test.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backend/cuda/bounds.cuh"
#include "backend/cuda/candidate_slots.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/fp16_operands.cuh"

namespace knn::cuda {

constexpr int kFusedQueries = 256;  // queries a block (their operand rows stay in shared memory)
constexpr int kFusedRows = 128;     // training rows a stage
constexpr int kFusedRing = 4;       // stages in shared memory: one multiplied while three are copied
constexpr int kFusedThreads = 512;  // 16 warps (four warpgroups)

struct FusedArgs {
  const float* q;    // operand rows of the tile's queries, kdim floats each
  const float* t;    // operand rows of the training set, kdim floats each
  const __half* th;  // FP16 operands: the training rows scaled (fp16_training_rows), kh halves each; else null
  int kdim;          // product terms (zero-filled up to the kernel's KP)
  int kh;            // th's row pitch: kdim rounded up to a multiple of 8
  Bounds b;          // l2 over all n rows: norms, margins, excluded rows (b.s is not read)
  const unsigned* tau;
  Slots slots;
  int slot_count;
  std::int64_t stages_per_part;  // stages (the wide kernel: tiles) of kFusedRows training rows a block takes (blockIdx.y's part)
  const float* max_tn;           // the largest of the training rows' squared norms, rounded up (b.tn_up)
  std::int64_t th_pitch;         // halves from one of th's rows to the next: kh, or stride * kh for the sample
  // The sample's pass (launch_sample_tau): each block's smallest upper-bound keys per query, read
  // by tau_from_keys; null in the candidate pass, which reads tau instead.
  unsigned* tau_keys;
  // The warpgroup kernels' tensor maps (set_wgmma_maps; the wide kernel sets its own): the rows
  // of th they read (b.n rows, th_pitch halves apart) and their squared norms (b.tn_dn; b.tn_up
  // in the sample's pass).
  CUtensorMap rows_map, norms_map;
};

/// A fused kernel as launch_fused launches it: kFusedThreads threads, `smem` bytes of dynamic
/// shared memory.
struct FusedKernel {
  void (*kernel)(FusedArgs);
  std::size_t smem;
};

/// The wgmma kernel for kp (64 or 128) product terms; only where wgmma_products_fit holds.
FusedKernel wgmma_fused_kernel(int kp);

/// Sets a's tensor maps for the wgmma kernel from its th, kh, th_pitch and bounds; `sample`: the
/// sample's pass, which reads the norms rounded up.
void set_wgmma_maps(FusedArgs& a, bool sample);

/// A fused launch's grid: blocks of kFusedQueries slots (x) by parts of the training rows (y),
/// `stages` stages a part.
struct FusedParts {
  std::int64_t blocks, parts, stages;
};

/// The grid of `fk` over slot_count slots and n training rows: as many parts as keep the device's
/// blocks busy to the last wave, each part costing `part_stages` stages more (the load of its
/// queries; more where a part starts slowly). Lets the kernel take its shared memory.
FusedParts fused_parts(const FusedKernel& fk, int slot_count, std::int64_t n, int multiprocessors, int part_stages = 1);

/// The same for a kernel of which `resident` blocks fit an SM (at least one is counted).
FusedParts fused_parts_for(int resident, int slot_count, std::int64_t n, int multiprocessors, int part_stages);

/// The grid of the fused pass for rows wider than kFusedMaxTerms terms on Hopper's warpgroup
/// instructions (wgmma_wide_fused.cu) over n training rows, kFusedRows a tile, a part's start
/// costing `part_tiles` tiles.
FusedParts wgmma_wide_parts(int slot_count, std::int64_t n, int multiprocessors, int part_tiles);

/// That pass, queued on st, over `parts` (wgmma_wide_parts): a's slots must be the queries
/// themselves (Slots::row null), whose FP16 rows (fp16_query_rows, a.kh halves each) are `qh`;
/// a's tensor maps and stages_per_part are its own. With a.tau_keys set, the sample's pass
/// (a.b the sample's bounds, a.th_pitch stride * kh), which keeps kTauKeysPerPart keys a query and
/// part there. Only where wgmma_products_fit holds.
void launch_wgmma_wide_fused(const FusedArgs& a, const __half* qh, const FusedParts& parts, cudaStream_t st);

// The fused pass's cheap test: each product first takes x = fl(fl(tn c) - 2v) <= P (two
// operations rounded to nearest), and only those that pass take the exact test
// (l2_float_bound<false>, a dozen instructions). P = tau - qn c + a + 2^-18 (qn_up + max_tn + a)
// + 2^-99, in double rounded up, then up to float, so that no product the exact test accepts
// fails the cheap one (docs/exactness.md#fused-cheap-test). NaN, so that every product takes the
// exact test, where a product could overflow (qn_up + max_tn > 2^120) or tau is not finite.
__device__ __forceinline__ float fused_cheap_limit(float qn, double qn_exact, float tau, float c, float abs_up, float max_tn) {
  const double qn_up = __double2float_ru(qn_exact);
  const double scale = qn_up + static_cast<double>(max_tn);
  if (!(scale <= 0x1p120) || !isfinite(tau)) return NAN;
  const double a = abs_up;
  const double slack = __dadd_ru(__dmul_ru(0x1p-18, __dadd_ru(scale, a)), 0x1p-99);
  const double p = __dadd_ru(__dadd_ru(__dadd_ru(static_cast<double>(tau), -__dmul_rd(static_cast<double>(qn), static_cast<double>(c))), a), slack);
  return __double2float_ru(p);
}

// What block (x, y) of a fused launch takes: slots x * kFusedQueries on, against the stages (the
// wide kernel: tiles) of kFusedRows training rows of part y, `count` of them from `first` (none
// or fewer past the last row).
struct BlockPart {
  int first_slot;
  std::int64_t first, count;
};
__device__ __forceinline__ BlockPart block_part(const FusedArgs& a) {
  const std::int64_t all = (a.b.n + kFusedRows - 1) / kFusedRows, first = blockIdx.y * a.stages_per_part;
  return BlockPart{static_cast<int>(blockIdx.x) * kFusedQueries, first, min(a.stages_per_part, all - first)};
}

// The lesser of x and y, NaN where either is NaN (fminf would give the other one).
__device__ __forceinline__ float min_nan(float x, float y) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
}

// The least, for each of a thread's two query rows h, of x = fl(tn c - 2v) over the J x 8 training
// rows its accumulators hold as an m16n8 piece's (acc[4 j + 2 h + e]: training row 8 j + 2 tig + e,
// norm tn[8 j + 2 tig + e]; -2v = inv2[h] acc), NaN where any is NaN: the first test of the
// warpgroup kernels' epilogues.
template <int J>
__device__ __forceinline__ void least_values(const float (&acc)[4 * J], const float* tn, int tig, float c, const float (&inv2)[2],
                                             float (&least)[2]) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const float2 t2 = *reinterpret_cast<const float2*>(tn + j * 8 + 2 * tig);
    const float c0 = t2.x * c, c1 = t2.y * c;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float x = min_nan(fmaf(inv2[h], acc[4 * j + 2 * h], c0), fmaf(inv2[h], acc[4 * j + 2 * h + 1], c1));
      least[h] = j == 0 ? x : min_nan(least[h], x);
    }
  }
}

// The slow branch of the warpgroup kernels' candidate pass: query row h's products with group g's
// 8 training rows (8 j + 2 tig + e for j = 4 g .. 4 g + 3; acc and tig as in least_values, tn
// their norms, read again from shared memory), x = fl(tn c - 2v) for each, and take(j, e, tn, v)
// (v the product) for each `under` the row's limit. One copy of `take`, in a loop over the
// products under the limit, keeps the code short for the instruction cache; the loop picks its
// product out of the accumulators by selects: an index into an array of them would put the array
// in local memory, and every pass over it would wait on its loads.
template <int N, class Under, class Take>
__device__ __forceinline__ void screen8(const float (&acc)[N], const volatile float* tn, int tig, float inv2, float c, int h, int g,
                                        Under&& under, Take&& take) {
  unsigned pending = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int j = 4 * g + i / 2, e = i % 2;
    if (under(fmaf(inv2, acc[4 * j + 2 * h + e], tn[j * 8 + 2 * tig + e] * c))) pending |= 1u << i;
  }
#pragma unroll 1
  for (; pending != 0; pending &= pending - 1) {
    const int i = __ffs(static_cast<int>(pending)) - 1;
    float v = acc[4 * (4 * g) + 2 * h];
#pragma unroll
    for (int m = 1; m < 8; ++m)
      if (i == m) v = acc[4 * (4 * g + m / 2) + 2 * h + m % 2];
    const int j = 4 * g + i / 2, e = i % 2;
    const float tnj = tn[j * 8 + 2 * tig + e];
    if (under(fmaf(inv2, v, tnj * c))) take(j, e, tnj, v);
  }
}

// A block's queries, in shared memory: for query r of the block (slot first_slot + r) its squared
// norm rounded down, tau, the cheap test's limit, the absolute margin, its excluded row, and with
// FP16 operands its scale (fp16_limits) and the factor that turns the accumulator into -2v.
struct FusedQueryLimits {
  float norm[kFusedQueries], tau[kFusedQueries], cheap[kFusedQueries], abs[kFusedQueries];
  float scale[kFusedQueries], inv2[kFusedQueries];
  std::int64_t excluded[kFusedQueries];
};

// Fills `ql` for the block's queries (all threads; a barrier must follow before it is read).
// Slots past the last get tau NaN and cheap limit -inf, which no product passes.
template <bool Half>
__device__ __forceinline__ void fused_query_limits(FusedQueryLimits& ql, const FusedArgs& a, int first_slot, float max_tn) {
  const Bounds& b = a.b;
  const int et = Half ? fp16_exponent(max_tn) : 0;
  for (int r = threadIdx.x; r < kFusedQueries; r += blockDim.x) {
    const int slot = first_slot + r;
    float abs_up = b.l2_abs_up, scale = 0.0f, inv2 = -2.0f;
    if (slot < a.slot_count) {
      const int row = a.slots.row_of(slot);
      if (Half) {
        const Fp16Limits h = fp16_limits(b.qn[row], max_tn, et, b.d, b.l2_abs);
        abs_up = h.abs, scale = h.scale, inv2 = h.inv2;
      }
      ql.norm[r] = __double2float_rd(b.qn[row]);
      // At most +inf; l <= it as floats is the keys' order. The sample's pass has none yet.
      ql.tau[r] = a.tau ? key_to_float(a.tau[row]) : INFINITY;
      ql.excluded[r] = b.exclude ? b.exclude[b.q0 + row] : -1;
      ql.cheap[r] = fused_cheap_limit(ql.norm[r], b.qn[row], ql.tau[r], b.c_dn, abs_up, max_tn);
    } else {
      ql.norm[r] = 0.0f;
      ql.tau[r] = NAN;          // no bound is <= NaN
      ql.cheap[r] = -INFINITY;  // nor any cheap value (a finite x) under -inf
      ql.excluded[r] = -1;
    }
    ql.abs[r] = abs_up;
    ql.scale[r] = scale;
    ql.inv2[r] = inv2;
  }
}

// Appends training row j to the list of slot `slot`, counting it (slots.count) even where the
// list is full.
__device__ __forceinline__ void fused_append(const Slots& slots, int slot, std::int64_t j) {
  const unsigned long long pos = atomicAdd(slots.count + slot, 1ull);
  if (static_cast<std::int64_t>(pos) < slots.limit_of(slot)) slots.index[slots.base_of(slot) + pos] = j;
}

// The exact test of a product that passed the cheap one: query r of the block against training
// row j (squared norm tn, rounded down), v the product q.t; whether j is a candidate of the query
// (its lower bound is <= tau, and it is a row that is not excluded).
__device__ __forceinline__ bool fused_exact_pass(const FusedArgs& a, const FusedQueryLimits& ql, int r, float v, float tn, std::int64_t j) {
  const float l = l2_float_bound<false>(v, ql.norm[r], tn, a.b.c_dn, ql.abs[r]);
  return l <= ql.tau[r] && j < a.b.n && j != ql.excluded[r];
}

// The exact test, and the append of a candidate to the query's list; where the slots keep bounds
// (prune_lists), with its lower bound and its upper one. The upper takes the squared norms the
// lower had, rounded down, each a float up (float_above): at or above those rounded up, so the
// bound holds, with nothing read from memory.
__device__ __forceinline__ void fused_exact_test(const FusedArgs& a, const FusedQueryLimits& ql, int first_slot, int r, float v, float tn,
                                                 std::int64_t j) {
  if (!fused_exact_pass(a, ql, r, v, tn, j)) return;
  const Slots& s = a.slots;
  const int slot = first_slot + r;
  const unsigned long long pos = atomicAdd(s.count + slot, 1ull);
  if (static_cast<std::int64_t>(pos) >= s.limit_of(slot)) return;
  const std::int64_t at = s.base_of(slot) + static_cast<std::int64_t>(pos);
  s.index[at] = j;
  if (s.bounds)
    s.bounds[at] = make_float2(l2_float_bound<false>(v, ql.norm[r], tn, a.b.c_dn, ql.abs[r]),
                               l2_float_bound<true>(v, float_above(ql.norm[r]), float_above(tn), a.b.c_up, ql.abs[r]));
}

// The sample's pass (launch_sample_tau) of both warpgroup kernels: upper-bound keys each thread
// keeps per query row. A query row's products of a stage are spread over the four threads of a
// quad, so a block part gives 4 kTauKeys keys a query: the k-th smallest of all parts' is tau for
// k <= kSampleTauK. A query's keys of part y: (slot * parts + y) * kTauKeysPerPart + tig * kTauKeys + m.
constexpr int kTauKeys = 4;
constexpr int kTauKeysPerPart = 4 * kTauKeys;

__device__ __forceinline__ unsigned* sample_keys_at(const FusedArgs& a, int slot) {
  return a.tau_keys + (static_cast<std::int64_t>(slot) * gridDim.y + blockIdx.y) * kTauKeysPerPart;
}

// A block whose part holds no stage: no key for its slots (all threads).
__device__ __forceinline__ void no_sample_keys(const FusedArgs& a, int first_slot) {
  for (int i = threadIdx.x; i < kFusedQueries * kTauKeysPerPart; i += blockDim.x)
    if (first_slot + i / kTauKeysPerPart < a.slot_count) sample_keys_at(a, first_slot + i / kTauKeysPerPart)[i % kTauKeysPerPart] = kNoKey;
}

// A thread's two query rows in the sample's pass (rows r0 and r0 + 8 of the block): each row's
// squared norm rounded up (and times 1 + c), its kept keys, and `limit`: what a product's
// x = fl(tn c - 2v) must stay under for its upper bound to be worth computing, the largest kept
// key less qn c (+inf until kTauKeys are kept; -inf for a slot past the last). The limit only
// spares work: any upper bound kept is a true one, so tau stays valid whatever it lets through.
struct SampleKeys {
  float qn_up[2] = {0.0f, 0.0f}, qn_c[2] = {0.0f, 0.0f}, limit[2] = {-INFINITY, -INFINITY};
  unsigned best[2][kTauKeys];

  __device__ __forceinline__ SampleKeys(const FusedArgs& a, int first_slot, int r0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int slot = first_slot + r0 + 8 * h;
#pragma unroll
      for (int m = 0; m < kTauKeys; ++m) best[h][m] = kNoKey;
      if (slot >= a.slot_count) continue;  // no key of a slot past the last is ever written
      qn_up[h] = __double2float_ru(a.b.qn[a.slots.row_of(slot)]);
      qn_c[h] = qn_up[h] * a.b.c_up;
      limit[h] = INFINITY;
    }
  }

  // Whether x passes row h's limit (NaN does).
  __device__ __forceinline__ bool under(int h, float x) const { return !(x >= limit[h]); }

  // Keeps the upper bound of row h against a training row, from p = q.t and the row's squared
  // norm rounded up (tn), if it is among the row's kTauKeys smallest; abs_up: the row's margin.
  __device__ __forceinline__ void keep(int h, float p, float tn, float c_up, float abs_up) {
    insert_key(best[h], ordered_key(l2_float_bound<true>(p, qn_up[h], tn, c_up, abs_up)));
    if (best[h][kTauKeys - 1] != kNoKey) limit[h] = key_to_float(best[h][kTauKeys - 1]) - qn_c[h];
  }

  // The sample's epilogue of a tile: of each query row's 2J products that the thread holds (acc,
  // tn, tig and inv2 as in least_values; training rows j0 + 8 j + 2 tig + e), the one with the
  // least x = fl(tn c_up - 2v) (the first of equal ones; never a NaN one) has its upper bound kept
  // when x is under the row's limit and the row is in the sample (below n) and not the query's
  // excluded one. One product a tile at most: a tile's others are left out, which can only make
  // tau larger, and the work is the same straight-line code in every warp on every tile, where
  // taking each product under the limit sent most warps down a slow branch on most tiles.
  template <int J>
  __device__ __forceinline__ void keep_least(const float (&acc)[4 * J], const float* tn, int tig, const float (&inv2)[2], float c_up,
                                             std::int64_t j0, std::int64_t n, const FusedQueryLimits& ql, int r0) {
    float least[2] = {INFINITY, INFINITY}, v[2] = {0.0f, 0.0f}, tnl[2] = {0.0f, 0.0f};
    int col[2] = {-1, -1};
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const float2 t2 = *reinterpret_cast<const float2*>(tn + j * 8 + 2 * tig);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float t = e == 0 ? t2.x : t2.y;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float a = acc[4 * j + 2 * h + e];
          const float x = fmaf(inv2[h], a, t * c_up);
          if (x < least[h]) least[h] = x, v[h] = a, tnl[h] = t, col[h] = j * 8 + 2 * tig + e;
        }
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (col[h] < 0 || !under(h, least[h])) continue;
      const std::int64_t row = j0 + col[h];
      const int r = r0 + 8 * h;
      if (row < n && row != ql.excluded[r]) keep(h, v[h] * (-0.5f * inv2[h]), tnl[h], c_up, ql.abs[r]);
    }
  }

  // Writes the kept keys of both rows (tig: the thread's place in its quad).
  __device__ __forceinline__ void write(const FusedArgs& a, int first_slot, int r0, int tig) const {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int slot = first_slot + r0 + 8 * h;
      if (slot >= a.slot_count) continue;
#pragma unroll
      for (int m = 0; m < kTauKeys; ++m) sample_keys_at(a, slot)[tig * kTauKeys + m] = best[h][m];
    }
  }
};

}  // namespace knn::cuda
