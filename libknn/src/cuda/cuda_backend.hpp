#pragma once
// The GPU backend (host-only header: no CUDA types).
#include <cstddef>
#include <memory>
#include <mutex>

#include "knn/search.hpp"

namespace knn::cuda {

/// A stream, a cuBLAS handle and device buffers kept between searches (cuda_search.cu).
struct GpuContext;
std::shared_ptr<GpuContext> make_gpu_context(int device);

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, const BackendOptions& options);
  const char* name() const override { return "cuda"; }
  Neighbors search(const SearchRequest& request) const override;
  std::shared_ptr<const PreparedTrain> prepare(const Matrix& train) const override;

 private:
  int device_;
  BackendOptions options_;
  // Made by the first search; searches of one backend take turns on it.
  mutable std::mutex mutex_;
  mutable std::shared_ptr<GpuContext> context_;
};

/// Runs the search on the given device (cuda_search.cu), on `context` when given (searches
/// that share one must not overlap).
Neighbors gpu_search(const SearchRequest& request, const BackendOptions& options, int device, GpuContext* context = nullptr);
/// Uploads training rows and their squared norms (cuda_search.cu).
std::shared_ptr<const PreparedTrain> gpu_prepare(const Matrix& train, const BackendOptions& options, int device);

}  // namespace knn::cuda
