#pragma once
// A search's plan, before any work is queued: which product (float32, split TF32 operands, TF32,
// or l1 sums) and its rounding bound, which selection path (small k, fused, large k), the device
// memory budget, the tile of queries, or the parts the training rows are searched in when they
// do not fit beside one query.
#include <cstddef>
#include <cstdint>

#include "core/environment.hpp"
#include "knn/search.hpp"

namespace knn::cuda {

class DeviceTrain;

struct SearchPlan {
  bool tf32 = false;   // TF32 products (tf32_pass, not l1)
  bool split = false;  // float32 products from split operands on TF32 tensor cores
  bool fast = true;    // k <= kFastK: small_k_select, else large_k_select
  bool fused = false;  // fused_collect takes products and candidates in one kernel
  bool fp16 = false;   // FP16 operands (fp16_operands.cuh): the fused pass's, or the written products
  double c = 0.0;      // the product's relative bound (arith/bounds.hpp)
  int kdim = 0;        // the product's inner dimension (3d for split operands)
  int kh = 0;          // an FP16 operand row's pitch in halves
  int stride = 1;      // the fused path's sample: one training row in stride
  bool sample_tau = false;   // the fused path's tau from the sample's pass in the product kernel (sample_tau_fits)
  int tau_rank = 0;          // the fused path's written sample: the rank whose upper bound is tau (guessed_tau_rank)
  bool prune = false;        // the fused path's first round keeps its candidates' bounds and prunes its lists (prune_fits)
  std::int64_t n_s = 0;      // the fused path's sample rows; else the training rows
  // The product a tile writes: s_pitch floats a query (the sample's products on the fused path,
  // none where sample_tau, every training row's otherwise).
  std::int64_t s_pitch = 0;
  std::size_t budget = 0;    // device bytes the search may hold
  std::int64_t tile = 0;     // queries a tile
  std::size_t part_rows = 0; // nonzero: the training rows do not fit; search them this many at a time
};

/// Precision::automatic takes the TF32 pass from this many columns on, the split float32 pass
/// below (bench_knn_gpu --precision-choice, bench/RESULTS.md): with few columns neighbours lie
/// close compared with the rows' norms, and the TF32 pass's wider margin admits more candidates.
constexpr std::size_t kTf32FromColumns = 8;

/// Whether searches of rows with `cols` columns under `precision` take the TF32 pass (l2 and
/// cosine; l1 sums have no products), on a device whose TF32 kernel runs (`tensor_cores`:
/// GpuContext::tensor_cores) or not: without it `automatic` keeps float32 products and their narrower
/// margin, at the same cost. The one rule the plan and the rows kept on the device share.
constexpr bool tf32_pass(Precision precision, std::size_t cols, bool tensor_cores) {
  return precision == Precision::tf32 || (precision == Precision::automatic && tensor_cores && cols >= kTf32FromColumns);
}

/// The plan of `req` on a device whose free memory (with what the context holds) is free_bytes,
/// its training rows `prepared` there already or null; `wgmma`: GpuContext::wgmma. Throws
/// knn::Error when the budget cannot hold one training row and one query.
SearchPlan plan_search(const SearchRequest& req, const BackendOptions& options, bool tensor_cores, bool wgmma,
                       const detail::GpuTuning& tuning, const DeviceTrain* prepared, std::size_t free_bytes);

}  // namespace knn::cuda
