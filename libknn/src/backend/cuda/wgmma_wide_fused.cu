// The fused pass for rows wider than kFusedMaxTerms terms on Hopper's warpgroup instructions: FP16
// products of the first round's queries against every training row, each tested against tau in
// registers as wgmma_fused_pass tests them, so that no product is written (Fashion-MNIST's 784
// terms: 2.4 GB of products for 10,000 queries against 60,000 rows otherwise, written and read
// twice).
//
// Neither operand fits in shared memory whole, so both are streamed, 64 terms a stage: a block
// keeps its 256 queries (four warpgroups of 64) through a part of the training rows, 128 rows a
// tile, and every stage of the ring holds one 64-term chunk of both (48 KiB). Hopper's copy engine
// fills the ring (tma_copies.cuh); each warp waits only for the stage it multiplies next, keeps
// two stages' products in flight (the next chunk is issued before the last one is awaited), and
// the last warp done with a stage refills its place, as in wgmma_fused_pass. After a tile's last
// chunk each warp tests its 64 products a thread: the cheap test of all, then the exact one for
// the few that pass (docs/exactness.md#fused-cheap-test; the products are the FP16 operands'
// of docs/exactness.md#fp16-operands).
//
// The candidate pass keeps each candidate's bounds beside it where the lists are pruned before
// they are ranked (Slots::bounds, prune_lists).
//
// The same kernel takes tau's sample first (launch_sample_tau): the products with every
// stride-th training row, of which each thread keeps the smallest upper bounds of its queries in
// registers, as wgmma_fused_pass's sample pass does (docs/exactness.md#sampled-tau).
//
// The queries come in by a tensor map over their FP16 rows, so the kernel takes slots that are the
// tile's queries themselves (the first round); the second round's gathered slots take
// wide_fused_collect.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "backend/cuda/bounds.cuh"
#include "backend/cuda/copy_ring.cuh"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/fused_pass.cuh"
#include "backend/cuda/tensor_maps.cuh"
#include "backend/cuda/tma_copies.cuh"
#include "backend/cuda/wgmma_ops.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

constexpr int kWideRing = 4;  // stages in shared memory
constexpr int kWideTerms = 64;  // terms a stage: one 128-byte swizzled row of halves
// Halves of a stage: the block's queries, then the tile's training rows, 64 terms each.
constexpr int kWideStageHalves = (kFusedQueries + kFusedRows) * kWideTerms;
// Tiles whose norms are held at once: a tile's norms come with its first chunk, into place
// tile % kWideNormTiles, and must stay until every warp has tested the tile. Tile T + 4's first
// chunk is asked for once every warp is done with stage (T + 4) chunks - kWideRing, and a warp is
// done with a stage of tile T + 1 only after testing T: so (kWideNormTiles - 1) chunks >=
// kWideRing must hold, which two chunks a row or more give (launch_wgmma_wide_fused).
constexpr int kWideNormTiles = 4;
static_assert((kWideNormTiles - 1) * 2 >= kWideRing, "two chunks a row keep a tile's norms until it is tested");
// The ring, and room to start it at a multiple of 1,024 bytes: 193 KiB.
constexpr std::size_t kWideSmem = static_cast<std::size_t>(kWideRing) * kWideStageHalves * sizeof(__half) + 1024;

struct WideWgmmaArgs {
  FusedArgs f;  // rows_map: the training rows' FP16 operands, boxes of kFusedRows rows; norms_map: their tn_dn (tn_up for the sample)
  CUtensorMap queries_map;  // the slots' FP16 rows (fp16_query_rows), boxes of kFusedQueries rows
  int chunks;  // 64-term chunks a row: kh / 64 rounded up
};

// Block (x, y): slots x * 256 .. + 255 against the tiles of part y. Warpgroup g takes queries
// 64 g .. + 63 against all 128 rows of a tile.
// Tau: the sample's pass (a.tau_keys set, a.b the sample's bounds, its rows every stride-th of
// th): instead of the tests against tau, each thread keeps the kTauKeys smallest upper-bound keys
// of each of its two query rows, one a tile at most (SampleKeys::keep_least), as wgmma_fused_pass's
// sample pass does, and writes them at the end.
template <bool Tau>
__global__ void __launch_bounds__(kFusedThreads, 1) wgmma_wide_fused_pass(const __grid_constant__ WideWgmmaArgs w) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const FusedArgs& a = w.f;
  constexpr unsigned warps = kFusedThreads / 32;
  constexpr unsigned q_bytes = kFusedQueries * kWideTerms * sizeof(__half), t_bytes = kFusedRows * kWideTerms * sizeof(__half);
  extern __shared__ float4 wide_smem4[];
  const unsigned base = shared_at(wide_smem4);
  __half* const ring = reinterpret_cast<__half*>(reinterpret_cast<char*>(wide_smem4) + ((1024 - base % 1024) % 1024));
  __shared__ FusedQueryLimits ql;
  __shared__ __align__(128) float t_norm[kWideNormTiles][kFusedRows];  // squared norms rounded down
  // `landed`: a ring place's barrier (one arrival, the bytes of its stage's copies); `done`: how
  // many warps are done with the stages that took the place, kept counting, so that the warp that
  // brings it to a multiple of `warps` is the last with the stage.
  __shared__ __align__(8) std::uint64_t landed[kWideRing];
  __shared__ unsigned done[kWideRing];
  const Bounds& b = a.b;
  const BlockPart part = block_part(a);
  const int first_slot = part.first_slot;
  const std::int64_t tile0 = part.first, tiles = part.count;
  if (tiles <= 0) {  // the same for the whole block
    if constexpr (Tau) no_sample_keys(a, first_slot);
    return;
  }
  const int chunks = w.chunks;
  const std::int64_t stages = tiles * chunks;
  // Stage s: chunk s % chunks of tile s / chunks (zeros past kh, past the rows and past the slots)
  // into ring place s % kWideRing, with the tile's norms at its first chunk. One thread asks.
  const auto load_stage = [&](std::int64_t s) {
    const int place = static_cast<int>(s % kWideRing), chunk = static_cast<int>(s % chunks);
    const std::int64_t tile = s / chunks;
    const int j0 = static_cast<int>((tile0 + tile) * kFusedRows);
    __half* const stage = ring + place * kWideStageHalves;
    mbarrier_expect(&landed[place], q_bytes + t_bytes + (chunk == 0 ? kFusedRows * sizeof(float) : 0));
    tma_load_2d(stage, &w.queries_map, chunk * kWideTerms, first_slot, &landed[place]);
    tma_load_2d(stage + kFusedQueries * kWideTerms, &a.rows_map, chunk * kWideTerms, j0, &landed[place]);
    if (chunk == 0) tma_load_2d(t_norm[tile % kWideNormTiles], &a.norms_map, j0, 0, &landed[place]);
  };
  const CopyRing<kWideRing> copies{landed, done, stages};
  copies.start(load_stage);
  fused_query_limits<true>(ql, a, first_slot, *a.max_tn);
  __syncthreads();  // the limits, and the ring's barriers initialised
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // Warp (group, quarter): rows 64 group + 16 quarter + gid (+ 8) of the block's queries; its
  // accumulators hold them against every 8 training rows of the tile as an m16n8 piece's:
  // acc[4 j + 2 h + e] is query row ... + 8 h, training row 8 j + 2 tig + e.
  const int group = static_cast<int>(threadIdx.x) / 128, quarter = static_cast<int>(threadIdx.x) / 32 % 4;
  const int gid = lane / 4, tig = lane % 4;
  const int r0 = group * 64 + quarter * 16 + gid;
  const float cheap[2] = {ql.cheap[r0], ql.cheap[r0 + 8]}, inv2[2] = {ql.inv2[r0], ql.inv2[r0 + 8]};
  const std::uint32_t ring_at = shared_at(ring);
  // Stage s's products into acc, queued as one wgmma group: 16 terms a step (32 bytes of a
  // 128-byte row), four steps; the first chunk of a tile starts the sums afresh.
  float acc[64];
  const auto issue = [&](std::int64_t s, bool first) {
    const std::uint32_t at = ring_at + static_cast<std::uint32_t>(s % kWideRing) * kWideStageHalves * 2;
    const std::uint32_t qa = at + group * 64 * 128, tb = at + kFusedQueries * 128;
    wgmma_hold(acc);
    wgmma_begin();
#pragma unroll
    for (int ks = 0; ks < kWideTerms / 16; ++ks)
      WgmmaAcc<128>::mma(acc, wgmma_operand_at(qa + ks * 32), wgmma_operand_at(tb + ks * 32), first && ks == 0 ? 0 : 1);
    wgmma_commit();
  };
  // The sample's pass: each thread's keys of its two query rows (fused_pass.cuh).
  SampleKeys keys = Tau ? SampleKeys(a, first_slot, r0) : SampleKeys(a, a.slot_count, 0);
  // The tests of a tile's products (norms in tn, training rows from j0 on): the least of each
  // query row's 32 values x = fl(tn c - 2v) (NaN where any is NaN) against the cheap test's limit,
  // then, for a row with one under it, 8 at a time, and product by product the exact test and the
  // append. Most tiles of most warps stop at the first test. The sample's pass keeps the bound of
  // each row's least product instead (SampleKeys::keep_least).
  const auto epilogue = [&](const float* tn, std::int64_t j0) {
    if constexpr (Tau) {
      keys.keep_least<16>(acc, tn, tig, inv2, b.c_up, j0, b.n, ql, r0);
      return;
    }
    const float c = b.c_dn;
    float least[2];
    least_values<16>(acc, tn, tig, c, inv2, least);
    // Whether x passes row h's cheap test (NaN does).
    const auto under = [&](int h, float x) { return !(x > cheap[h]); };
    if (!under(0, least[0]) && !under(1, least[1])) return;
    const volatile float* const tnv = tn;  // read again in the rare branch, not kept in registers
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (!under(h, least[h])) continue;
      const int r = r0 + 8 * h;
#pragma unroll
      for (int g = 0; g < 4; ++g)
        screen8(
            acc, tnv, tig, inv2[h], c, h, g, [&](float x) { return under(h, x); },
            [&](int j, int e, float tnj, float v) {
              const std::int64_t row = j0 + j * 8 + 2 * tig + e;
              fused_exact_test(a, ql, first_slot, r, v * (-0.5f * inv2[h]), tnj, row);
            });
    }
  };
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    const std::int64_t s0 = tile * chunks;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      copies.wait(s0 + chunk);
      issue(s0 + chunk, chunk == 0);
      if (chunk > 0) {  // the chunk before is done once at most this one is pending
        wgmma_wait<1>();
        copies.release(s0 + chunk - 1, warps, load_stage);
      }
    }
    wgmma_wait<0>();
    copies.release(s0 + chunks - 1, warps, load_stage);
    wgmma_hold(acc);
    epilogue(t_norm[tile % kWideNormTiles], (tile0 + tile) * kFusedRows);
    __syncwarp();  // the epilogue's branches rejoin before the aligned wgmma instructions
  }
  if constexpr (Tau) keys.write(a, first_slot, r0, tig);
#else
  (void)w;
  __trap();  // launch_wgmma_wide_fused takes it only where this body was built (wgmma_products_fit)
#endif
}

template <bool Tau>
void launch_wide(const WideWgmmaArgs& w, const FusedParts& parts, cudaStream_t st) {
  const auto kernel = wgmma_wide_fused_pass<Tau>;
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWideSmem)));
  kernel<<<dim3(static_cast<unsigned>(parts.blocks), static_cast<unsigned>(parts.parts)), kFusedThreads, kWideSmem, st>>>(w);
  KNN_LAUNCHED(wgmma_wide_fused_pass);
}

}  // namespace

FusedParts wgmma_wide_parts(int slot_count, std::int64_t n, int multiprocessors, int part_tiles) {
  const auto kernel = wgmma_wide_fused_pass<false>;
  KNN_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWideSmem)));
  int resident = 0;
  KNN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kFusedThreads, kWideSmem));
  return fused_parts_for(resident, slot_count, n, multiprocessors, part_tiles);
}

void launch_wgmma_wide_fused(const FusedArgs& a, const __half* qh, const FusedParts& parts, cudaStream_t st) {
  if (a.slot_count == 0) return;
  const bool tau = a.tau_keys != nullptr;
  if (a.b.n <= 0) {  // no training row: the sample's pass keeps no key
    if (tau)
      KNN_CUDA(cudaMemsetAsync(a.tau_keys, 0xFF, static_cast<std::size_t>(a.slot_count) * parts.parts * kTauKeysPerPart * sizeof(unsigned), st));
    return;
  }
  WideWgmmaArgs w{a, {}, (a.kh + kWideTerms - 1) / kWideTerms};
  if (w.chunks < 2) throw Error("the wide fused pass takes rows of more than " + std::to_string(kWideTerms) + " terms");
  w.f.rows_map = half_rows_map(a.th, a.kh, a.b.n, a.th_pitch, kFusedRows);
  w.f.norms_map = floats_map(tau ? a.b.tn_up : a.b.tn_dn, a.b.n, kFusedRows);
  w.queries_map = half_rows_map(qh, a.kh, a.slot_count, a.kh, kFusedQueries);
  w.f.stages_per_part = parts.stages;
  if (tau) launch_wide<true>(w, parts, st);
  else launch_wide<false>(w, parts, st);
}

}  // namespace knn::cuda
