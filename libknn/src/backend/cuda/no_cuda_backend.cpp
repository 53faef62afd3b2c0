// Linked when libknn is built without the GPU backend.
#include "core/backend_factory.hpp"

namespace knn::detail {

std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions&, std::string& why_not, NoGpu& kind) {
  why_not = "this libknn was built without CUDA (configure with -DKNN_ENABLE_CUDA=ON)";
  kind = NoGpu::not_built;
  return nullptr;
}

}  // namespace knn::detail
