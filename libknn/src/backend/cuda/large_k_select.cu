#include "backend/cuda/large_k_select.cuh"

#include <chrono>
#include <cstdio>

#include <knn/prim/block/block_scan.cuh>
#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/device/device_scan.cuh>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/float_key.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/rank_lists.cuh"
#include "backend/cuda/staging.cuh"
#include "backend/cuda/warp_distances.cuh"

namespace knn::cuda {

namespace {

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
// Rows a thread tests a step: loads in flight, and for write_candidates one block scan per
// kScanThreads x kScanItems rows.
constexpr int kScanItems = 8;
constexpr std::int64_t kScanStep = std::int64_t{kScanThreads} * kScanItems;

// Whether training row j (< the row count) is a candidate of query row r: not masked, and its
// lower bound at or below tau. F32L2: l2's float bound from the float norms (Bounds::Row::l2_bound,
// as the small-k candidate pass takes it), which reads half the bytes of the double form's
// norms; any true lower bound keeps the k nearest and their ties among the candidates.
template <bool F32L2>
__device__ __forceinline__ bool is_candidate(const Bounds::Row& r, std::int64_t j, unsigned tau) {
  if (r.masked(j)) return false;
  float l;
  if constexpr (F32L2) {
    l = r.l2_bound<false>(r.s[j], r.tn_dn[j]);
  } else {
    float u;
    r.at(r.s[j], r.metric == Metric::l1 ? 0.0 : r.tn[j], u, l);
  }
  return ordered_key(l) <= tau;
}

// Each query's count of candidates, a block a query: kScanItems rows a thread a step, a warp's
// loads side by side.
template <bool F32L2>
__global__ void __launch_bounds__(kScanThreads) count_candidates(Bounds b, const unsigned* tau, std::int64_t* count) {
  __shared__ unsigned long long total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  const int row = blockIdx.x;
  const Bounds::Row r = b.row_of(row);
  const unsigned t = tau[row];
  unsigned long long c = 0;
  for (std::int64_t j0 = 0; j0 < b.n; j0 += kScanStep) {
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) {
      const std::int64_t j = j0 + i * kScanThreads + threadIdx.x;
      if (j < b.n) c += is_candidate<F32L2>(r, j, t);
    }
  }
  atomicAdd(&total, c);
  __syncthreads();
  if (threadIdx.x == 0) count[row] = static_cast<std::int64_t>(total);
}

// Each query's candidates from offset[row] on, in the order of their rows (the stable sort after
// them keeps it among equal distances): a thread takes kScanItems consecutive rows a step, and
// one block scan of the threads' counts places them. F32L2 as count_candidates' launch.
template <bool F32L2>
__global__ void __launch_bounds__(kScanThreads) write_candidates(Bounds b, const unsigned* tau, const std::int64_t* offset,
                                                                 std::int64_t* cand_index, int* cand_query) {
  using Scan = knn::prim::BlockScan<int, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  const int row = blockIdx.x;
  const Bounds::Row r = b.row_of(row);
  const unsigned t = tau[row];
  std::int64_t base = offset[row];
  for (std::int64_t j0 = 0; j0 < b.n; j0 += kScanStep) {
    const std::int64_t first = j0 + static_cast<std::int64_t>(threadIdx.x) * kScanItems;
    unsigned flags = 0;
#pragma unroll
    for (int i = 0; i < kScanItems; ++i)
      if (first + i < b.n && is_candidate<F32L2>(r, first + i, t)) flags |= 1u << i;
    int found[1] = {__popc(flags)}, pos[1];
    int total;
    Scan(temp).exclusive_scan(found, pos, 0, knn::prim::Sum{}, total);
    for (std::int64_t at = base + pos[0]; flags; ++at) {
      const int i = __ffs(flags) - 1;
      flags &= flags - 1;
      cand_index[at] = first + i;
      cand_query[at] = row;
    }
    base += total;
    __syncthreads();  // the scan's storage, before the next step's
  }
}

constexpr int kDistanceThreads = 128;

// The defined distance of candidate i, between query row cand_query[i] and training row
// cand_index[i]; a warp takes 32 candidates at once.
template <Metric M, bool Vec>
__global__ void __launch_bounds__(kDistanceThreads) exact_distances(const float* q, const float* t, int d, const std::int64_t* cand_index,
                                                                   const int* cand_query, std::int64_t count, double* dist) {
  __shared__ WarpRowsStage<false> stages[kDistanceThreads / 32];
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // the block's warps stay whole
  const bool has = i < count;
  const double v = warp_defined_distance<M, Vec, false>(has ? q + static_cast<std::int64_t>(cand_query[i]) * d : nullptr,
                                                        has ? t + cand_index[i] * d : nullptr, d, stages[threadIdx.x / 32]);
  if (has) dist[i] = v;
}

}  // namespace

void large_k_tile(GpuContext& ctx, const Bounds& bounds, const float* q, const float* train, int d, Metric metric, std::int64_t q0,
                  std::int64_t qt, std::int64_t k, Neighbors& out, const std::function<void()>& allocate_out,
                  const DeviceLists* lists, StageTimer& timer, cudaStream_t st) {
  const std::int64_t n = bounds.n;
  LargeKWorkspace& w = ctx.large;
  std::vector<std::int64_t> offsets;
  w.tau.resize(static_cast<std::size_t>(qt));
  w.count.resize(static_cast<std::size_t>(qt) + 1);
  w.offset.resize(static_cast<std::size_t>(qt) + 1);
  // tau from each query's k-th upper bound, by knn::prim's batched radix select over the bounds
  // as they are computed (no temporary at all for 1,024 queries or more; 8 KiB a query below).
  w.kth.resize(static_cast<std::size_t>(qt));
  std::size_t kth_bytes = 0;
  check_prim(knn::prim::radix_select_kth(nullptr, kth_bytes, UpperBounds{bounds}, qt, n, k, w.kth.get(), false, st));
  ctx.temp.resize(kth_bytes);
  check_prim(knn::prim::radix_select_kth(ctx.temp.get(), kth_bytes, UpperBounds{bounds}, qt, n, k, w.kth.get(), false, st));
  tau_from_kth<<<blocks_for(qt, 256), 256, 0, st>>>(w.kth.get(), qt, w.tau.get());
  KNN_LAUNCHED(tau_from_kth);
  timer.mark(st, "tau");
  // count_candidates and write_candidates must take the same bounds: the offsets of one place the
  // finds of the other.
  const bool f32l2 = bounds.metric == Metric::l2;
  const auto count = f32l2 ? count_candidates<true> : count_candidates<false>;
  const auto write = f32l2 ? write_candidates<true> : write_candidates<false>;
  count<<<static_cast<unsigned>(qt), kScanThreads, 0, st>>>(bounds, w.tau.get(), w.count.get());
  KNN_LAUNCHED(count_candidates);
  KNN_CUDA(cudaMemsetAsync(w.count.get() + qt, 0, sizeof(std::int64_t), st));
  std::size_t temp_bytes = 0;
  check_prim(knn::prim::exclusive_sum(nullptr, temp_bytes, w.count.get(), w.offset.get(), qt + 1, st));
  ctx.temp.resize(temp_bytes);
  check_prim(knn::prim::exclusive_sum(ctx.temp.get(), temp_bytes, w.count.get(), w.offset.get(), qt + 1, st));
  timer.mark(st, "count");
  offsets.resize(static_cast<std::size_t>(qt) + 1);
  KNN_CUDA(cudaMemcpyAsync(offsets.data(), w.offset.get(), offsets.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaStreamSynchronize(st));
  const std::int64_t total = offsets.back();
  if (timer.on()) std::fprintf(stderr, "gpu stages: %lld candidates for %lld queries\n", static_cast<long long>(total), static_cast<long long>(qt));
  w.cand.resize(static_cast<std::size_t>(total));
  w.cand_query.resize(static_cast<std::size_t>(total));
  w.dist.resize(static_cast<std::size_t>(total));
  write<<<static_cast<unsigned>(qt), kScanThreads, 0, st>>>(bounds, w.tau.get(), w.offset.get(), w.cand.get(), w.cand_query.get());
  KNN_LAUNCHED(write_candidates);
  timer.mark(st, "candidates");
  // (4) exact distances, sorted per query.
  with_rows_kind(metric, d, q, train, [&](auto m, auto vec) {
    exact_distances<decltype(m)::value, decltype(vec)::value><<<blocks_for(total, kDistanceThreads), kDistanceThreads, 0, st>>>(
        q, train, d, w.cand.get(), w.cand_query.get(), total, w.dist.get());
  });
  KNN_LAUNCHED(exact_distances);
  timer.mark(st, "distances");
  // Each query's candidates sorted by (distance, index), the first k taken: into the caller's
  // device lists, or into the workspace on their way to the host.
  double* to_dist = lists ? lists->dist + q0 * k : nullptr;
  std::int64_t* to_index = lists ? lists->index + q0 * k : nullptr;
  if (!lists) {
    w.out_dist.resize(static_cast<std::size_t>(qt * k));
    w.out_index.resize(static_cast<std::size_t>(qt * k));
    to_dist = w.out_dist.get();
    to_index = w.out_index.get();
  }
  rank_lists(ctx.rank, ctx.temp, w.dist.get(), w.cand.get(), total, qt, w.offset.get(), w.offset.get() + 1, nullptr, k, to_dist,
             to_index, st);
  timer.mark(st, "rank");
  if (lists) {
    KNN_CUDA(cudaStreamSynchronize(st));
    timer.report(qt, n);
    return;
  }
  // The host's result arrays are filled (allocate_out) while the device works on the above, then
  // take the lists through the page-locked staging buffers.
  allocate_out();
  const auto host_start = std::chrono::steady_clock::now();
  download_staged(ctx, out.distance.data() + q0 * k, w.out_dist.get(), static_cast<std::size_t>(qt * k) * sizeof(double), st);
  download_staged(ctx, out.index.data() + q0 * k, w.out_index.get(), static_cast<std::size_t>(qt * k) * sizeof(std::int64_t), st);
  if (timer.on())
    std::fprintf(stderr, "gpu stages: lists to the host %.3f ms\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count());
  KNN_CUDA(cudaStreamSynchronize(st));
  timer.report(qt, n);
}

}  // namespace knn::cuda
