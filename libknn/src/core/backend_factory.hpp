#pragma once
// How the optional GPU backend is found. It lives in a plugin of its own (libknn_cuda.so) that
// libknn opens only when a search may run on the GPU, so that a CPU run never loads a CUDA
// library (docs/architecture.md#the-gpu-plugin).
#include <memory>
#include <string>

#include "knn/search.hpp"

namespace knn::detail {

/// Why there is no GPU backend: not compiled, no driver on this machine (nothing worth a note
/// when the device is chosen automatically), or a driver or plugin that cannot serve.
enum class NoGpu { not_built, no_driver, unusable };

/// The GPU backend, or nullptr with `why_not` and `kind` set.
std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions& options, std::string& why_not, NoGpu& kind);

/// The plugin's file name, and the file libknn opens: $KNN_CUDA_PLUGIN where set, else the file
/// of that name in the folder that holds libknn itself (the build tree's and the installed
/// layout both put them side by side).
inline constexpr const char* kCudaPluginFile = "libknn_cuda.so";
std::string cuda_plugin_path();

}  // namespace knn::detail

/// What the plugin exports, with C linkage so that dlsym finds it by this name. The plugin and
/// libknn must come from the same build: the loader compares `knn_cuda_plugin_build` with its own.
extern "C" {
using knn_cuda_make_backend_fn = void (*)(const knn::BackendOptions* options, std::shared_ptr<const knn::Backend>* out,
                                          std::string* why_not, int* kind);
using knn_cuda_plugin_build_fn = const char* (*)();
}
