// Class votes and weighted means on the GPU, for one k or for every k of the k-sweep, with the
// answers of vote_prefixes / average_prefixes (core/vote.cpp).
//
// Per batch of queries: the host gathers each neighbour's class id (or target) through the index
// and uploads it with the distances; a kernel gives each neighbour its weight and spreads it into
// arrays of running sums (classification: the weight, per class the weights of its neighbours and
// their count; regression: w, w*y, |w*y|, y, |y|), which knn::prim's segmented inclusive scan turns
// into prefix sums along each query's list (segment = one array of one query); a kernel per
// (query, k) then reads the sums at k and decides.
//
// Exactness: the weights are the host's (arith/weights.hpp); the sums add in another order, so a
// query whose decision or mean that order could change is recomputed on the host. The bound B
// and the tests are derived in docs/exactness.md#votes.
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <knn/prim/device/device_segmented_scan.cuh>

#include "arith/weights.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/gpu_context.cuh"
#include "knn/vote.hpp"

namespace knn::cuda {

namespace {

// Device working set of one batch of queries; a batch holds at least one query, and a list too
// long for that goes to the host.
constexpr std::size_t kVoteWorkingSet = std::size_t{256} << 20;
// The error bounds (docs/exactness.md#votes) assume n u far below 1.
constexpr std::size_t kMaxList = 1000000;
constexpr double kUnit = 0x1p-53;
constexpr int kVoteThreads = 256;

// Per query, set by the kernels: recompute on the host; a gaussian weight at exp()'s underflow
// edge (below the smallest normal double, with an argument above -760, under which both sides'
// exp() give 0).
constexpr unsigned kHost = 1u, kUnderflowEdge = 2u;

// Segment s of the scanned arrays starts at s * stride: one array of one query.
struct StridedOffsets {
  long long stride;
  __host__ __device__ long long operator[](long long s) const { return s * stride; }
};

using arith::WeightRule;

// arith::weight, with the prefix-local rule of vote.cpp's PrefixWeights for Kind::distance: when
// the query's first distance is 0, 1 for distances of 0 and 0 for the rest. A gaussian weight at
// exp()'s underflow edge sets kUnderflowEdge.
__device__ double weight_of(const WeightRule& r, double d, bool zero_rule, unsigned& flags) {
  if (zero_rule) return d == 0.0 ? 1.0 : 0.0;
  const double w = arith::weight(r, d);
  if (r.kind == Weights::Kind::gaussian && w < 2.2250738585072014e-308 && -(d * d) / (2.0 * r.param * r.param) >= -760.0)
    flags |= kUnderflowEdge;
  return w;
}

__device__ double neighbour_weight(const WeightRule& r, const double* dist, long long p, long long kmax, unsigned* flags) {
  const long long q = p / kmax;
  unsigned f = 0;
  const double w = weight_of(r, dist[p], r.kind == Weights::Kind::distance && dist[q * kmax] == 0.0, f);
  if (!(w >= 0.0)) f |= kHost;  // negative or NaN: the vote's bound does not hold
  if (f) atomicOr(flags + q, f);
  return w;
}

// Items p = q * kmax + i of the batch. Arrays of `items`: w (not for uniform weights, which are
// the counts), then per class c the weight of neighbours of class c (else 0); counts per class.
__global__ void spread_votes(const double* dist, const int* cls, long long items, long long kmax, int classes,
                             WeightRule rule, double* sums, int* counts, unsigned* flags) {
  const bool weighted = rule.kind != Weights::Kind::uniform;
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < items;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int c = cls[p];
    if (weighted) {
      const double w = neighbour_weight(rule, dist, p, kmax, flags);
      sums[p] = w;
      for (int j = 0; j < classes; ++j) sums[(j + 1) * items + p] = j == c ? w : 0.0;
    }
    for (int j = 0; j < classes; ++j) counts[j * items + p] = j == c ? 1 : 0;
  }
}

// Arrays of `items`: w, w*y, |w*y|, y, |y|.
__global__ void spread_means(const double* dist, const double* y, long long items, long long kmax, WeightRule rule,
                             double* sums, unsigned* flags) {
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < items;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    const double w = neighbour_weight(rule, dist, p, kmax, flags);
    const double wy = w * y[p];
    sums[p] = w;
    sums[items + p] = wy;
    sums[2 * items + p] = fabs(wy);
    sums[3 * items + p] = y[p];
    sums[4 * items + p] = fabs(y[p]);
  }
}

__device__ bool usable(double sum) { return sum > 0.0 && isfinite(sum); }

// One thread per (query q, k = ks[ki]) of the batch: the class of largest vote (ties to the
// smaller class), or of largest count where the weight sum is not usable, as vote_prefixes.
// out: nks x nb; proba (single k): nb x classes.
__global__ void decide_votes(const double* dist, const double* sums, const int* counts, long long items, long long kmax,
                             int classes, WeightRule rule, const int* ks, int nks, long long nb, int* out, double* proba,
                             unsigned* flags) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= nb * nks) return;
  const long long q = t / nks;
  const int ki = static_cast<int>(t % nks);
  const long long k = ks[ki], p = q * kmax + k - 1;
  const bool weighted = rule.kind != Weights::Kind::uniform;
  // Integer weights: every order of adding gives the same sums.
  const bool exact = !weighted || (rule.kind == Weights::Kind::distance && dist[q * kmax] == 0.0);
  const double sum = weighted ? sums[p] : static_cast<double>(k);
  const bool by_weight = usable(sum);
  const double total = by_weight ? sum : static_cast<double>(k);
  double best_v = 0.0, second = -INFINITY;
  int best = 0;
  for (int c = 0; c < classes; ++c) {
    const double v = by_weight && weighted ? sums[(c + 1) * items + p] : static_cast<double>(counts[c * items + p]);
    if (c == 0) {
      best_v = v;
    } else if (v > best_v) {  // strict: a tie keeps the smaller class
      second = best_v;
      best_v = v;
      best = c;
    } else if (v > second) {
      second = v;
    }
    if (proba) proba[q * classes + c] = v / total;
  }
  out[static_cast<long long>(ki) * nb + q] = best;
  const unsigned f = flags[q];
  bool host = false;
  if (!by_weight) {
    // sum is 0 (all weights 0, and the counts decide, exactly), or not finite.
    host = sum != 0.0 || (f & kUnderflowEdge);
  } else if (!exact) {
    const double bound = 2.0 * (2.0 * static_cast<double>(k) + 4.0) * kUnit * sum;
    host = !(sum <= 1e300) || sum < 1e-290 || best_v - second <= 2.0 * bound || (proba && (f & kUnderflowEdge));
  }
  if (host) atomicOr(flags + q, kHost);
}

// One thread per (query, k) of the batch: the weighted mean, or the mean where the weight sum is
// not usable, as average_prefixes. out: nks x nb.
__global__ void decide_means(const double* sums, long long items, long long kmax, WeightRule rule, const int* ks, int nks,
                             long long nb, double* out, unsigned* flags) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= nb * nks) return;
  const long long q = t / nks;
  const int ki = static_cast<int>(t % nks);
  const long long k = ks[ki], p = q * kmax + k - 1;
  const double w = sums[p], wy = sums[items + p], wy_abs = sums[2 * items + p], y = sums[3 * items + p],
               y_abs = sums[4 * items + p];
  const double rounding = 2.0 * (2.0 * static_cast<double>(k) + 4.0) * kUnit;
  const unsigned f = flags[q];
  bool host = !(y_abs <= 1e300);
  double value;
  // + 0.0: a sum that starts with -0.0 is +0.0 on the host.
  if (usable(w)) {
    value = (wy + 0.0) / w;
    // Subnormal gaussian weights and their products: an absolute difference per neighbour.
    const double subnormal =
        rule.kind == Weights::Kind::gaussian ? 2.0 * (y_abs * 0x1p-1073 + static_cast<double>(k) * 0x1p-1074) : 0.0;
    host = host || !(w <= 1e300) || w < 1e-290 || !(wy_abs <= 1e300) || rounding * wy_abs + subnormal > 1e-10 * fabs(wy);
  } else {
    value = (y + 0.0) / static_cast<double>(k);
    host = host || w != 0.0 || (f & kUnderflowEdge) || rounding * y_abs > 1e-10 * fabs(y);
  }
  out[static_cast<long long>(ki) * nb + q] = value;
  if (host) atomicOr(flags + q, kHost);
}



// Queries per batch, each taking `per_query` bytes of the working set; 0 when one does not fit.
std::size_t batch_queries(std::size_t nq, std::size_t per_query, const BackendOptions& options) {
  std::size_t set = kVoteWorkingSet;
  if (options.device_memory_budget) set = std::min(set, options.device_memory_budget);
  return std::min(nq, set / per_query);
}

// Temp bytes of the segmented scan over `arrays` arrays of nb x kmax.
template <class T>
std::size_t scan_temp(std::size_t arrays, std::size_t nb, std::size_t kmax) {
  std::size_t bytes = 0;
  const auto n = static_cast<std::int64_t>(arrays * nb * kmax);
  check_prim(knn::prim::inclusive_segmented_scan_by_offsets(nullptr, bytes, static_cast<T*>(nullptr), static_cast<T*>(nullptr), n,
                                                            StridedOffsets{static_cast<long long>(kmax)},
                                                            static_cast<std::int64_t>(arrays * nb), knn::prim::Sum{}));
  return bytes;
}

template <class T>
void scan_prefixes(DeviceArray<unsigned char>& temp, T* data, std::size_t arrays, std::size_t nb, std::size_t kmax,
                   cudaStream_t st) {
  std::size_t bytes = temp.bytes();
  check_prim(knn::prim::inclusive_segmented_scan_by_offsets(temp.get(), bytes, data, data, static_cast<std::int64_t>(arrays * nb * kmax),
                                                            StridedOffsets{static_cast<long long>(kmax)},
                                                            static_cast<std::int64_t>(arrays * nb), knn::prim::Sum{}, st));
}

// What both votes and means share: the batch's distances, ks, flags, and the first kmax of each
// query's neighbours gathered on the host.
struct Batch {
  std::size_t nq, kmax, nks, size;
  DeviceArray<double> dist;
  DeviceArray<int> ks;
  DeviceArray<unsigned> flags;
  std::vector<double> host_dist;
  std::vector<unsigned> host_flags;

  Batch(const Neighbors& nb, const std::vector<std::size_t>& k_list, std::size_t batch)
      : nq(nb.queries), kmax(k_list.back()), nks(k_list.size()), size(batch) {
    dist.resize(size * kmax);
    ks.resize(nks);
    flags.resize(size);
    host_dist.resize(size * kmax);
    host_flags.resize(size);
    const std::vector<int> k32(k_list.begin(), k_list.end());
    KNN_CUDA(cudaMemcpy(ks.get(), k32.data(), nks * sizeof(int), cudaMemcpyHostToDevice));
  }
  // Gathers queries [q0, q0 + m) with `gather(q, i, at)` for neighbour i of query q, stored at
  // position `at` of the batch, and uploads the distances.
  template <class Gather>
  void load(const Neighbors& nb, std::size_t q0, std::size_t m, Gather&& gather, cudaStream_t st) {
    for (std::size_t q = 0; q < m; ++q) {
      const double* d = nb.distance_row(q0 + q);
      std::copy_n(d, kmax, host_dist.begin() + static_cast<std::ptrdiff_t>(q * kmax));
      for (std::size_t i = 0; i < kmax; ++i) gather(q0 + q, i, q * kmax + i);
    }
    KNN_CUDA(cudaMemcpyAsync(dist.get(), host_dist.data(), m * kmax * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemsetAsync(flags.get(), 0, m * sizeof(unsigned), st));
  }
  // After the batch's results: the queries flagged for the host, as rows of nb.
  void collect_flags(std::size_t q0, std::size_t m, std::vector<std::size_t>& recheck, cudaStream_t st) {
    KNN_CUDA(cudaMemcpyAsync(host_flags.data(), flags.get(), m * sizeof(unsigned), cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    for (std::size_t q = 0; q < m; ++q)
      if (host_flags[q] & kHost) recheck.push_back(q0 + q);
  }
};

// nb x nks results of a batch (k-major) into out (ks.size() x queries).
template <class T>
void place(const std::vector<T>& from, std::size_t q0, std::size_t m, std::size_t nks, std::size_t nq, T* out) {
  for (std::size_t ki = 0; ki < nks; ++ki) std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(ki * m), m, out + ki * nq + q0);
}

// The frame of votes and means: the host's code when asked for (KNN_GPU_VOTE=0), for a list too
// long, or where one query's per_item * kmax + per_query bytes do not fit the working set;
// otherwise `work` on batches of `b.size` queries, on the context's stream. `work` makes all its
// buffers before it queues anything, so that running out of memory leaves nothing half-done and
// the host's code answers instead.
template <class Work>
bool in_batches(GpuContext& ctx, const BackendOptions& options, const Neighbors& nb, const std::vector<std::size_t>& ks,
                std::size_t per_item, std::size_t per_query, std::vector<std::size_t>& recheck, Work&& work) {
  if (!ctx.tuning.vote || nb.queries == 0 || ks.empty() || ks.back() > kMaxList) return false;
  const std::size_t size = batch_queries(nb.queries, ks.back() * per_item + per_query, options);
  if (size == 0) return false;
  try {
    KNN_CUDA(cudaSetDevice(ctx.device));
    Batch b(nb, ks, size);
    work(b, ctx.stream->s);
  } catch (const GpuOutOfMemory&) {
    recheck.clear();
    return false;
  }
  return true;
}

}  // namespace

bool gpu_vote(GpuContext& ctx, const BackendOptions& options, const Neighbors& nb, const int* train_class, std::size_t n_classes,
              const Weights& weights, const std::vector<std::size_t>& ks, int* out, double* proba,
              std::vector<std::size_t>& recheck) {
  if (n_classes == 0 || n_classes > kMaxGpuClasses) return false;
  const std::size_t classes = n_classes, nks = ks.size();
  const bool weighted = weights.kind != Weights::Kind::uniform;
  const WeightRule rule{weights.kind, weights.param};
  // Per neighbour: distance, class, the arrays of sums and counts, the scan's head flags (one
  // byte per element of the larger scan) and its tile states; per query its results.
  const std::size_t sum_arrays = weighted ? classes + 1 : 0;
  const std::size_t per_item = sizeof(double) + sizeof(int) + sum_arrays * sizeof(double) + classes * sizeof(int) +
                               std::max(sum_arrays, classes) + 1;
  const std::size_t per_query = nks * sizeof(int) + classes * sizeof(double) + sizeof(unsigned);
  return in_batches(ctx, options, nb, ks, per_item, per_query, recheck, [&](Batch& b, cudaStream_t st) {
    const std::size_t size = b.size, kmax = b.kmax;
    DeviceArray<int> cls(size * kmax), counts(classes * size * kmax), d_out(nks * size);
    DeviceArray<double> sums(sum_arrays * size * kmax), d_proba(proba ? size * classes : 0);
    DeviceArray<unsigned char> temp(std::max(scan_temp<double>(sum_arrays, size, kmax), scan_temp<int>(classes, size, kmax)));
    std::vector<int> host_cls(size * kmax), host_out(nks * size);
    for (std::size_t q0 = 0; q0 < b.nq; q0 += size) {
      const std::size_t m = std::min(size, b.nq - q0), items = m * kmax;
      b.load(nb, q0, m, [&](std::size_t q, std::size_t i, std::size_t at) { host_cls[at] = train_class[nb.index_row(q)[i]]; }, st);
      KNN_CUDA(cudaMemcpyAsync(cls.get(), host_cls.data(), items * sizeof(int), cudaMemcpyHostToDevice, st));
      const auto li = static_cast<long long>(items), lk = static_cast<long long>(kmax);
      spread_votes<<<blocks_for(li, kVoteThreads), kVoteThreads, 0, st>>>(b.dist.get(), cls.get(), li, lk, static_cast<int>(classes), rule,
                                                                 sums.get(), counts.get(), b.flags.get());
      KNN_LAUNCHED(spread_votes);
      if (weighted) scan_prefixes(temp, sums.get(), sum_arrays, m, kmax, st);
      scan_prefixes(temp, counts.get(), classes, m, kmax, st);
      const auto threads = static_cast<long long>(m * nks);
      decide_votes<<<blocks_for(threads, kVoteThreads), kVoteThreads, 0, st>>>(
          b.dist.get(), sums.get(), counts.get(), li, lk, static_cast<int>(classes), rule, b.ks.get(), static_cast<int>(nks),
          static_cast<long long>(m), d_out.get(), proba ? d_proba.get() : nullptr, b.flags.get());
      KNN_LAUNCHED(decide_votes);
      KNN_CUDA(cudaMemcpyAsync(host_out.data(), d_out.get(), nks * m * sizeof(int), cudaMemcpyDeviceToHost, st));
      if (proba)
        KNN_CUDA(cudaMemcpyAsync(proba + q0 * classes, d_proba.get(), m * classes * sizeof(double), cudaMemcpyDeviceToHost, st));
      b.collect_flags(q0, m, recheck, st);
      place(host_out, q0, m, nks, b.nq, out);
    }
  });
}

bool gpu_average(GpuContext& ctx, const BackendOptions& options, const Neighbors& nb, const double* train_target,
                 const Weights& weights, const std::vector<std::size_t>& ks, double* out, std::vector<std::size_t>& recheck) {
  constexpr std::size_t arrays = 5;
  const std::size_t nks = ks.size();
  const WeightRule rule{weights.kind, weights.param};
  // Per neighbour: distance, target, the arrays of sums, the scan's head flags and tile states.
  const std::size_t per_item = 2 * sizeof(double) + arrays * sizeof(double) + arrays + 1;
  const std::size_t per_query = nks * sizeof(double) + sizeof(unsigned);
  return in_batches(ctx, options, nb, ks, per_item, per_query, recheck, [&](Batch& b, cudaStream_t st) {
    const std::size_t size = b.size, kmax = b.kmax;
    DeviceArray<double> y(size * kmax), sums(arrays * size * kmax), d_out(nks * size);
    DeviceArray<unsigned char> temp(scan_temp<double>(arrays, size, kmax));
    std::vector<double> host_y(size * kmax), host_out(nks * size);
    for (std::size_t q0 = 0; q0 < b.nq; q0 += size) {
      const std::size_t m = std::min(size, b.nq - q0), items = m * kmax;
      b.load(nb, q0, m, [&](std::size_t q, std::size_t i, std::size_t at) { host_y[at] = train_target[nb.index_row(q)[i]]; }, st);
      KNN_CUDA(cudaMemcpyAsync(y.get(), host_y.data(), items * sizeof(double), cudaMemcpyHostToDevice, st));
      const auto li = static_cast<long long>(items), lk = static_cast<long long>(kmax);
      spread_means<<<blocks_for(li, kVoteThreads), kVoteThreads, 0, st>>>(b.dist.get(), y.get(), li, lk, rule, sums.get(), b.flags.get());
      KNN_LAUNCHED(spread_means);
      scan_prefixes(temp, sums.get(), arrays, m, kmax, st);
      const auto threads = static_cast<long long>(m * nks);
      decide_means<<<blocks_for(threads, kVoteThreads), kVoteThreads, 0, st>>>(sums.get(), li, lk, rule, b.ks.get(), static_cast<int>(nks),
                                                                       static_cast<long long>(m), d_out.get(), b.flags.get());
      KNN_LAUNCHED(decide_means);
      KNN_CUDA(cudaMemcpyAsync(host_out.data(), d_out.get(), nks * m * sizeof(double), cudaMemcpyDeviceToHost, st));
      b.collect_flags(q0, m, recheck, st);
      place(host_out, q0, m, nks, b.nq, out);
    }
  });
}

}  // namespace knn::cuda
