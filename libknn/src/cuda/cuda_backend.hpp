#pragma once
// The GPU backend (host-only header: no CUDA types).
#include <cstddef>

#include "knn/search.hpp"

namespace knn::cuda {

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, const BackendOptions& options);
  const char* name() const override { return "cuda"; }
  Neighbors search(const SearchRequest& request) const override;
  std::shared_ptr<const PreparedTrain> prepare(const Matrix& train) const override;

 private:
  int device_;
  BackendOptions options_;
};

/// Runs the search on the given device (cuda_search.cu).
Neighbors gpu_search(const SearchRequest& request, const BackendOptions& options, int device);
/// Uploads training rows and their squared norms (cuda_search.cu).
std::shared_ptr<const PreparedTrain> gpu_prepare(const Matrix& train, int device);

}  // namespace knn::cuda
