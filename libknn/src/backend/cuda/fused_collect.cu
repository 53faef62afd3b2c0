// The fused pass: tuning, operand layouts and the kernel. Its margins (the FP16 operands' limits,
// the cheap test) are proved in docs/exactness.md#fp16-operands and #fused-cheap-test.
#include "backend/cuda/fused_collect.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <knn/prim/device/device_reduce.cuh>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/fp16_products_kernel.cuh"
#include "backend/cuda/fused_pass.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

// kFusedThreads: 16 warps, 4 x 4 over the 256 x 128 stage, 64 x 32 each. The ring's places hold
// chunks: a whole stage with FP16 operands, kFusedChunk terms of it with TF32 ones.
constexpr int kFusedChunk = 32;  // product terms a chunk of a stage with TF32 operands (the unit of the copy ring)

// FP16 operands (TF32 searches, by default; fp16_operands.cuh): a chunk holds all of a stage's
// terms (32, 64 or 128), so that a stage takes one barrier; 64 to 256 bytes a row with no padding:
// from 64 terms on, the 16-byte words of odd rows are swizzled (word w at w ^ 4) so that a quarter
// warp's loads from two rows fall in distinct banks.

template <bool Half>
__host__ __device__ constexpr int fused_chunk_terms(int kp) { return Half ? kp : kFusedChunk; }
// Elements a training row takes in a chunk buffer: kFusedChunk + 4 floats (so that the 16-byte
// loads of a quarter warp fall in distinct banks), or the chunk's halves (swizzled from 64 on).
template <bool Half>
__host__ __device__ constexpr int fused_chunk_stride(int kp) { return Half ? fused_chunk_terms<true>(kp) : kFusedChunk + 4; }

// Dynamic shared memory of fused_collect for kp product terms (32, 64 or 128): the queries
// (A-fragment order) and the ring of chunks. 200 KiB at kp = 128 with TF32 operands, 192 with FP16.
template <bool Half>
constexpr std::size_t fused_smem_bytes(int kp) {
  const std::size_t element = Half ? 2 : 4;
  return (static_cast<std::size_t>(kFusedQueries) * kp + static_cast<std::size_t>(kFusedRing) * kFusedRows * fused_chunk_stride<Half>(kp)) *
         element;
}

// Warp 0's copies of a stage's squared norms (rounded down), rows j0.. into `to`: four norms a
// lane, each a copy of its own. Past the end of the rows a norm is a copy of 0 bytes (a zero) from
// the first norm, which exists. Byte counts, not a branch, so that no lane of warp 0 parts from
// the others before its aligned tensor-core steps; and 4-byte copies, as a 16-byte copy that the
// rows' end cuts short still addresses 16 bytes, past the end of the norms (compute-sanitizer's
// memcheck reports it as an invalid read).
__device__ __forceinline__ void fused_copy_norms(float* to, const float* tn_dn, std::int64_t n, std::int64_t j0) {
  static_assert(kFusedRows == 4 * 32, "warp 0 copies the norms");
  if (threadIdx.x >= 32) return;
  const std::int64_t j = j0 + threadIdx.x * 4;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const bool in = j + e < n;
    cp_async4(&to[threadIdx.x * 4 + e], in ? tn_dn + j + e : tn_dn, in ? 4 : 0);
  }
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
  __shared__ FusedQueryLimits ql;
  // The stage's squared norms (rounded down), copied with its last chunk into that chunk's place.
  __shared__ __align__(16) float t_norm[kFusedRing][kFusedRows];
  const Bounds& b = a.b;
  const BlockPart part = block_part(a);
  const int first_slot = part.first_slot;
  const std::int64_t stage0 = part.first, stages = part.count;
  if (stages <= 0) return;  // the same for the whole block
  const std::int64_t chunks = stages * chunks_per_stage;
  fused_query_limits<Half>(ql, a, first_slot, *a.max_tn);
  if (Half) {
    __syncthreads();  // q_scale
    fused_fill_queries_h<KP>(qf, a.q, a.kdim, a.slots, first_slot, a.slot_count, ql.scale);
  } else {
    fused_fill_queries<KP>(reinterpret_cast<float4*>(qf), a.q, a.kdim, a.slots, first_slot, a.slot_count);
  }
  // Chunk c: terms (c % chunks_per_stage) * CH .. + CH - 1 of the training rows of stage
  // c / chunks_per_stage, into ring place c % kFusedRing (zeros past kdim and past the rows).
  // FP16 and aligned TF32 rows are copied in 16-byte words: this thread's are word copy_word of
  // rows copy_row + n * row_step of the stage, their place in a chunk found once here, and their
  // sources a row step apart (addressed copy by copy, the addresses took more instructions than
  // the copies).
  constexpr int words = CH / per_word;  // 16-byte words a row of a chunk
  constexpr int row_step = kFusedThreads / words, copies = kFusedRows / row_step;
  static_assert(kFusedThreads % words == 0 && kFusedRows % row_step == 0 && row_step % 2 == 0,
                "every thread copies whole columns of words, of rows of one parity (the swizzle)");
  const int ld = Half ? a.kh : a.kdim, kmax = Half ? a.kh : a.kdim;
  const Element* const rows = reinterpret_cast<const Element*>(Half ? static_cast<const void*>(a.th) : static_cast<const void*>(a.t));
  const int copy_row = static_cast<int>(threadIdx.x) / words, copy_word = static_cast<int>(threadIdx.x) % words;
  const int copy_term = copy_word * per_word;
  // 16-byte word w of row r at w ^ 4 in odd rows of FP16 chunks of 64 terms or more (the swizzle above).
  const int copy_at = copy_row * cstride + (Half && CH >= 64 ? copy_word ^ ((copy_row & 1) << 2) : copy_word) * per_word;
  const auto load_chunk = [&](std::int64_t c) {
    const std::int64_t s = c / chunks_per_stage;
    const int k0 = static_cast<int>(c - s * chunks_per_stage) * CH, place = static_cast<int>(c % kFusedRing);
    const std::int64_t j0 = (stage0 + s) * kFusedRows;
    Element* const dst = ring + place * kFusedRows * cstride;
    if (Half || Vec) {
      const Element* const p = rows + (j0 + copy_row) * ld + k0 + copy_term;
      const std::int64_t copy_step = std::int64_t{row_step} * ld;
      // Every copy whole (the chunk's terms all below kmax, and 128 rows left): a test the whole
      // block takes alike, so that no warp is left divergent before its mma.sync.aligned steps.
      // Rows whose kh falls short of KP take the tested copies in every stage.
      if (k0 + CH <= kmax && b.n - j0 >= kFusedRows) {
#pragma unroll
        for (int n = 0; n < copies; ++n) cp_async16(dst + copy_at + n * row_step * cstride, p + n * copy_step, 16);
      } else {
        const bool in_terms = k0 + copy_term < kmax;
#pragma unroll
        for (int n = 0; n < copies; ++n) {
          const bool in = in_terms && j0 + copy_row + n * row_step < b.n;
          cp_async16(dst + copy_at + n * row_step * cstride, in ? p + n * copy_step : rows, in ? 16 : 0);
        }
      }
    } else {
      for (int i = threadIdx.x; i < kFusedRows * CH; i += kFusedThreads) {
        const int r = i / CH, f = k0 + i % CH;
        const std::int64_t j = j0 + r;
        const bool in = j < b.n && f < a.kdim;
        cp_async4(reinterpret_cast<float*>(dst) + r * cstride + (f - k0), in ? a.t + j * a.kdim + f : a.t, in ? 4 : 0);
      }
    }
    if (k0 + CH == KP) fused_copy_norms(t_norm[place], b.tn_dn, b.n, j0);
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
    for (int h = 0; h < 2; ++h) cheap[m][h] = ql.cheap[wm * 64 + m * 16 + h * 8 + gid];
  const uint4* const qa = qf + (wm * 4) * (KP / kstep) * 32 + lane;  // this warp's first 16-row tile
  // The products of the stage: each starts from its first MMA (mma_f16_first, mma_tf32_first),
  // which takes no accumulator.
  float acc[4][4][4];

  for (std::int64_t stage = 0; stage < stages; ++stage) {
#pragma unroll
    for (int u = 0; u < chunks_per_stage; ++u) {
      const std::int64_t c = stage * chunks_per_stage + u;
      cp_async_wait<kFusedRing - 2>();
      // Chunk c is in for every thread, and every thread is done with chunk c - 1, whose place
      // the copy below refills.
      __syncthreads();
      if (c + kFusedRing - 1 < chunks) load_chunk(c + kFusedRing - 1);
      cp_async_commit();
      const int place = static_cast<int>(c % kFusedRing);
      const Element* const tb = ring + place * kFusedRows * cstride + (wn * 32 + gid) * cstride;
      if (Half) {
        // The stage's terms 32 at a time (a chunk is the whole stage): one 16-byte word of B (8
        // terms) a lane and column tile, for k-steps s and s + 1. The first 32 start the products;
        // the loop over the rest is not unrolled, which keeps the registers within the block's
        // 128 (unrolled over 128 terms, they spilled).
        static_assert(!Half || chunks_per_stage == 1, "FP16 chunks are whole stages");
        const auto terms32 = [&](int p, auto first) {
          const int s = p * 2, w = p * 4 + tig, at = CH >= 64 ? w ^ ((gid & 1) << 2) : w;
          uint4 bf[4];
#pragma unroll
          for (int n = 0; n < 4; ++n) bf[n] = *reinterpret_cast<const uint4*>(tb + n * 8 * cstride + at * 8);
#pragma unroll
          for (int step = 0; step < 2; ++step)
#pragma unroll
            for (int m = 0; m < 4; ++m) {
              const uint4 af = qa[(m * (KP / 16) + s + step) * 32];
#pragma unroll
              for (int n = 0; n < 4; ++n) {
                const unsigned b0 = step ? bf[n].z : bf[n].x, b1 = step ? bf[n].w : bf[n].y;
                if (decltype(first)::value && step == 0) {
                  mma_f16_first(acc[m][n], af.x, af.y, af.z, af.w, b0, b1);
                } else {
                  mma_f16(acc[m][n], af.x, af.y, af.z, af.w, b0, b1);
                }
              }
            }
        };
        terms32(0, std::true_type{});
#pragma unroll 1
        for (int p = 1; p < CH / 32; ++p) terms32(p, std::false_type{});
      } else {
        // The chunk's 32 terms in two halves (4 of this thread's 8 values of B): k-steps s and s + 1.
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int s = u * CH / 8 + half * 2;
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
                if (s + step == 0) {
                  mma_tf32_first(acc[m][n], af.x, af.y, af.z, af.w, b0, b1);
                } else {
                  mma_tf32(acc[m][n], af.x, af.y, af.z, af.w, b0, b1);
                }
              }
            }
        }
      }
    }
    // acc[m][n][e]: query row wm * 64 + m * 16 + gid (+ 8 for e >= 2), training row
    // wn * 32 + n * 8 + 2 tig (+ 1 for odd e) of the stage; v = acc (TF32) or acc inv2 / -2 (FP16).
    const std::int64_t j0 = (stage0 + stage) * kFusedRows;
    const float* const tn = t_norm[static_cast<int>((stage * chunks_per_stage + chunks_per_stage - 1) % kFusedRing)];
    float tnc[4][2];  // tn c of this thread's 8 columns (fused_cheap_limit)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) tnc[n][e] = tn[wn * 32 + n * 8 + 2 * tig + e] * b.c_dn;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      float inv2[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) inv2[h] = Half ? ql.inv2[wm * 64 + m * 16 + h * 8 + gid] : -2.0f;
      // The cheap test of a query row's 8 products at once: the least of their cheap values x
      // (NaN where any is NaN), so that "some x passes" is one comparison; the rare rows with a
      // product that passes test each product again, then the exact bound.
      bool any = false;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float least = fmaf(inv2[h], acc[m][0][2 * h], tnc[0][0]);
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (n + e > 0) least = min_nan(least, fmaf(inv2[h], acc[m][n][2 * h + e], tnc[n][e]));
        any |= !(least > cheap[m][h]);
      }
      if (any) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = wm * 64 + m * 16 + h * 8 + gid;
#pragma unroll
          for (int n = 0; n < 4; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (!(fmaf(inv2[h], acc[m][n][2 * h + e], tnc[n][e]) > cheap[m][h])) {
                const float v = Half ? acc[m][n][2 * h + e] * (-0.5f * inv2[h]) : acc[m][n][2 * h + e];
                const int col = wn * 32 + n * 8 + 2 * tig + e;
                fused_exact_test(a, ql, first_slot, r, v, tn[col], j0 + col);
              }
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy outlives the block (the last groups are empty)
}

// The fused pass for rows wider than kFusedMaxTerms terms, on FP16 operands: the written
// products' kernel (fp16_products_kernel, tiling T), whose queries are the slots' rows and whose
// epilogue takes fused_collect's tests instead of storing the products: the cheap test, then the
// exact lower bound against tau for the few that pass, appending the rows that pass both.
// Neither operand fits in shared memory whole, so both are streamed; a block takes T::TileQ slots
// against T::TileT training rows.
struct WideFusedArgs {
  const __half* qh;  // the queries' FP16 rows (fp16_query_rows), kh halves each
  const __half* th;  // the training rows' (fp16_training_rows)
  int kh;
  Bounds b;  // l2 over all n rows: norms, margins, excluded rows (b.s is not read)
  const unsigned* tau;
  Slots slots;
  int slot_count;
  const float* max_tn;
};

template <class T>
__global__ void __launch_bounds__(T::Threads, T::MinBlocks) wide_fused_collect(WideFusedArgs a, int tiles_q, int tiles_t) {
  constexpr int MT = T::WarpQ / 16, NT = T::WarpT / 8;
  extern __shared__ float4 smem4[];
  __half* const smem = reinterpret_cast<__half*>(smem4);
  __shared__ std::int64_t q_row[T::TileQ], q_excluded[T::TileQ];
  __shared__ float q_norm[T::TileQ], q_tau[T::TileQ], q_cheap[T::TileQ], q_abs[T::TileQ], q_inv2[T::TileQ];
  __shared__ float t_norm[T::TileT];  // the tile's training rows' squared norms, rounded down
  const Bounds& b = a.b;
  const int2 tile = product_tile_of(static_cast<int>(blockIdx.x), tiles_q, tiles_t);
  const int first_slot = tile.x * T::TileQ;
  const std::int64_t t0 = static_cast<std::int64_t>(tile.y) * T::TileT;
  const float max_tn = *a.max_tn;
  const int et = fp16_exponent(max_tn);
  for (int r = threadIdx.x; r < T::TileQ; r += T::Threads) {
    const int slot = first_slot + r;
    if (slot < a.slot_count) {
      const int row = a.slots.row_of(slot);
      const Fp16Limits h = fp16_limits(b.qn[row], max_tn, et, b.d, b.l2_abs);
      q_row[r] = row;
      q_norm[r] = __double2float_rd(b.qn[row]);
      q_tau[r] = key_to_float(a.tau[row]);  // at most +inf; l <= it as floats is the keys' order
      q_excluded[r] = b.exclude ? b.exclude[b.q0 + row] : -1;
      q_cheap[r] = fused_cheap_limit(q_norm[r], b.qn[row], q_tau[r], b.c_dn, h.abs, max_tn);
      q_abs[r] = h.abs;
      q_inv2[r] = h.inv2;
    } else {
      q_row[r] = -1;
      q_norm[r] = 0.0f;
      q_tau[r] = NAN;          // no bound is <= NaN
      q_cheap[r] = -INFINITY;  // nor any cheap value (a finite x) under -inf
      q_excluded[r] = -1;
      q_abs[r] = INFINITY;
      q_inv2[r] = -2.0f;
    }
  }
  __syncthreads();  // q_row, before the first copies
  const std::int64_t t_count = b.n - t0 < T::TileT ? b.n - t0 : T::TileT;
  const int steps = (a.kh + T::Terms - 1) / T::Terms;
  const HalfRowCopies<T, T::TileT> copy_t(a.th + t0 * a.kh, a.kh, t_count);
  const auto load = [&](int step) {
    __half* const stage = smem + (step % T::Stages) * T::StageHalves;
    const int k0 = step * T::Terms;
    // The slots' query rows (zeros for slots past the last), then the training rows.
#pragma unroll 4
    for (int i = threadIdx.x; i < T::TileQ * T::Words; i += T::Threads) {
      const int r = i / T::Words, w = i % T::Words, f = k0 + w * 8;
      const bool in = q_row[r] >= 0 && f < a.kh;
      cp_async16(stage + r * T::Terms + ((w ^ (r % 8)) * 8), in ? a.qh + q_row[r] * a.kh + f : a.qh, in ? 16 : 0);
    }
    copy_t(stage + T::TileQ * T::Terms, a.kh, k0, a.th);
  };
  float acc[MT][NT][4];
  fp16_block_products<T>(smem, steps, load, acc);
  const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
  const int2 corner = warp_corner<T>();
  const int wq = corner.x, wt = corner.y;
  // The tile's products go through shared memory (the stages are free now): tests unrolled over
  // a thread's 128 accumulators made the kernel too large for the instruction cache (Nsight
  // Compute: a third of its stalls were instruction fetches). acc[i][j][2h + e] is slot row
  // wq + 16i + gid + 8h of the block, training row t0 + wt + 8j + 2tig + e.
  constexpr int pitch = T::TileT + 4;  // floats a row of the tile takes
  static_assert(T::Threads >= T::TileT, "one thread a column loads the tile's norms");
  static_assert(static_cast<std::size_t>(T::TileQ) * pitch * sizeof(float) <= T::SmemBytes, "the tile fits the stages");
  float* const tile_v = reinterpret_cast<float*>(smem);
  __syncthreads();  // every warp is done with the last stage
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(tile_v + (wq + i * 16 + gid + 8 * h) * pitch + wt + j * 8 + 2 * tig) =
            make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
  if (threadIdx.x < T::TileT) {
    const std::int64_t col = t0 + threadIdx.x;
    t_norm[threadIdx.x] = col < b.n ? b.tn_dn[col] : 0.0f;
  }
  __syncthreads();
#pragma unroll 4
  for (int x = threadIdx.x; x < T::TileQ * T::TileT; x += T::Threads) {
    const int r = x / T::TileT, c = x % T::TileT;
    const float acc_v = tile_v[r * pitch + c], tn = t_norm[c], inv2 = q_inv2[r];
    if (fmaf(inv2, acc_v, tn * b.c_dn) > q_cheap[r]) continue;  // the cheap test: most products stop here
    const float l = l2_float_bound<false>(acc_v * (-0.5f * inv2), q_norm[r], tn, b.c_dn, q_abs[r]);
    const std::int64_t col = t0 + c;
    if (l <= q_tau[r] && col < b.n && col != q_excluded[r]) fused_append(a.slots, first_slot + r, col);
  }
}

// The wide kernel's tiling: the written FP16 products' (products.cu).
using WideFusedTiling = Fp16Tiling<128, 128, 64, 64, 3, 2>;

}  // namespace

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
  fp16_training_rows(rows, n, d, kh, max_tn.get(), rows_h.get(), st);
}

FusedParts fused_parts(const FusedKernel& fk, int slot_count, std::int64_t n, int multiprocessors, int part_stages) {
  KNN_CUDA(cudaFuncSetAttribute(fk.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(fk.smem)));
  int resident = 0;
  KNN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fk.kernel, kFusedThreads, fk.smem));
  return fused_parts_for(resident, slot_count, n, multiprocessors, part_stages);
}

FusedParts fused_parts_for(int resident, int slot_count, std::int64_t n, int multiprocessors, int part_stages) {
  const std::int64_t places = std::int64_t{std::max(resident, 1)} * multiprocessors;
  const std::int64_t blocks = (slot_count + kFusedQueries - 1) / kFusedQueries;
  const std::int64_t stages = std::max<std::int64_t>((n + kFusedRows - 1) / kFusedRows, 1);
  std::int64_t best_parts = 1, best_cost = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t parts = 1; parts <= std::min<std::int64_t>(stages, 8192); ++parts) {
    const std::int64_t per = (stages + parts - 1) / parts, used = (stages + per - 1) / per;
    const std::int64_t cost = (blocks * used + places - 1) / places * (per + part_stages);
    if (cost < best_cost) best_cost = cost, best_parts = used;
  }
  return FusedParts{blocks, best_parts, (stages + best_parts - 1) / best_parts};
}

// fused_collect over `slot_count` slots, queued on st: the training rows split into as many parts
// as keep the device's blocks busy to the last wave (each part costs one more stage: the load of
// its queries).
void launch_fused(const FusedPlan& p, const Bounds& b, const unsigned* tau, const Slots& slots, int slot_count,
                  int multiprocessors, cudaStream_t st) {
  if (slot_count == 0) return;
  if (slots.bounds && !wide_wgmma_takes(p, slots)) throw Error("the fused pass keeps its candidates' bounds only on the wide warpgroup kernel");
  KNN_CUDA(cudaMemsetAsync(slots.count, 0, static_cast<std::size_t>(slot_count) * sizeof(unsigned long long), st));
  if (p.kdim > kFusedMaxTerms) {  // wide rows: both operands streamed, FP16 only (plan_search)
    using T = WideFusedTiling;
    if (!p.qh || !p.th) throw Error("the fused pass for rows of more than " + std::to_string(kFusedMaxTerms) + " terms needs FP16 operands");
    if (wide_wgmma_takes(p, slots)) {  // the first round, on Hopper: the warpgroup kernel
      const FusedParts parts = wgmma_wide_parts(slot_count, b.n, multiprocessors, 1);
      const FusedArgs args{p.q, p.t, p.th, p.kdim, p.kh, b, tau, slots, slot_count, parts.stages, p.max_tn, p.kh, nullptr};
      launch_wgmma_wide_fused(args, p.qh, parts, st);
      return;
    }
    const std::int64_t tiles_q = (slot_count + T::TileQ - 1) / T::TileQ, tiles_t = (b.n + T::TileT - 1) / T::TileT;
    if (tiles_q * tiles_t > std::numeric_limits<int>::max()) throw Error("the fused pass: too many tiles in one launch");
    const auto kernel = wide_fused_collect<T>;
    KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::SmemBytes)));
    const WideFusedArgs args{p.qh, p.th, p.kh, b, tau, slots, slot_count, p.max_tn};
    kernel<<<static_cast<unsigned>(tiles_q * tiles_t), T::Threads, T::SmemBytes, st>>>(args, static_cast<int>(tiles_q), static_cast<int>(tiles_t));
    KNN_LAUNCHED(wide_fused_collect);
    return;
  }
  // Terms rounded up to 32, 64 or 128 (zero-filled): the count is a constant of the kernel.
  const int kp = p.kdim <= 32 ? 32 : p.kdim <= 64 ? 64 : 128;
  const bool half = p.th != nullptr, vec = p.kdim % 4 == 0;
  const std::size_t smem = half ? fused_smem_bytes<true>(kp) : fused_smem_bytes<false>(kp);
  using Kernel = void (*)(FusedArgs);
  const Kernel kernels[3][3] = {{fused_collect<32, false, false>, fused_collect<32, true, false>, fused_collect<32, true, true>},
                                {fused_collect<64, false, false>, fused_collect<64, true, false>, fused_collect<64, true, true>},
                                {fused_collect<128, false, false>, fused_collect<128, true, false>, fused_collect<128, true, true>}};
  FusedKernel fk{kernels[kp == 32 ? 0 : kp == 64 ? 1 : 2][half ? 2 : vec ? 1 : 0], smem};
  // FP16 operands of 64 or 128 terms on Hopper's warpgroup instructions (GpuContext::wgmma).
  const bool wgmma = half && kp >= 64 && p.wgmma;
  if (wgmma) fk = wgmma_fused_kernel(kp);
  const FusedParts parts = fused_parts(fk, slot_count, b.n, multiprocessors);
  FusedArgs args{p.q, p.t, p.th, p.kdim, p.kh, b, tau, slots, slot_count, parts.stages, p.max_tn, p.kh, nullptr};
  if (wgmma) set_wgmma_maps(args, false);
  fk.kernel<<<dim3(static_cast<unsigned>(parts.blocks), static_cast<unsigned>(parts.parts)), kFusedThreads, fk.smem, st>>>(args);
  KNN_LAUNCHED(fused_collect);
}

// tau's sample for the fused path: one training row in `stride`. The candidates then number
// about stride * k plus those within the margin, which must fit the first round's lists of
// 2k + 256 places: stride up to a quarter of (2k + 256) / k (a fifth where the sample's pass runs
// in the product kernel, `in_kernel`: each candidate fewer saved more there than the denser
// sample cost, bench/RESULTS.md), at most 32, and the sample at least 4k rows (a sparser sample
// only lengthens the lists that the pass and the ranking then handle). `asked` (the tuning's, for
// measurements) replaces the first bound where it is not 0; lists that overflow then take the
// second round, so every stride gives the same answer.
//
// Rows wider than kFusedMaxTerms with the sample's pass in the product kernel: the pass costs
// about 1/stride of the candidate pass, and the candidates about k stride, so the best stride
// falls as 1/sqrt(k): 14/sqrt(k) took one row in 6 at k = 5, where 5 to 8 were within 2% of each
// other and 3 or 10 were slower, on Fashion-MNIST on an H200 (bench/RESULTS.md).
//
// From kGuessedTauK to kGuessedTauMaxK, tau is a guess (guessed_tau_rank) whose candidates number
// about k + 4 sqrt(k stride), so the sample can be sparse: one row in kGuessedStride. At 10^6 x
// 128 and k = 1,000 on an H200 one row in 8 took 28.6 ms, in 15 30.8 and in 4 36.1
// (bench/RESULTS.md): a denser sample costs more than the candidates it spares, a sparser one
// more in candidates than it saves.
int fused_stride(std::int64_t k, std::int64_t n, int asked, bool in_kernel, bool wide) {
  const std::int64_t by_lists = asked > 0               ? asked
                                : guessed_tau_fits(k)   ? kGuessedStride
                                : in_kernel && wide     ? std::lround(14.0 / std::sqrt(static_cast<double>(k)))
                                                        : (2 * k + 256) / ((in_kernel ? 5 : 4) * k);
  const std::int64_t by_rows = n / (4 * k);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(by_lists, by_rows), 1, asked > 0 ? 1024 : 32));
}

int guessed_tau_rank(std::int64_t k, int stride) {
  if (!guessed_tau_fits(k) || stride <= 1) return static_cast<int>(k);
  const double rows = static_cast<double>(k) + 4.0 * std::sqrt(static_cast<double>(k) * stride);
  return static_cast<int>(std::min<std::int64_t>(k, static_cast<std::int64_t>(std::ceil(rows / stride))));
}

namespace {
// The sample's squared norms (every stride-th row's), and each query's excluded row as a row of
// the sample (-1 when it is not in it), so that the sample's bounds mask it as the full ones do.
__global__ void take_sample_kernel(const double* tn, const float* up, const float* dn, std::int64_t n_s, int stride, double* s_tn,
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

}  // namespace

void take_sample(const double* tn, const float* up, const float* dn, std::int64_t n_s, int stride, double* s_tn, float* s_up,
                 float* s_dn, const std::int64_t* exclude, std::int64_t nq, std::int64_t* s_exclude, cudaStream_t st) {
  const std::int64_t items = std::max(n_s, exclude ? nq : 0);
  take_sample_kernel<<<blocks_for(items, 256), 256, 0, st>>>(tn, up, dn, n_s, stride, s_tn, s_up, s_dn, exclude, nq, s_exclude);
  KNN_LAUNCHED(take_sample);
}

}  // namespace knn::cuda
