#include "backend/cuda/search_plan.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <limits>
#include <string>

#include "arith/bounds.hpp"
#include "backend/cuda/candidate_slots.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/operands.cuh"
#include "backend/cuda/small_k_select.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

SearchPlan plan_search(const SearchRequest& req, const BackendOptions& options, bool tensor_cores, bool wgmma,
                       const detail::GpuTuning& tuning, const DeviceTrain* prepared, std::size_t free_bytes) {
  const Matrix& train = *req.train;
  const auto n = static_cast<std::int64_t>(train.rows), nq = static_cast<std::int64_t>(req.queries.rows);
  const int d = static_cast<int>(train.cols);
  const auto k = static_cast<std::int64_t>(req.k);
  const Metric metric = req.metric;
  SearchPlan p;
  const bool tf32 = tf32_pass(options.precision, train.cols, tensor_cores) && metric != Metric::l1;
  // float32 products from split operands on tensor cores: float32's accuracy (within a small
  // factor) at a third of TF32's speed.
  const bool split = !tf32 && metric != Metric::l1 && tensor_cores;
  const double c = metric == Metric::l1 ? detail::fp32_l1_bound(train.cols)
                   : tf32      ? detail::tf32_dot_bound(train.cols)
                   : split     ? detail::split_tf32_dot_bound(train.cols)
                               : detail::fp32_dot_bound(train.cols);
  const int kdim = split ? 3 * d : d;  // the product's inner dimension
  const bool fast = k <= kFastK;
  // The fused path (fused_collect): l2 on tensor cores with at most kFusedMaxTerms product terms
  // and k <= kFastK. By default it takes TF32 products, 10^6 training rows or more, and k <= 10,
  // or where Hopper's warpgroup kernel runs (`wgmma`, FP16 operands of 33 to 128 terms: see
  // launch_fused) k <= kGuessedTauMaxK (from k = 17 tau is a guess
  // from a sparse sample, checked by the ranking): the shapes where it beat writing the products
  // (bench_knn_gpu's fused table; below 10^6 rows it did not; `bench_knn_gpu --fused-by-k` on an
  // H200: 8.0 to 28.8 ms against 33 to 57 from k = 16 to 1,024, and 73.7 against 64.7 at
  // k = 2,048). The mma.sync kernel was not measured past k = 10. The tuning's `fused` forces it
  // on or off.
  // Wider rows take it on FP16 operands only: by default where Hopper's warpgroup kernel for
  // them runs with tau from its own sample's pass (k <= kSampleTauK) and kWideFusedDefaultRows
  // training rows or more; elsewhere only when asked (the mma.sync kernel, wide_fused_collect,
  // took 10.8 to 14.1 ms against the written products' 8.0 on Fashion-MNIST on an H100,
  // bench/RESULTS.md).
  const bool wide = kdim > kFusedMaxTerms;
  const bool fused_fits = fast && metric == Metric::l2 && (tf32 || split) && (!wide || (tf32 && tensor_cores && tuning.fp16));
  const bool on_wgmma = wgmma && tuning.fp16 && metric == Metric::l2 && kdim > 32;
  const bool fused_pays = tf32 && (wide ? sample_tau_fits(wgmma, tuning.fp16, kdim, k) && n >= kWideFusedDefaultRows
                                       : (k <= 10 || (on_wgmma && k <= kGuessedTauMaxK)) && n >= kFusedDefaultRows);
  const bool fused = fused_fits && (tuning.fused >= 0 ? tuning.fused == 1 : fused_pays);
  // The TF32 pass's l2 products take FP16 operands (fp16_operands.cuh), fused or written: the
  // same 10 mantissa bits as TF32, at twice the rate and half the bytes. Written ones need the
  // tensor-core kernels. The tuning's `fp16` off keeps TF32 operands, for comparison.
  const bool fp16 = tf32 && metric == Metric::l2 && tuning.fp16 && (fused || tensor_cores);
  const int kh = fp16_pitch(d);
  // On Hopper the fused path's tau comes from the sample's pass in the product kernel, which
  // writes no products: 5.7 of 14.8 ms went to writing the sample's products and reading them
  // again at 10^6 x 128, k = 10 on an H200 (bench/RESULTS.md).
  const bool sample_tau = fused && sample_tau_fits(wgmma, fp16, kdim, k);
  const int stride = fused_stride(k, n, tuning.fused_stride, sample_tau, wide);
  const bool prune = tuning.prune && prune_fits(fused, wgmma, kdim, k);
  // Columns of the product a tile writes. The fused path's sample is every stride-th row, less the
  // last few so that it counts a multiple of 4 (a subset's k-th upper bound is a valid tau all the
  // same): cuBLAS, once a backend opens it, took a kernel about twice as slow for an odd count.
  const std::int64_t n_s_all = fused ? (n + stride - 1) / stride : n;
  const std::int64_t n_s = fused && n_s_all >= 8 ? n_s_all / 4 * 4 : n_s_all;
  // Floats from one query's products to the next: the sample's rounded up to a multiple of 32, so
  // that every row starts 16-byte aligned and tau's pass reads it four floats at a time.
  const std::int64_t s_pitch = sample_tau ? 0 : fused ? (n_s + 31) / 32 * 32 : n;

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
  // FP16 operands add the query's FP16 row, its scale and its margin. Not counted: the keys of
  // the sample's pass in the product kernel, 64 bytes a query and block part (launch_sample_tau;
  // 1.9 MiB for 10,000 queries in 3 parts).
  // The first round's places (first_round_places) hold 8 bytes each (16 where its lists are
  // pruned: the candidates' bounds), and the second round's long lists up to as many places again
  // with their distances and row-ordered copy (16 bytes each); the lists 16 bytes a neighbour.
  const int tau_rank = fused && !sample_tau ? guessed_tau_rank(k, stride) : static_cast<int>(k);
  const auto places = static_cast<std::size_t>(first_round_places(k, tau_rank < k));
  const std::size_t select_bytes = fast ? places * (prune ? 32 : 24) + static_cast<std::size_t>(k) * 16 : static_cast<std::size_t>(k + 64) * 80;
  const std::size_t per_query_fixed = static_cast<std::size_t>(split ? 4 * d : d) * sizeof(float) + select_bytes + 64 +
                                      (fp16 ? static_cast<std::size_t>(kh) * sizeof(__half) + 2 * sizeof(float) : 0);
  const std::size_t per_query = static_cast<std::size_t>(s_pitch) * sizeof(float) + per_query_fixed;
  if (train_bytes + per_query > budget) {
    // The training rows do not fit beside one query: parts that do (half of what is left after a
    // query's fixed needs holds a part, the rest its queries' values).
    p.part_rows = budget > per_query_fixed ? (budget - per_query_fixed) / (2 * (row_bytes + sizeof(float))) : 0;
    if (p.part_rows == 0)
      throw Error("the GPU memory budget of " + std::to_string(budget) + " bytes is too small: one training row and one query need " +
                  std::to_string(row_bytes + sizeof(float) + per_query_fixed) + " (use " + param("device") + " cpu)");
    p.budget = budget;
    return p;
  }
  std::int64_t tile = std::min<std::int64_t>(nq, static_cast<std::int64_t>((budget - train_bytes) / per_query));
  tile = std::min<std::int64_t>(tile, std::numeric_limits<int>::max() / std::max<std::int64_t>(s_pitch, 1));  // cuBLAS's int sizes (ldc x columns), and our kernels' tile count
  p.tf32 = tf32;
  p.split = split;
  p.fast = fast;
  p.fused = fused;
  p.fp16 = fp16;
  p.c = c;
  p.kdim = kdim;
  p.kh = kh;
  p.stride = stride;
  p.sample_tau = sample_tau;
  p.tau_rank = tau_rank;
  p.prune = prune;
  p.n_s = n_s;
  p.s_pitch = s_pitch;
  p.budget = budget;
  p.tile = tile;
  return p;

}

}  // namespace knn::cuda
