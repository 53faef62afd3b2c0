#include "backend/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cstdlib>

#include <cuda_runtime_api.h>

#include "core/backend_factory.hpp"
#include "core/environment.hpp"
#include "backend/cuda/resident_train.cuh"
#include "backend/cuda/staging.cuh"
#include "knn/stage_times.hpp"
#include "knn/vote.hpp"

namespace knn {

namespace cuda {

CudaBackend::CudaBackend(int device, const BackendOptions& options)
    : device_(device), options_(options), tuning_(detail::gpu_tuning()) {}

namespace {

// The queries `rows` of nb, as a list of their own.
Neighbors take_queries(const Neighbors& nb, const std::vector<std::size_t>& rows) {
  Neighbors part;
  part.queries = rows.size();
  part.k = nb.k;
  part.index.resize(rows.size() * nb.k);
  part.distance.resize(rows.size() * nb.k);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::copy_n(nb.index_row(rows[r]), nb.k, part.index.begin() + static_cast<std::ptrdiff_t>(r * nb.k));
    std::copy_n(nb.distance_row(rows[r]), nb.k, part.distance.begin() + static_cast<std::ptrdiff_t>(r * nb.k));
  }
  return part;
}

// Results for `rows` (ks x rows.size(), k-major) into out (ks x nq).
template <class T>
void put_back(const std::vector<T>& part, const std::vector<std::size_t>& rows, std::size_t nks, std::size_t nq, T* out) {
  for (std::size_t ki = 0; ki < nks; ++ki)
    for (std::size_t r = 0; r < rows.size(); ++r) out[ki * nq + rows[r]] = part[ki * rows.size() + r];
}

}  // namespace

Neighbors CudaBackend::search(const SearchRequest& request) const {
  return on_context([&](GpuContext& ctx) { return gpu_search(request, options_, device_, &ctx); });
}

void CudaBackend::search_on_device(const DeviceSearchRequest& r) const {
  SearchRequest request;
  request.train = r.train;
  request.prepared = r.prepared;
  request.queries = MatrixView(r.rows, r.train->cols, r.queries);
  request.k = r.k;
  request.metric = r.metric;
  DeviceLists lists;
  lists.index = r.index;
  lists.dist = r.distance;
  on_context([&](GpuContext& ctx) { return gpu_search(request, options_, device_, &ctx, &lists); });
}

bool CudaBackend::scales_queries(const Scaler& scaler, MatrixView queries) const {
  return (scaler.kind() == Scaling::minmax || scaler.kind() == Scaling::standard) && scaler.offset().size() == queries.cols &&
         scaler.scale().size() == queries.cols;
}

void CudaBackend::vote(const Neighbors& nb, const int* train_class, std::size_t n_classes, const Weights& weights,
                       const std::vector<std::size_t>& ks, int* out, double* proba) const {
  check_prefixes(nb, ks, proba != nullptr);
  std::vector<std::size_t> rows;
  if (!on_context([&](GpuContext& ctx) { return gpu_vote(ctx, options_, nb, train_class, n_classes, weights, ks, out, proba, rows); }))
    return vote_prefixes(nb, train_class, n_classes, weights, ks, out, proba);
  if (rows.empty()) return;
  std::vector<int> part(ks.size() * rows.size());
  std::vector<double> shares(proba ? rows.size() * n_classes : 0);
  vote_prefixes(take_queries(nb, rows), train_class, n_classes, weights, ks, part.data(), proba ? shares.data() : nullptr);
  put_back(part, rows, ks.size(), nb.queries, out);
  for (std::size_t r = 0; r < rows.size() && proba; ++r)
    std::copy_n(shares.begin() + static_cast<std::ptrdiff_t>(r * n_classes), n_classes, proba + rows[r] * n_classes);
}

void CudaBackend::average(const Neighbors& nb, const double* train_target, const Weights& weights,
                          const std::vector<std::size_t>& ks, double* out) const {
  check_prefixes(nb, ks);
  std::vector<std::size_t> rows;
  if (!on_context([&](GpuContext& ctx) { return gpu_average(ctx, options_, nb, train_target, weights, ks, out, rows); }))
    return average_prefixes(nb, train_target, weights, ks, out);
  if (rows.empty()) return;
  std::vector<double> part(ks.size() * rows.size());
  average_prefixes(take_queries(nb, rows), train_target, weights, ks, part.data());
  put_back(part, rows, ks.size(), nb.queries, out);
}

void CudaBackend::warm_up() const {
  on_context([](GpuContext& ctx) {
    stage_done("GPU context made");
    try {
      warm_products(ctx);
    } catch (const Error&) {
      // Only a head start: a GPU that cannot make these products fails the first search with
      // the same error, where its caller reports it.
    }
    return 0;
  });
}

std::shared_ptr<const PreparedTrain> CudaBackend::prepare(const Matrix& train) const {
  return on_context([&](GpuContext& ctx) { return gpu_prepare(ctx, train, options_); });
}

namespace {

// The backend on this process's GPU, or nullptr with why_not and kind set (detail::NoGpu).
std::shared_ptr<const Backend> make_backend(const BackendOptions& options, std::string& why_not, detail::NoGpu& kind) {
  kind = detail::NoGpu::unusable;
  // With a driver that cannot serve, cudaGetDeviceCount fails with an error other than "no
  // device": any failure means there is no usable GPU.
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  stage_done("CUDA driver initialised");
  if (err != cudaSuccess) {
    why_not = std::string("no usable GPU (") + cudaGetErrorString(err) + ")";
    cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    why_not = "no usable GPU (no CUDA device found)";
    return nullptr;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  // One GPU per rank: with several ranks on a machine, its local rank picks the GPU.
  if (distributed(options.comm.get()))
    if (const std::optional<int> rank = detail::local_rank()) device = *rank % count;
  return std::make_shared<CudaBackend>(device, options);
}

}  // namespace
}  // namespace cuda
}  // namespace knn

// The plugin's entry points (core/backend_factory.hpp): libknn finds them with dlsym.
extern "C" __attribute__((visibility("default"))) const char* knn_cuda_plugin_build() { return KNN_PLUGIN_BUILD; }

extern "C" __attribute__((visibility("default"))) void knn_cuda_make_backend(const knn::BackendOptions* options,
                                                                            std::shared_ptr<const knn::Backend>* out,
                                                                            std::string* why_not, int* kind) {
  knn::detail::NoGpu k = knn::detail::NoGpu::unusable;
  try {
    *out = knn::cuda::make_backend(*options, *why_not, k);
  } catch (const std::exception& e) {
    *out = nullptr;
    *why_not = std::string("the GPU backend failed to start (") + e.what() + ")";
  }
  *kind = static_cast<int>(k);
}
