// The fused pass on Hopper's warpgroup instructions: fused_collect's work on FP16 operands of 33
// to 128 terms (fused_pass.cuh), where each of a block's four warpgroups multiplies its 64
// queries by a stage's 128 training rows with one wgmma.mma_async m64n128k16 a 16 terms, both
// operands read from shared memory, instead of 128 mma.sync a warp fed from registers. The
// products are the same products of halves summed in float (docs/exactness.md#fp16-operands),
// and every one takes the same cheap and exact tests.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/fp16_operands.cuh"
#include "backend/cuda/fused_pass.cuh"
#include "backend/cuda/tensor_ops.cuh"
#include "backend/cuda/wgmma_ops.cuh"

namespace knn::cuda {

namespace {

// Where 16-byte word w (terms 8w..8w + 7) of row r of an operand of R rows lies, in halves: the
// terms in chunks of 64, each chunk R rows of 128 bytes whose words are swizzled (word w % 8 of
// row r at (w % 8) ^ (r % 8)): the layout wgmma reads as "128-byte swizzle" from a multiple of
// 1,024 bytes, with 8-row groups 1,024 bytes apart (wgmma_operand).
template <int R>
__device__ __forceinline__ int wgmma_fused_at(int r, int w) {
  return (w / 8) * R * 64 + r * 64 + ((w % 8) ^ (r % 8)) * 8;
}

// Dynamic shared memory for KP terms: the block's queries and the ring of stages (KP halves a
// row), and room to start them at a multiple of 1,024 bytes. 193 KiB at KP = 128.
template <int KP>
constexpr std::size_t wgmma_fused_smem() {
  return static_cast<std::size_t>(kFusedQueries + kFusedRing * kFusedRows) * KP * sizeof(__half) + 1024;
}

// Block (x, y): slots x * 256 .. + 255 against the stages of part y, as fused_collect. Warpgroup
// g takes queries 64 g .. + 63 against all 128 rows of a stage; one barrier a stage.
template <int KP>
__global__ void __launch_bounds__(kFusedThreads, 1) wgmma_fused_collect(FusedArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(KP % 64 == 0, "whole 64-term chunks");
  constexpr int words = KP / 8;  // 16-byte words a row
  constexpr int stage_halves = kFusedRows * KP;
  extern __shared__ float4 wgmma_fused_smem4[];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(wgmma_fused_smem4));
  __half* const qs = reinterpret_cast<__half*>(reinterpret_cast<char*>(wgmma_fused_smem4) + ((1024 - base % 1024) % 1024));
  __half* const ring = qs + kFusedQueries * KP;
  __shared__ FusedQueryLimits ql;
  __shared__ __align__(16) float t_norm[kFusedRing][kFusedRows];  // each stage's squared norms, rounded down
  const Bounds& b = a.b;
  const int first_slot = static_cast<int>(blockIdx.x) * kFusedQueries;
  const std::int64_t all_stages = (b.n + kFusedRows - 1) / kFusedRows, stage0 = blockIdx.y * a.stages_per_part;
  const std::int64_t stages = min(a.stages_per_part, all_stages - stage0);
  if (stages <= 0) return;  // the same for the whole block
  fused_query_limits<true>(ql, a, first_slot, *a.max_tn);
  __syncthreads();  // ql.scale
  // The queries, each scaled by its power of 2 and rounded to FP16: zeros past kdim and past the
  // slots. Made visible to wgmma by the first stage's fence and barrier.
  for (int i = threadIdx.x; i < kFusedQueries * words; i += kFusedThreads) {
    const int r = i / words, w = i % words, slot = first_slot + r;
    unsigned h[4] = {0u, 0u, 0u, 0u};
    if (slot < a.slot_count) {
      const float* const row = a.q + static_cast<std::int64_t>(a.slots.row_of(slot)) * a.kdim;
      const float scale = ql.scale[r];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = w * 8 + 2 * e;
        h[e] = fp16_pair(t < a.kdim ? row[t] * scale : 0.0f, t + 1 < a.kdim ? row[t + 1] * scale : 0.0f);
      }
    }
    *reinterpret_cast<uint4*>(qs + wgmma_fused_at<kFusedQueries>(r, w)) = make_uint4(h[0], h[1], h[2], h[3]);
  }
  // Stage s: the training rows' FP16 operands of stage0 + s into ring place s % kFusedRing (zeros
  // past kh and past the rows), with their norms. This thread's copies are word copy_word of rows
  // copy_row + n * row_step, whose swizzle is the same (row_step is a multiple of 8).
  constexpr int row_step = kFusedThreads / words, copies = kFusedRows / row_step;
  static_assert(kFusedThreads % words == 0 && row_step % 8 == 0 && kFusedRows % row_step == 0, "whole columns of words, one swizzle");
  const int copy_row = static_cast<int>(threadIdx.x) / words, copy_word = static_cast<int>(threadIdx.x) % words;
  const int copy_at = wgmma_fused_at<kFusedRows>(copy_row, copy_word);
  const auto load_stage = [&](std::int64_t s) {
    const std::int64_t j0 = (stage0 + s) * kFusedRows;
    __half* const dst = ring + static_cast<int>(s % kFusedRing) * stage_halves + copy_at;
    const __half* const p = a.th + (j0 + copy_row) * a.kh + copy_word * 8;
    const std::int64_t copy_step = std::int64_t{row_step} * a.kh;
    // Every copy whole: a test the whole block takes alike, so that no warp is left divergent
    // before its aligned steps.
    if (KP <= a.kh && b.n - j0 >= kFusedRows) {
#pragma unroll
      for (int n = 0; n < copies; ++n) cp_async16(dst + n * row_step * 64, p + n * copy_step, 16);
    } else {
      const bool in_terms = copy_word * 8 < a.kh;
#pragma unroll
      for (int n = 0; n < copies; ++n) {
        const bool in = in_terms && j0 + copy_row + n * row_step < b.n;
        cp_async16(dst + n * row_step * 64, in ? p + n * copy_step : a.th, in ? 16 : 0);
      }
    }
    fused_copy_norms(t_norm[s % kFusedRing], b.tn_dn, b.n, j0);
  };
  // A copy group a stage, empty ones past the last, so that "all but the newest kFusedRing - 2
  // groups done" means stage s is in.
#pragma unroll
  for (int s = 0; s < kFusedRing - 1; ++s) {
    if (s < stages) load_stage(s);
    cp_async_commit();
  }
  // Warp (group, quarter): rows 64 group + 16 quarter + gid (+ 8) of the block's queries; its
  // accumulators hold them against every 8 training rows of the stage as an m16n8 piece's:
  // acc[4 j + 2 h + e] is query row ... + 8 h, training row 8 j + 2 tig + e.
  const int group = static_cast<int>(threadIdx.x) / 128, quarter = static_cast<int>(threadIdx.x) / 32 % 4;
  const int lane = static_cast<int>(threadIdx.x) % 32, gid = lane / 4, tig = lane % 4;
  const int r0 = group * 64 + quarter * 16 + gid;
  const float cheap[2] = {ql.cheap[r0], ql.cheap[r0 + 8]}, inv2[2] = {ql.inv2[r0], ql.inv2[r0 + 8]};
  // Shared-memory addresses: the group's rows of the first 64-term chunk, and the ring.
  const auto qa_at = static_cast<std::uint32_t>(__cvta_generic_to_shared(qs + group * 64 * 64));
  const auto ring_at = static_cast<std::uint32_t>(__cvta_generic_to_shared(ring));
  float acc[64];
  for (std::int64_t stage = 0; stage < stages; ++stage) {
    cp_async_wait<kFusedRing - 2>();
    async_proxy_fence();
    // The stage is in for every thread, and every warpgroup is done with the one refilled next.
    __syncthreads();
    if (stage + kFusedRing - 1 < stages) load_stage(stage + kFusedRing - 1);
    cp_async_commit();
    const int place = static_cast<int>(stage % kFusedRing);
    const std::uint32_t tb_at = ring_at + place * stage_halves * 2;
    wgmma_hold(acc);
    wgmma_begin();
    // 16 terms a step (32 bytes of a 128-byte row), four steps a 64-term chunk.
#pragma unroll
    for (int ks = 0; ks < KP / 16; ++ks)
      WgmmaAcc<128>::mma(acc, wgmma_operand_at(qa_at + ((ks / 4) * kFusedQueries * 64 + (ks % 4) * 16) * 2),
                         wgmma_operand_at(tb_at + ((ks / 4) * kFusedRows * 64 + (ks % 4) * 16) * 2), ks > 0);
    wgmma_end();
    wgmma_hold(acc);
    // The cheap test of a query row's 32 products at once (fused_collect's, docs/exactness.md
    // #fused-cheap-test): the least of their cheap values x, NaN where any is NaN. A row with one
    // that passes is tested again 8 products at a time, and only a group with one that passes
    // product by product, then by the exact bound: one warp's slow branch holds the whole block
    // at the next stage's barrier, so it is kept short.
    const float* const tn = t_norm[place];
    float least[2];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const float2 t2 = *reinterpret_cast<const float2*>(tn + j * 8 + 2 * tig);
      const float c0 = t2.x * b.c_dn, c1 = t2.y * b.c_dn;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float x = min_nan(fmaf(inv2[h], acc[4 * j + 2 * h], c0), fmaf(inv2[h], acc[4 * j + 2 * h + 1], c1));
        least[h] = j == 0 ? x : min_nan(least[h], x);
      }
    }
    if (!(least[0] > cheap[0]) || !(least[1] > cheap[1])) {
      const std::int64_t j0 = (stage0 + stage) * kFusedRows;
      // The norms read again (volatile): kept from the cheap test above, their products with c
      // went to local memory on every stage, for this rarely taken branch.
      const volatile float* const tnv = tn;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (least[h] > cheap[h]) continue;
#pragma unroll
        for (int g = 0; g < 4; ++g) {
          float x[8], tnj[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int j = 4 * g + i / 2, e = i % 2;
            tnj[i] = tnv[j * 8 + 2 * tig + e];
            x[i] = fmaf(inv2[h], acc[4 * j + 2 * h + e], tnj[i] * b.c_dn);
          }
          float group = x[0];
#pragma unroll
          for (int i = 1; i < 8; ++i) group = min_nan(group, x[i]);
          if (group > cheap[h]) continue;
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int j = 4 * g + i / 2, e = i % 2, col = j * 8 + 2 * tig + e;
            if (!(x[i] > cheap[h])) fused_exact_test(a, ql, first_slot, r0 + 8 * h, acc[4 * j + 2 * h + e] * (-0.5f * inv2[h]), tnj[i], j0 + col);
          }
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy outlives the block (the last groups are empty)
#else
  (void)a;
  __trap();  // launch_fused takes it only where this body was built (wgmma_products_fit)
#endif
}

}  // namespace

FusedKernel wgmma_fused_kernel(int kp) {
  return kp <= 64 ? FusedKernel{wgmma_fused_collect<64>, wgmma_fused_smem<64>()} : FusedKernel{wgmma_fused_collect<128>, wgmma_fused_smem<128>()};
}

}  // namespace knn::cuda
