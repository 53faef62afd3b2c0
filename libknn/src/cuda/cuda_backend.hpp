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

 private:
  int device_;
  BackendOptions options_;
};

/// Runs the search on the current device (cuda_search.cu).
Neighbors gpu_search(const SearchRequest& request, const BackendOptions& options, int device);

}  // namespace knn::cuda
