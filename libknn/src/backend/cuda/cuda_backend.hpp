#pragma once
// The GPU backend (host-only header: no CUDA types).
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "core/environment.hpp"
#include "knn/search.hpp"

namespace knn::cuda {

/// Streams, device buffers and (once opened) cuBLAS, kept between searches (gpu_context.cuh).
struct GpuContext;
/// Where a search of device memory writes its lists (staging.cuh).
struct DeviceLists;
std::shared_ptr<GpuContext> make_gpu_context(int device, const detail::GpuTuning& tuning);

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, const BackendOptions& options);
  const char* name() const override { return "cuda"; }
  Neighbors search(const SearchRequest& request) const override;
  /// Min-max and standard scalers of the queries' width: the search scales each chunk of queries
  /// in device memory as it arrives, instead of a pass of their own there and back.
  bool scales_queries(const Scaler& scaler, MatrixView queries) const override;
  std::shared_ptr<const PreparedTrain> prepare(const Matrix& train) const override;
  void vote(const Neighbors& nb, const int* train_class, std::size_t n_classes, const Weights& weights,
            const std::vector<std::size_t>& ks, int* out, double* proba) const override;
  void average(const Neighbors& nb, const double* train_target, const Weights& weights, const std::vector<std::size_t>& ks,
               double* out) const override;
  /// Min-max scaling runs on the GPU (cuda_scale.cu), on the context's stream; other kinds, empty
  /// matrices and a GPU out of memory take the host's default.
  Matrix fit_scaler(Scaler& scaler, MatrixView train) const override;
  /// Where the rows stay on the GPU (gpu_keeps): uploaded once, scaled and kept in device memory.
  Matrix fit_scaler_prepared(Scaler& scaler, MatrixView train, std::shared_ptr<const PreparedTrain>& prepared) const override;
  void scale(const Scaler& scaler, Matrix& m) const override;
  /// Creates the context (streams, the device's attributes) and makes the
  /// warm-up products (warm_products), whose failure it leaves to the first search to report.
  void warm_up() const override;
  /// gpu_search with the queries copied within the device and the lists written where the request
  /// says; its pointers are checked to be memory this device can read (device or managed).
  void search_on_device(const DeviceSearchRequest& request) const override;

 private:
  // Runs f on the context, made by the first call; the calls of one backend take turns on it.
  template <class F>
  auto on_context(F&& f) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!context_) context_ = make_gpu_context(device_, tuning_);
    return f(*context_);
  }
  int device_;
  BackendOptions options_;
  detail::GpuTuning tuning_;  // read from the environment when the backend is made
  mutable std::mutex mutex_;
  mutable std::shared_ptr<GpuContext> context_;
};

/// Runs the search on the given device (gpu_search.cu), on `context` when given (searches
/// that share one must not overlap). With `lists`, request.queries point to device memory and the
/// lists are written to `lists`, not returned (the returned Neighbors hold no lists); the request
/// then has no scaler and no exclusions.
Neighbors gpu_search(const SearchRequest& request, const BackendOptions& options, int device, GpuContext* context = nullptr,
                     const DeviceLists* lists = nullptr);
/// One small product of each kind the search takes (warm_products.cu), so that their kernels are
/// loaded by the backend's warm-up rather than by the first search.
void warm_products(GpuContext& ctx);
/// Votes with more classes than this run on the host: the GPU keeps running sums per class.
constexpr std::size_t kMaxGpuClasses = 64;

/// vote_prefixes and average_prefixes on the GPU (cuda_vote.cu), on the context's stream. They
/// return false, having written nothing that counts, when the host should answer instead: no
/// queries or k, more than kMaxGpuClasses classes, a list too long, the GPU out of memory, or
/// the tuning asks for the host (KNN_GPU_VOTE=0). Otherwise every result is written, and `recheck` lists the queries whose
/// results the GPU's rounding could have changed: the caller recomputes those on the host.
bool gpu_vote(GpuContext& ctx, const BackendOptions& options, const Neighbors& nb, const int* train_class, std::size_t n_classes,
              const Weights& weights, const std::vector<std::size_t>& ks, int* out, double* proba,
              std::vector<std::size_t>& recheck);
bool gpu_average(GpuContext& ctx, const BackendOptions& options, const Neighbors& nb, const double* train_target,
                 const Weights& weights, const std::vector<std::size_t>& ks, double* out, std::vector<std::size_t>& recheck);

}  // namespace knn::cuda
