#pragma once
// Products and candidates in one kernel (fused_collect): l2, small k, up to kFusedMaxTerms
// product terms. A block holds the operand rows of 256 queries in shared memory, streams the
// training rows through, takes each product on tensor cores and tests every pair's lower bound
// against tau at once, so no product leaves the SM. tau comes first, from every stride-th training
// row (fused_stride()): on Hopper the same kernel's pass over them (launch_sample_tau), elsewhere
// their products, written out (take_products). On Hopper, FP16 operands of 33 to 128
// terms take the same pass on warpgroup instructions (wgmma_fused_pass, wgmma_fused.cu), and
// wider FP16 rows a pass that streams the queries too (wgmma_wide_fused_pass, wgmma_wide_fused.cu).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/bounds.cuh"
#include "backend/cuda/candidate_slots.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/fp16_operands.cuh"
#include "backend/cuda/operands.cuh"
#include "backend/cuda/prune_lists.cuh"

namespace knn::cuda {

// The fused pass (fused_collect, below) takes l2 products of at most kFusedMaxTerms terms, and by
// default only against kFusedDefaultRows training rows or more. Wider rows on FP16 operands take
// its other kernels (both operands streamed, as the written products are): on Hopper
// wgmma_wide_fused_pass, by default from kWideFusedDefaultRows training rows (on Fashion-MNIST's
// first 5,000 to 60,000 rows it beat the written products at k = 1 and 5, and lost by 7% at
// k = 16 on 5,000 rows only: bench_knn_gpu --wide-by-rows); elsewhere wide_fused_collect.
constexpr int kFusedMaxTerms = 128;  // product terms (features, or 3 x features for split operands)
constexpr std::int64_t kFusedDefaultRows = 1000000;
constexpr std::int64_t kWideFusedDefaultRows = 5000;

/// What the fused path keeps between searches: its sample of the training rows (every stride-th:
/// squared norms exact and rounded, the queries' excluded rows as rows of the sample), the
/// training rows' largest squared norm and their FP16 operands, and the sample's pass's keys
/// (launch_sample_tau).
struct FusedWorkspace {
  DeviceArray<double> sample_tn;
  DeviceArray<float> sample_up, sample_dn, max_tn;
  DeviceArray<std::int64_t> sample_exclude;
  DeviceArray<__half> half_rows;
  DeviceArray<unsigned> tau_keys;
  template <class F>
  void for_each_buffer(F&& f) {
    f(sample_tn), f(sample_up), f(sample_dn), f(max_tn), f(sample_exclude), f(half_rows), f(tau_keys);
  }
};

// The operands of the fused path for a tile (or chunk), and the sample that gives its tau.
struct FusedPlan {
  const float* q;    // the queries' operand rows
  const float* t;    // the training rows' operand rows
  const __half* th;  // FP16 operands: the training rows scaled (fp16_training_rows), kh halves each; else null
  int kdim, kh;
  // FP16 operands of the queries (fp16_query_rows), kh halves each: read by the kernel for rows
  // wider than kFusedMaxTerms terms, which does not scale the queries itself; else null.
  const __half* qh;
  // The product with every stride-th training row (its rows, norms, exclusions): the first
  // round's; null in the second, which reuses the first round's tau.
  const Bounds* sample;
  const float* max_tn;  // the largest squared norm of the training rows, rounded up
  // FP16 operands of more than 32 terms take Hopper's warpgroup instructions (wgmma_fused.cu,
  // and for the first round of wider rows wgmma_wide_fused.cu): GpuContext::wgmma.
  bool wgmma = false;
  // Set: tau comes from the sample's pass inside the product kernel (launch_sample_tau), whose
  // sample is every `stride`-th row of th; else from the sample's products, written out.
  bool sample_tau = false;
  int stride = 1;
  // The rank in the sample whose upper bound is tau (guessed_tau_rank): k, or below k where tau
  // is a guess that the ranking checks (docs/exactness.md#guessed-tau); 0 is k.
  int tau_rank = 0;
};

/// k up to this takes tau from the sample's pass in the product kernel (launch_sample_tau).
constexpr int kSampleTauK = 16;

/// Whether the fused path's tau comes from the sample's pass inside the product kernel: on
/// Hopper's warpgroup kernels (`wgmma`: GpuContext::wgmma), FP16 operands of more than 32 terms
/// and k <= kSampleTauK. The one rule the plan and the search share.
constexpr bool sample_tau_fits(bool wgmma, bool fp16, int kdim, std::int64_t k) {
  return wgmma && fp16 && kdim > 32 && k <= kSampleTauK;
}

/// tau for `slot_count` slots from the sample `sample` (its norms, exclusions and n_s rows: every
/// p.stride-th row of p.th), queued on st: the wgmma kernel keeps each query's smallest upper
/// bounds per block part in `keys` (resized), and tau is the k-th smallest of them.
void launch_sample_tau(const FusedPlan& p, const Bounds& sample, const Slots& slots, int slot_count, int k, int multiprocessors,
                       DeviceArray<unsigned>& keys, unsigned* tau, cudaStream_t st);

/// What the fused pass reads of the training rows besides them: their largest squared norm
/// (rounded up) into max_tn, and with `half` their FP16 operands (fp16_training_rows) into rows_h; queued on
/// st, with `temp` for the reduction.
void prepare_fused_rows(const float* rows, const TrainNorms& norms, std::int64_t n, int d, bool half, DeviceArray<unsigned char>& temp,
                        DeviceArray<float>& max_tn, DeviceArray<__half>& rows_h, cudaStream_t st);

/// Whether launch_fused takes wgmma_wide_fused_pass for these slots: rows wider than
/// kFusedMaxTerms on Hopper's warpgroup instructions (FusedPlan::wgmma), in the first round, whose
/// slots are the tile's queries. Only that pass keeps its candidates' bounds (Slots::bounds).
inline bool wide_wgmma_takes(const FusedPlan& p, const Slots& slots) { return p.kdim > kFusedMaxTerms && p.wgmma && !slots.row; }

/// Whether the fused path's first round keeps its candidates' bounds and prunes its lists before
/// they are ranked (prune_lists): where wgmma_wide_fused_pass takes it (`wgmma`:
/// GpuContext::wgmma; rows of more than kFusedMaxTerms terms), for k up to kPruneMaxK. The one
/// rule the plan and the search share.
constexpr bool prune_fits(bool fused, bool wgmma, int kdim, std::int64_t k) {
  return fused && wgmma && kdim > kFusedMaxTerms && k <= kPruneMaxK;
}

/// fused_collect over `slot_count` slots, queued on st: the training rows split into as many parts
/// as keep the device's blocks busy to the last wave.
void launch_fused(const FusedPlan& p, const Bounds& b, const unsigned* tau, const Slots& slots, int slot_count,
                  int multiprocessors, cudaStream_t st);

/// k from kGuessedTauK to kGuessedTauMaxK takes, on the fused path with a written sample, a tau
/// guessed from the sample and checked after the ranking (guessed_tau_rank). Above, the rows
/// under the guess and those within the margin beside them pass the kRankCapacity places of the
/// first round's lists: at k = 2,048 and 10^6 x 128 nearly every query overflowed into a
/// second round under the loose valid tau (430 ms against the written products' 64.6 on an
/// H200, bench_knn_gpu --fused-by-k).
constexpr std::int64_t kGuessedTauK = kSampleTauK + 1, kGuessedTauMaxK = 1024;
/// The sample of a guessed tau: one training row in this many (fused_stride).
constexpr int kGuessedStride = 8;

/// Whether tau for k is a guess (with a sample sparser than every row).
constexpr bool guessed_tau_fits(std::int64_t k) { return k >= kGuessedTauK && k <= kGuessedTauMaxK; }

/// The rank in a sample of every stride-th row whose upper bound serves as tau for k: k itself
/// (a valid tau, docs/exactness.md#sampled-tau), or, where guessed_tau_fits(k), the rank expected to
/// hold k rows of all below it plus four standard deviations of that count, so that about
/// k + 4 sqrt(k stride) rows are candidates instead of stride x k. Such a tau is a guess: the
/// ranking checks it, and a query it fails is collected again with a valid one
/// (docs/exactness.md#guessed-tau).
int guessed_tau_rank(std::int64_t k, int stride);

/// tau's sample: one training row in this many (docs/exactness.md#sampled-tau); `asked`, where
/// not 0, the tuning's (KNN_GPU_FUSED_STRIDE); `in_kernel`: tau from launch_sample_tau; `wide`:
/// rows of more than kFusedMaxTerms product terms.
int fused_stride(std::int64_t k, std::int64_t n, int asked = 0, bool in_kernel = false, bool wide = false);

/// The sample's squared norms (every stride-th row's), and each query's excluded row as a row of
/// the sample (-1 when it is not in it), so that the sample's bounds mask it as the full ones do.
void take_sample(const double* tn, const float* up, const float* dn, std::int64_t n_s, int stride, double* s_tn, float* s_up,
                 float* s_dn, const std::int64_t* exclude, std::int64_t nq, std::int64_t* s_exclude, cudaStream_t st);

}  // namespace knn::cuda
