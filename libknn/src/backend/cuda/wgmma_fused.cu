// The fused pass on Hopper's warpgroup instructions: fused_collect's work on FP16 operands of 33
// to 128 terms (fused_pass.cuh), where each of a block's four warpgroups multiplies its 64
// queries by a stage's 128 training rows with wgmma.mma_async (m64n128k16 in the candidate pass,
// two halves of m64n64k16 in the sample's), both operands read from shared memory, instead of
// 128 mma.sync a warp fed from registers. The products are the same products of halves summed in
// float (docs/exactness.md#fp16-operands), and every one takes the same cheap and exact tests.
//
// The same kernel takes tau's sample first (launch_sample_tau): the products with every
// stride-th training row, of which each thread keeps the smallest upper bounds of its queries in
// registers, so that the sample's products are never written (docs/exactness.md#sampled-tau).
//
// The training rows come in through a ring of kFusedRing stages that Hopper's copy engine fills
// (tma_copies.cuh), each stage with a barrier that says it has landed. The block never meets as
// a whole: each warp waits only for the stage it multiplies next, and the last warp to be done
// with a stage refills its place. A warp whose rows hold a candidate takes a slow branch; the
// others go on, up to the stages the ring holds, instead of waiting for it at every stage.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/cuda/copy_ring.cuh"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/fp16_operands.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/fused_pass.cuh"
#include "backend/cuda/tensor_maps.cuh"
#include "backend/cuda/tma_copies.cuh"
#include "backend/cuda/wgmma_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

// The sample's pass: a part's first stages are slow (launch_sample_tau).
constexpr int kSamplePartStages = 32;

static_assert(kTauKeysPerPart >= kSampleTauK, "a block part's keys cover k");

// The candidate pass: candidates a warp holds in shared memory before it appends them to their
// queries' lists. Each append takes a global atomic whose result it waits for; taken one by one
// in a warp's slow branch, they held it a round trip each (at k = 1,000 most warps find some
// candidates in every stage), where 32 lanes appending together wait once.
constexpr unsigned kWarpFinds = 64;

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
// g takes queries 64 g .. + 63 against all 128 rows of a stage.
// Tau: the sample's pass. Instead of tests against tau, each thread keeps the kTauKeys smallest
// upper-bound keys of each of its two query rows and writes them to a.tau_keys at the end.
template <int KP, bool Tau>
__global__ void __launch_bounds__(kFusedThreads, 1) wgmma_fused_pass(const __grid_constant__ FusedArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(KP % 64 == 0, "whole 64-term chunks");
  constexpr int words = KP / 8;  // 16-byte words a row
  constexpr int stage_halves = kFusedRows * KP;
  constexpr unsigned stage_bytes = stage_halves * sizeof(__half) + kFusedRows * sizeof(float);  // operands and norms
  constexpr unsigned warps = kFusedThreads / 32;
  extern __shared__ float4 wgmma_fused_smem4[];
  const unsigned base = shared_at(wgmma_fused_smem4);
  __half* const qs = reinterpret_cast<__half*>(reinterpret_cast<char*>(wgmma_fused_smem4) + ((1024 - base % 1024) % 1024));
  __half* const ring = qs + kFusedQueries * KP;
  __shared__ FusedQueryLimits ql;
  // Each stage's squared norms, rounded down (up in the sample's pass, for upper bounds): twice
  // as many places as the ring of operands (the stage loop says why). `landed`: a ring place's
  // barrier (one arrival, the bytes of its stage's copies); `done`: how many warps are done with
  // the stages that took the place, kept counting, so that the warp that brings it to a multiple
  // of `warps` is the last with the stage.
  __shared__ __align__(128) float t_norm[2 * kFusedRing][kFusedRows];
  __shared__ __align__(8) std::uint64_t landed[kFusedRing];
  __shared__ unsigned done[kFusedRing];
  // The candidate pass's finds of each warp not yet appended: (query row of the block, training
  // row less the part's first), and how many (past kWarpFinds, the rest were appended at once).
  __shared__ uint2 finds[Tau ? 1 : warps][kWarpFinds];
  __shared__ unsigned find_count[warps];
  const Bounds& b = a.b;
  const BlockPart part = block_part(a);
  const int first_slot = part.first_slot;
  const std::int64_t stage0 = part.first, stages = part.count;
  if (stages <= 0) {  // the same for the whole block
    if constexpr (Tau) no_sample_keys(a, first_slot);
    return;
  }
  // Stage s: the training rows of stage0 + s, 64 terms a box (zeros past kh and past the rows),
  // into ring place s % kFusedRing and their norms into place s % (2 kFusedRing), counted on the
  // ring place's barrier. One thread asks.
  const auto load_stage = [&](std::int64_t s) {
    const int place = static_cast<int>(s % kFusedRing);
    const int j0 = static_cast<int>((stage0 + s) * kFusedRows);
    mbarrier_expect(&landed[place], stage_bytes);
#pragma unroll
    for (int c = 0; c < KP / 64; ++c) tma_load_2d(ring + place * stage_halves + c * kFusedRows * 64, &a.rows_map, c * 64, j0, &landed[place]);
    tma_load_2d(t_norm[s % (2 * kFusedRing)], &a.norms_map, j0, 0, &landed[place]);
  };
  const CopyRing<kFusedRing> copies{landed, done, stages};
  copies.start(load_stage);
  fused_query_limits<true>(ql, a, first_slot, *a.max_tn);
  __syncthreads();  // ql.scale
  // The queries, each scaled by its power of 2 and rounded to FP16: zeros past kdim and past the
  // slots. Made visible to wgmma by the fence and barrier below.
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
  async_proxy_fence();
  __syncthreads();  // the queries, and the ring's barriers initialised
  // A warp done with stage s's operands (its products of the stage are done): the last of the
  // block's warps to be done refills the place with stage s + kFusedRing. The fences order every
  // warp's reads of the place (and of the norms that stage's copies replace) before the copy
  // engine's writes.
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  // The candidate pass's finds held in shared memory name their training row as an offset from
  // the part's first, in 32 bits (a part of 2^32 rows or more appends each find at once).
  const std::int64_t part_first = stage0 * kFusedRows;
  const bool buffered = !Tau && static_cast<std::uint64_t>(a.stages_per_part) * kFusedRows <= 0xffffffffull;
  if (lane == 0) find_count[warp] = 0;
  __syncwarp();
  // Appends the warp's finds held in shared memory, if at least `least`: each lane one, so that
  // the warp waits for their atomics once. All lanes, converged.
  const auto flush = [&](unsigned least) {
    if constexpr (!Tau) {
      __syncwarp();
      const unsigned held = min(find_count[warp], kWarpFinds);
      if (held >= least) {  // the same for the whole warp
        for (unsigned i = lane; i < held; i += 32) {
          const uint2 f = finds[warp][i];
          fused_append(a.slots, first_slot + static_cast<int>(f.x), part_first + f.y);
        }
        __syncwarp();
        if (lane == 0) find_count[warp] = 0;
        __syncwarp();
      }
    }
  };
  const auto release = [&](std::int64_t s) { copies.release(s, warps, load_stage); };
  const auto wait_stage = [&](std::int64_t s) { copies.wait(s); };
  // Warp (group, quarter): rows 64 group + 16 quarter + gid (+ 8) of the block's queries; its
  // accumulators hold them against every 8 training rows of the stage as an m16n8 piece's:
  // acc[4 j + 2 h + e] is query row ... + 8 h, training row 8 j + 2 tig + e.
  const int group = static_cast<int>(threadIdx.x) / 128, quarter = static_cast<int>(threadIdx.x) / 32 % 4;
  const int gid = lane / 4, tig = lane % 4;
  const int r0 = group * 64 + quarter * 16 + gid;
  const float cheap[2] = {ql.cheap[r0], ql.cheap[r0 + 8]}, inv2[2] = {ql.inv2[r0], ql.inv2[r0 + 8]};
  // The sample's pass: each thread's keys of its two query rows (fused_pass.cuh).
  SampleKeys keys = Tau ? SampleKeys(a, first_slot, r0) : SampleKeys(a, a.slot_count, 0);
  // Shared-memory addresses: the group's rows of the first 64-term chunk, and the ring.
  const auto qa_at = shared_at(qs + group * 64 * 64);
  const auto ring_at = shared_at(ring);
  // The epilogue of one half of a stage (training rows 64 half .. + 63; norms in tn): acc[4 j +
  // 2 h + e] is query row r0 + 8 h against row 8 j + 2 tig + e of the half.
  const auto epilogue = [&](const float (&acc)[32], const float* tn, int half, std::int64_t stage) {
    const std::int64_t j0 = (stage0 + stage) * kFusedRows + 64 * half;
    tn += 64 * half;
    if constexpr (Tau) {
      keys.keep_least<8>(acc, tn, tig, inv2, b.c_up, j0, b.n, ql, r0);
      return;
    }
    // The least of each query row's 16 values x = fl(tn c - 2v), NaN where any is NaN (tn and c
    // rounded down).
    const float c = b.c_dn;
    float least[2];
    least_values<8>(acc, tn, tig, c, inv2, least);
    // The norms are read again (volatile) in the branch below: kept from the loop above, their
    // products with c went to local memory on every stage, for a rarely taken branch.
    const volatile float* const tnv = tn;
    // The cheap test (fused_collect's, docs/exactness.md#fused-cheap-test) of a query row's 16
    // products at once. A row with one that passes is tested again 8 products at a time, and
    // only a group with one that passes product by product, then by the exact bound: a warp in
    // its slow branch has not given back the next stage's place in the ring, which the other
    // warps need refilled a few stages on, so it is kept short.
    if (least[0] > cheap[0] && least[1] > cheap[1]) return;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (least[h] > cheap[h]) continue;
#pragma unroll
      for (int g = 0; g < 2; ++g)
        screen8(
            acc, tnv, tig, inv2[h], b.c_dn, h, g, [&](float x) { return !(x > cheap[h]); },
            [&](int j, int e, float tnj, float v) {
              const int r = r0 + 8 * h;
              const std::int64_t row = j0 + j * 8 + 2 * tig + e;
              if (!fused_exact_pass(a, ql, r, v * (-0.5f * inv2[h]), tnj, row)) return;
              if (buffered) {
                const unsigned at = atomicAdd(&find_count[warp], 1u);
                if (at < kWarpFinds) {
                  finds[warp][at] = make_uint2(static_cast<unsigned>(r), static_cast<unsigned>(row - part_first));
                  return;
                }
              }
              fused_append(a.slots, first_slot + r, row);  // the warp's places are full
            });
    }
  };
  // The products of N training rows of stage s from row `first` on into acc (N / 2 a thread),
  // queued as one wgmma group: 16 terms a step (32 bytes of a 128-byte row), four steps a 64-term
  // chunk; row 64 starts 8 KiB (whole swizzle groups) into each chunk.
  const auto issue = [&](auto& acc, std::int64_t s, int first) {
    constexpr int N = 2 * static_cast<int>(sizeof(acc) / sizeof(float));
    const std::uint32_t tb_at = ring_at + static_cast<int>(s % kFusedRing) * stage_halves * 2 + first * 128;
    wgmma_hold(acc);
    wgmma_begin();
#pragma unroll
    for (int ks = 0; ks < KP / 16; ++ks)
      WgmmaAcc<N>::mma(acc, wgmma_operand_at(qa_at + ((ks / 4) * kFusedQueries * 64 + (ks % 4) * 16) * 2),
                       wgmma_operand_at(tb_at + ((ks / 4) * kFusedRows * 64 + (ks % 4) * 16) * 2), ks > 0);
    wgmma_commit();
  };
  // A warp is done with stage s's operands once its products of the stage are, and gives the
  // place back before it waits for the next stage, so that the copies run up to kFusedRing - 1
  // stages ahead of the block's slowest warp. Its tests may read the stage's norms later: the
  // norms' ring is twice the operands', so stage s's norms are replaced by stage s + 2 kFusedRing's
  // copies, which wait until every warp is done with stage s + kFusedRing's operands, long after
  // it tested stage s.
  if constexpr (!Tau) {
    // The candidate pass multiplies a whole stage as one group (m64n128k16) and tests it after:
    // the queries' operands are read once for 128 training rows, not twice for 64, which spares
    // shared-memory bandwidth that the products and the tests share, while the other warpgroups
    // keep the tensor cores busy (bench/RESULTS.md, "one group a stage").
    float acc[64];
    for (std::int64_t stage = 0; stage < stages; ++stage) {
      wait_stage(stage);
      issue(acc, stage, 0);
      wgmma_wait<0>();
      wgmma_hold(acc);
      release(stage);
      const float* const tn = t_norm[stage % (2 * kFusedRing)];
      epilogue(*reinterpret_cast<const float(*)[32]>(acc), tn, 0, stage);
      __syncwarp();  // the epilogue's branches rejoin before the aligned wgmma instructions
      epilogue(*reinterpret_cast<const float(*)[32]>(acc + 32), tn, 1, stage);
      __syncwarp();
      flush(kWarpFinds / 2);
    }
    flush(1);
  } else {
    // The sample's pass, whose tests are longer, multiplies a stage as two groups of 64 rows, each
    // tested while the other is multiplied: half 0 of stage s while half 1 is, half 1 while half
    // 0 of stage s + 1 is. One group is in flight at a time, and no half's registers are read while
    // a group that writes them is queued: the order in which the compiler can keep both the
    // products and the tests going (any other, and it waits for both groups or runs the products
    // one after another). The last stage is taken apart (`next` false), so that no group is issued
    // under a condition.
    float acc0[32], acc1[32];
    const auto step = [&](std::int64_t stage, auto next) {
      const float* const tn = t_norm[stage % (2 * kFusedRing)];
      wgmma_wait<0>();
      wgmma_hold(acc0);
      issue(acc1, stage, 64);
      epilogue(acc0, tn, 0, stage);
      __syncwarp();
      wgmma_wait<0>();
      wgmma_hold(acc1);
      release(stage);
      if constexpr (decltype(next)::value) {
        wait_stage(stage + 1);
        issue(acc0, stage + 1, 0);
      }
      epilogue(acc1, tn, 1, stage);
      __syncwarp();
    };
    wait_stage(0);
    issue(acc0, 0, 0);
    for (std::int64_t stage = 0; stage + 1 < stages; ++stage) step(stage, std::true_type{});
    step(stages - 1, std::false_type{});
  }
  if constexpr (Tau) keys.write(a, first_slot, r0, tig);
#else
  (void)a;
  __trap();  // launch_fused takes it only where this body was built (wgmma_products_fit)
#endif
}

template <bool Tau>
FusedKernel wgmma_kernel(int kp) {
  return kp <= 64 ? FusedKernel{wgmma_fused_pass<64, Tau>, wgmma_fused_smem<64>()} : FusedKernel{wgmma_fused_pass<128, Tau>, wgmma_fused_smem<128>()};
}

// tau per slot: the k-th smallest of its `per_slot` keys (every block part's), at most +inf's key.
__global__ void tau_from_keys(const unsigned* keys, int per_slot, Slots slots, int slot_count, int k, unsigned* tau) {
  const int slot = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (slot >= slot_count) return;
  unsigned best[kSampleTauK];
#pragma unroll
  for (int m = 0; m < kSampleTauK; ++m) best[m] = kNoKey;
  for (int i = 0; i < per_slot; ++i) {
    const unsigned key = keys[static_cast<std::int64_t>(slot) * per_slot + i];
    if (key < best[kSampleTauK - 1]) insert_key(best, key);
  }
  unsigned kth = kNoKey;
#pragma unroll
  for (int m = 0; m < kSampleTauK; ++m)
    if (m == k - 1) kth = best[m];
  tau[slots.row_of(slot)] = min(kth, ordered_key(INFINITY));
}

}  // namespace

FusedKernel wgmma_fused_kernel(int kp) { return wgmma_kernel<false>(kp); }

void set_wgmma_maps(FusedArgs& a, bool sample) {
  if (a.b.n <= 0) return;  // no stage: the kernel reads neither map
  a.rows_map = half_rows_map(a.th, a.kh, a.b.n, a.th_pitch, kFusedRows);
  a.norms_map = floats_map(sample ? a.b.tn_up : a.b.tn_dn, a.b.n, kFusedRows);
}

void launch_sample_tau(const FusedPlan& p, const Bounds& sample, const Slots& slots, int slot_count, int k, int multiprocessors,
                       DeviceArray<unsigned>& keys, unsigned* tau, cudaStream_t st) {
  if (slot_count == 0) return;
  if (k < 1 || k > kSampleTauK) throw Error("the sample's tau in the product kernel takes k <= " + std::to_string(kSampleTauK));
  // A part's first stages cost more: until each thread holds keys near its queries' own, every
  // tile's least product passes the limit and has its bound computed and kept. Fewer, longer
  // parts then pay:
  // kSamplePartStages counts that start as so many stages more (a wide row's tile takes a stage
  // of 64 terms at a time, so as many such stages).
  const bool wide = p.kdim > kFusedMaxTerms;
  const FusedKernel fk = wgmma_kernel<true>(p.kdim <= 64 ? 64 : 128);
  const FusedParts parts = wide ? wgmma_wide_parts(slot_count, sample.n, multiprocessors, std::max(kSamplePartStages * 64 / p.kh, 1))
                                : fused_parts(fk, slot_count, sample.n, multiprocessors, kSamplePartStages);
  const auto per_slot = static_cast<int>(parts.parts * kTauKeysPerPart);
  keys.resize(static_cast<std::size_t>(slot_count) * per_slot);
  FusedArgs args{p.q, p.t, p.th, p.kdim, p.kh, sample, nullptr, slots, slot_count, parts.stages, p.max_tn,
                 static_cast<std::int64_t>(p.stride) * p.kh, keys.get()};
  if (wide) {
    launch_wgmma_wide_fused(args, p.qh, parts, st);
  } else {
    set_wgmma_maps(args, true);
    fk.kernel<<<dim3(static_cast<unsigned>(parts.blocks), static_cast<unsigned>(parts.parts)), kFusedThreads, fk.smem, st>>>(args);
    KNN_LAUNCHED(wgmma_sample_tau);
  }
  tau_from_keys<<<blocks_for(slot_count, 128), 128, 0, st>>>(keys.get(), per_slot, slots, slot_count, k, tau);
  KNN_LAUNCHED(tau_from_keys);
}

}  // namespace knn::cuda
