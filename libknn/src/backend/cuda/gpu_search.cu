// Exact k-nearest-neighbour search on the GPU: the tile loop (docs/architecture.md#the-path-of-one-query).
//
// Per tile of queries: (1) a product (products.cuh: fp32, or TF32 tensor cores) against all training
// rows gives each pair an approximate value, from which an upper and a lower bound of the defined
// distance follow (bounds.cuh); (2) per query, tau: a value with at least k upper bounds at or
// below it; (3) every row whose lower bound is <= tau is a candidate; (4) candidates are ranked by
// the defined distance and sorted by (distance, index). The candidates contain the true k nearest,
// ties included (docs/exactness.md), so the result is the CPU backend's, bit for bit, whatever the
// precision of step (1). k up to kFastK takes small_k_select (or the fused pass, fused_collect),
// larger k large_k_select.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "arith/bounds.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device_queries.cuh"
#include "backend/cuda/fp16_operands.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/scale_rows.cuh"
#include "backend/cuda/l1_sums.cuh"
#include "backend/cuda/large_k_select.cuh"
#include "backend/cuda/operands.cuh"
#include "backend/cuda/product_choice.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/resident_train.cuh"
#include "backend/cuda/search_plan.cuh"
#include "backend/cuda/small_k_select.cuh"
#include "backend/cuda/staging.cuh"
#include "distributed/distributed.hpp"
#include "knn/error.hpp"

namespace knn::cuda {

Neighbors gpu_search(const SearchRequest& req, const BackendOptions& options, int device, GpuContext* shared_ctx,
                     const DeviceLists* lists) {
  const Matrix& train = *req.train;
  const MatrixView queries = req.queries;
  const auto n = static_cast<std::int64_t>(train.rows), nq = static_cast<std::int64_t>(queries.rows);
  const int d = static_cast<int>(train.cols);
  const auto k = static_cast<std::int64_t>(req.k);
  const Metric metric = req.metric;

  Neighbors out;
  out.queries = queries.rows;
  out.k = req.k;
  if (nq == 0) return out;
  // The lists: made by two host threads while the device works on the first tiles when they are
  // large (160 MB for 10^4 queries and k = 1,000), else when first needed.
  const std::size_t items = queries.rows * req.k;
  std::future<void> index_made, distance_made;
  const auto allocate_out = [&] {
    if (lists) return;
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
    own_ctx = make_gpu_context(device, shared_ctx ? shared_ctx->tuning : detail::gpu_tuning());
    shared_ctx = own_ctx.get();
  }
  GpuContext& ctx = *shared_ctx;
  // A budget of the user's own bounds what this search holds, kept buffers included.
  if (options.device_memory_budget) ctx.release();
  cudaStream_t st = ctx.stream->s;
  // Queries in device memory are checked before anything is written (device_queries.cuh).
  if (lists) check_device_request(ctx, device, queries, *lists, st);
  // The training rows: prepared by this backend, or uploaded now.
  const auto* prepared = dynamic_cast<const DeviceTrain*>(req.prepared);
  if (prepared && !prepared->fits(train, device)) prepared = nullptr;
  // The other selection path's buffers go: the plan counts what the context holds as this
  // search's to reuse.
  const auto release = [](auto& buffer) { buffer.release(); };
  if (k <= kFastK) ctx.large.for_each_buffer(release);
  else ctx.small.for_each_buffer(release);
  std::size_t free_bytes = 0, total_bytes = 0;
  KNN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const SearchPlan plan = plan_search(req, options, ctx.tensor_cores(), ctx.wgmma, ctx.tuning, prepared, free_bytes + ctx.bytes());
  if (plan.part_rows) {
    if (lists)
      throw Error("the training rows do not fit in the GPU's memory beside the search's workspace; search from host memory "
                  "(knn::search), which takes them in parts, or raise " + param("device_memory_budget"));
    // The training rows do not fit beside one query: search them in parts, each uploaded in turn,
    // and merge the parts' nearest on the host.
    BackendOptions part_options = options;
    part_options.device_memory_budget = plan.budget;
    return detail::search_in_parts([&](const SearchRequest& r) { return gpu_search(r, part_options, device, &ctx); }, req,
                                   plan.part_rows);
  }
  const bool tf32 = plan.tf32, split = plan.split, fast = plan.fast, fused = plan.fused, fp16 = plan.fp16, sample_tau = plan.sample_tau, prune = plan.prune;
  const double c = plan.c;
  const int kdim = plan.kdim, kh = plan.kh, stride = plan.stride, tau_rank = plan.tau_rank;
  const std::int64_t n_s = plan.n_s, s_pitch = plan.s_pitch, tile = plan.tile;
  const bool need_split = split && !(prepared && prepared->split.get());
  // FP16 operands: every product of the TF32 pass's l2 searches, the fused pass's sample
  // included, takes them (the fused kernel scales its queries itself).
  const bool half_written = fp16 && !fused;
  // TF32 tensor cores for TF32 and split operands; where the TF32 kernel does not run
  // (tf32_products_fit), float32 products, whose bound is within TF32's.
  const ProductKind kind = (tf32 || split) && ctx.mma ? ProductKind::tf32 : ProductKind::fp32;

  // Queries given unscaled (SearchRequest::scaler): each chunk is scaled in device memory as it
  // arrives (scale_rows, Scaler::transform's arithmetic), and the first value that overflows is
  // reported once the search is done. Overflowing values become 0 meanwhile, so the search runs
  // on finite numbers; its results are dropped then.
  const Scaler* scaler = req.scaler && req.scaler->kind() != Scaling::none ? req.scaler : nullptr;
  if (scaler) {
    if (scaler->offset().size() != train.cols || scaler->scale().size() != train.cols)
      throw Error("scaler fitted on " + std::to_string(scaler->offset().size()) + " features, given " + std::to_string(train.cols));
    ctx.tile.scaler_offset.resize(train.cols);
    ctx.tile.scaler_scale.resize(train.cols);
    ctx.tile.scale_bad.resize(1);
    KNN_CUDA(cudaMemcpyAsync(ctx.tile.scaler_offset.get(), scaler->offset().data(), train.cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(ctx.tile.scaler_scale.get(), scaler->scale().data(), train.cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemsetAsync(ctx.tile.scale_bad.get(), 0xff, sizeof(unsigned long long), st));
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
    upload_staged(ctx, own_train.get(), train.values.data(), static_cast<std::size_t>(n) * d, st);
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
  // The bounds of a tile's (or chunk's) products, which start at row `first_row` of ctx.tile.s.
  auto make_bounds = [&](std::int64_t first_row, const double* qn, std::int64_t first_query) {
    Bounds b{ctx.tile.s.get() + first_row * n, n, metric, qn, d_tn, c, req.exclude ? ctx.tile.exclude.get() : nullptr, first_query};
    b.tn_up = norms->up.get();
    b.tn_dn = norms->dn.get();
    b.c_up = c_up;
    b.c_dn = c_dn;
    b.l2_abs = l2_abs;
    b.l2_abs_up = std::nextafter(static_cast<float>(l2_abs), INFINITY);
    b.d = d;
    b.pitch = n;
    if (fp16) {
      b.v_scale = ctx.tile.v_scale.get() + first_row;
      b.q_abs = ctx.tile.q_abs.get() + first_row;
    }
    return b;
  };
  if (req.exclude) {
    ctx.tile.exclude.resize(static_cast<std::size_t>(nq));
    KNN_CUDA(cudaMemcpyAsync(ctx.tile.exclude.get(), req.exclude, static_cast<std::size_t>(nq) * sizeof(std::int64_t),
                             cudaMemcpyHostToDevice, st));
  }
  // The fused path's sample: every stride-th training row, its norms and exclusions gathered.
  auto make_sample_bounds = [&](std::int64_t first_row, const double* qn, std::int64_t first_query) {
    Bounds b = make_bounds(first_row, qn, first_query);
    b.s = ctx.tile.s.get() + first_row * s_pitch;
    b.n = n_s;
    b.pitch = s_pitch;
    b.tn = ctx.fused.sample_tn.get();
    b.tn_up = ctx.fused.sample_up.get();
    b.tn_dn = ctx.fused.sample_dn.get();
    b.exclude = req.exclude ? ctx.fused.sample_exclude.get() : nullptr;
    return b;
  };
  const float* d_max_tn = nullptr;  // the fused path's (FusedPlan) and FP16 operands' (fp16_limits)
  const __half* d_half = nullptr;
  if (fused) {
    ctx.fused.sample_tn.resize(static_cast<std::size_t>(n_s));
    ctx.fused.sample_up.resize(static_cast<std::size_t>(n_s));
    ctx.fused.sample_dn.resize(static_cast<std::size_t>(n_s));
    if (req.exclude) ctx.fused.sample_exclude.resize(static_cast<std::size_t>(nq));
    take_sample(d_tn, norms->up.get(), norms->dn.get(), n_s, stride, ctx.fused.sample_tn.get(), ctx.fused.sample_up.get(),
                ctx.fused.sample_dn.get(), req.exclude ? ctx.tile.exclude.get() : nullptr, nq, ctx.fused.sample_exclude.get(), st);
  }
  if (fused || fp16) {
    // The largest squared norm, rounded up (fused_cheap_limit, fp16_limits), and the FP16
    // operands: kept with the prepared rows, or made now.
    if (prepared && prepared->max_tn.get() && (prepared->half.get() || !fp16)) {
      d_max_tn = prepared->max_tn.get();
      d_half = prepared->half.get();
    } else {
      prepare_fused_rows(d_train, *norms, n, d, fp16, ctx.temp, ctx.fused.max_tn, ctx.fused.half_rows, st);
      d_max_tn = ctx.fused.max_tn.get();
      d_half = ctx.fused.half_rows.get();
    }
    if (!fp16) d_half = nullptr;
  }

  StageTimer timer(ctx.tuning.timing);
  if (!lists && items * (sizeof(std::int64_t) + sizeof(double)) >= (std::size_t{32} << 20)) {
    index_made = std::async(std::launch::async, [&] { fill_fresh(out.index, items, std::int64_t{-1}); });
    distance_made = std::async(std::launch::async, [&] { fill_fresh(out.distance, items, 0.0); });
  }
  TileResults finished;  // the last tile's lists, delivered while the device works on the next
  bool undelivered = false;
  int results = 0;
  for (std::int64_t q0 = 0; q0 < nq; q0 += tile) {
    const std::int64_t qt = std::min(tile, nq - q0);
    ctx.tile.q.resize(static_cast<std::size_t>(qt) * d);
    if (split) ctx.tile.q_split.resize(static_cast<std::size_t>(qt) * 3 * d);
    if (fp16) {
      ctx.tile.q_half.resize(static_cast<std::size_t>(qt) * kh);
      ctx.tile.v_scale.resize(static_cast<std::size_t>(qt));
      ctx.tile.q_abs.resize(static_cast<std::size_t>(qt));
    }
    ctx.tile.qn.resize(static_cast<std::size_t>(qt));
    ctx.tile.s.resize(static_cast<std::size_t>(qt) * static_cast<std::size_t>(s_pitch));
    if (fast) fast_select_reserve(ctx, qt, k, !lists, tau_rank < k, prune);
    // The two-pass path works through the tile in chunks of queries: the selection of one chunk
    // (select_stream) runs beside the upload and product of the next (stream). That pays where
    // the product is long against its output (d >= 256) or the selection is heavy (k > 256); with
    // few features and small k the product writes its values as fast as the selection reads
    // them, and the two only slow each other down. On the fused path long rows give no reason
    // to split: its product stream converts the queries and at most writes its sample's products,
    // and smaller launches only leave more of the device idle at the end of each pass. The
    // tuning's `chunks` sets the count, for measurements; timing runs the stages one after another.
    std::int64_t chunks = fast && !timer.on() && ((d >= 256 && !fused) || k > 256) ? std::clamp<std::int64_t>(qt / 1024, 1, 4) : 1;
    if (ctx.tuning.chunks && fast && !fused && !timer.on())
      chunks = std::clamp<std::int64_t>(ctx.tuning.chunks, 1, std::max<std::int64_t>(qt, 1));
    const std::int64_t chunk = (qt + chunks - 1) / chunks;
    timer.mark(st, "start");
    FusedPlan plan{};  // the chunk's, on the fused path
    Bounds sample{};
    for (std::int64_t c0 = 0; c0 < qt; c0 += chunk) {
      const std::int64_t cq = std::min(chunk, qt - c0);
      float* q_chunk = ctx.tile.q.get() + c0 * d;
      float* s_chunk = ctx.tile.s.get() + c0 * n;
      const float* q_from = queries.row(static_cast<std::size_t>(q0 + c0));
      if (lists) KNN_CUDA(cudaMemcpyAsync(q_chunk, q_from, static_cast<std::size_t>(cq) * d * sizeof(float), cudaMemcpyDefault, st));
      else upload_staged(ctx, q_chunk, q_from, static_cast<std::size_t>(cq) * d, st);
      if (scaler)
        scale_rows(q_chunk, static_cast<std::size_t>(cq), train.cols, ctx.tile.scaler_offset.get(), ctx.tile.scaler_scale.get(),
                   static_cast<std::size_t>(q0 + c0), ctx.tile.scale_bad.get(), st);
      timer.mark(st, "upload");
      squared_norms(q_chunk, cq, d, ctx.tile.qn.get() + c0, st);

      // (1) approximate values, row-major cq x n: Q T^T.
      if (metric == Metric::l1) {
        l1_sums(q_chunk, d_train, cq, n, d, s_chunk, st);
      } else {
        const float* a = d_train;
        const float* b = q_chunk;
        if (split) {
          float* q_parts = ctx.tile.q_split.get() + c0 * 3 * d;
          split_rows(q_chunk, cq, d, true, q_parts, st);
          a = d_split;
          b = q_parts;
        }
        // FP16 operands: the chunk's rows scaled, with their scales and margins (make_bounds).
        __half* q_half = fp16 ? ctx.tile.q_half.get() + c0 * kh : nullptr;
        if (fp16)
          fp16_query_rows(q_chunk, ctx.tile.qn.get() + c0, cq, d, kh, d_max_tn, l2_abs, q_half, ctx.tile.v_scale.get() + c0,
                          ctx.tile.q_abs.get() + c0, st);
        if (half_written) {
          ProductArgs args{nullptr, kh, nullptr, kh, cq, n, kh, s_chunk, n};
          args.qh = q_half;
          args.th = d_half;
          take_products(ctx, ProductKind::fp16, args, st);
        } else if (fused) {
          // Only the sample's products: every stride-th training row, stride * kdim values apart.
          // With plan.sample_tau, none: tau's pass takes them in the product kernel.
          if (!sample_tau) {
            ProductArgs args{b, kdim, a, static_cast<std::int64_t>(stride) * kdim, cq, n_s, kdim, ctx.tile.s.get() + c0 * s_pitch, s_pitch};
            if (fp16) {
              args = ProductArgs{nullptr, kh, nullptr, static_cast<std::int64_t>(stride) * kh, cq, n_s, kh, args.c, s_pitch};
              args.qh = q_half;
              args.th = d_half;
            }
            take_products(ctx, fp16 ? ProductKind::fp16 : kind, args, st);
          }
          sample = make_sample_bounds(c0, ctx.tile.qn.get() + c0, q0 + c0);
          plan = FusedPlan{b, a, d_half, kdim, kh, q_half, &sample, d_max_tn, ctx.wgmma, sample_tau, stride, tau_rank};
        } else {
          take_products(ctx, kind, ProductArgs{b, kdim, a, kdim, cq, n, kdim, s_chunk, n}, st);
        }
      }
      timer.mark(st, "product");
      if (!fast) continue;
      const Bounds chunk_bounds = make_bounds(c0, ctx.tile.qn.get() + c0, q0 + c0);
      KNN_CUDA(cudaEventRecord(ctx.product_done.e, st));
      KNN_CUDA(cudaStreamWaitEvent(ctx.select_stream->s, ctx.product_done.e, 0));
      fast_select_chunk(ctx, Tile{chunk_bounds, q_chunk, d_train, q0 + c0, cq, n, k, d, metric, results, fused ? &plan : nullptr, lists, prune},
                        c0, ctx.select_stream->s, timer);
    }
    const Bounds bounds = make_bounds(0, ctx.tile.qn.get(), q0);
    if (fast) {
      const auto host_start = std::chrono::steady_clock::now();
      if (undelivered && !lists) deliver(ctx, finished, out);
      else allocate_out();
      if (timer.on())
        std::fprintf(stderr, "gpu stages: lists of the tile before, or allocating them, %.3f ms on the host\n",
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count());
      // The second round's fused passes take the whole tile's operands.
      const FusedPlan whole{split ? ctx.tile.q_split.get() : ctx.tile.q.get(), split ? d_split : d_train, d_half, kdim, kh,
                            fp16 ? ctx.tile.q_half.get() : nullptr, nullptr, d_max_tn, ctx.wgmma, false, 1, tau_rank};
      fast_select_finish(ctx, Tile{bounds, ctx.tile.q.get(), d_train, q0, qt, n, k, d, metric, results, fused ? &whole : nullptr, lists},
                         finished, timer.on());
      undelivered = true;
      results ^= 1;
      timer.report(qt, n);
      if (timer.on())
        std::fprintf(stderr, "gpu stages: host part of the selection %.3f ms\n",
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count());
      continue;
    }
    large_k_tile(ctx, bounds, ctx.tile.q.get(), d_train, d, metric, q0, qt, k, out, allocate_out, lists, timer, st);
  }
  if (undelivered && !lists) deliver(ctx, finished, out);
  // The training rows uploaded for this search only are freed on return, so nothing may still
  // read them.
  KNN_CUDA(cudaStreamSynchronize(st));
  KNN_CUDA(cudaStreamSynchronize(ctx.select_stream->s));
  if (scaler) {
    unsigned long long bad = ~0ull;
    KNN_CUDA(cudaMemcpyAsync(&bad, ctx.tile.scale_bad.get(), sizeof bad, cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    if (bad != ~0ull) {
      const auto i = static_cast<std::size_t>(bad / train.cols), j = static_cast<std::size_t>(bad % train.cols);
      throw ScaleOverflow(i, j, queries(i, j), scaler->kind());
    }
  }
  return out;
}

}  // namespace knn::cuda
