#pragma once
// How the optional GPU backend is found: a build without it links a stub that says why.
#include <memory>
#include <string>

#include "knn/search.hpp"

namespace knn::detail {

/// Why there is no GPU backend: not compiled, no driver on this machine (nothing worth a note
/// when the device is chosen automatically), or a driver that has no usable GPU.
enum class NoGpu { not_built, no_driver, unusable };

/// The GPU backend, or nullptr with `why_not` and `kind` set.
std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions& options, std::string& why_not, NoGpu& kind);

}  // namespace knn::detail
