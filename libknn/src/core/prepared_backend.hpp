#pragma once
// The backend that prepare_backend() started ahead of its use (knn/search.hpp).
#include <memory>

#include "knn/search.hpp"

namespace knn::detail {

/// make_backend() without looking for a prepared one.
std::shared_ptr<const Backend> make_backend_now(const BackendOptions& options);

/// The prepared backend, once, when it was started with options that select the same backend as
/// `options`; else nullptr. Waits for it where it is not ready, and rethrows what making it threw.
std::shared_ptr<const Backend> take_prepared_backend(const BackendOptions& options);

/// Whether a backend for `options` is being prepared and is not ready yet: a caller with work
/// the host can do may do it first.
bool prepared_backend_starting(const BackendOptions& options);

}  // namespace knn::detail
