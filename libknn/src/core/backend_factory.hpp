#pragma once
// How the optional GPU backend is found: a build without it links a stub that says why.
#include <memory>
#include <string>

#include "knn/search.hpp"

namespace knn::detail {

/// The GPU backend, or nullptr with `why_not` set (not compiled, no usable GPU).
std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions& options, std::string& why_not);

}  // namespace knn::detail
