// Finds, opens and asks the GPU plugin (libknn_cuda.so) for a backend; a build without CUDA has
// no plugin and says so.
#include <dlfcn.h>


#include "core/backend_factory.hpp"
#include "core/environment.hpp"
#include "knn/stage_times.hpp"

namespace knn::detail {

namespace {

// The folder holding the file this function was loaded from: libknn.so (or the program, where
// libknn is linked in statically).
std::string own_folder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string file = info.dli_fname;
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

struct Plugin {
  knn_cuda_make_backend_fn make = nullptr;
  std::string error;  // why it could not be used, where make is null
};

// Opened once per process and never closed: the backends it makes hold its code.
const Plugin& plugin() {
  static const Plugin p = [] {
    Plugin out;
    const std::string path = cuda_plugin_path();
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      out.error = "the GPU backend could not be loaded (" + std::string(e ? e : path) +
                  "); set KNN_CUDA_PLUGIN to the path of " + kCudaPluginFile;
      return out;
    }
    auto build = reinterpret_cast<knn_cuda_plugin_build_fn>(::dlsym(handle, "knn_cuda_plugin_build"));
    auto make = reinterpret_cast<knn_cuda_make_backend_fn>(::dlsym(handle, "knn_cuda_make_backend"));
    if (build == nullptr || make == nullptr) {
      out.error = "the GPU backend " + path + " is not a libknn plugin";
      return out;
    }
    if (std::string(build()) != KNN_PLUGIN_BUILD) {
      out.error = "the GPU backend " + path + " comes from libknn " + build() + ", this libknn is " + KNN_PLUGIN_BUILD +
                  "; install the two from one build";
      return out;
    }
    out.make = make;
    return out;
  }();
  return p;
}

}  // namespace

std::string cuda_plugin_path() {
  if (std::string named = cuda_plugin_override(); !named.empty()) return named;
  return own_folder() + "/" + kCudaPluginFile;
}

std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions& options, std::string& why_not, NoGpu& kind) {
  if (!KNN_WITH_CUDA) {
    why_not = "this libknn was built without CUDA (configure with -DKNN_ENABLE_CUDA=ON)";
    kind = NoGpu::not_built;
    return nullptr;
  }
  // A machine has a driver when its library loads (the runtime would load it the same way);
  // checked before the plugin, whose CUDA libraries cost far more to load. The handle stays open,
  // as the runtime keeps it.
  static const bool driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
  if (!driver) {
    why_not = "no CUDA driver on this machine (libcuda.so.1 cannot be loaded)";
    kind = NoGpu::no_driver;
    return nullptr;
  }
  stage_done("CUDA driver library loaded");
  const Plugin& p = plugin();
  stage_done("GPU plugin loaded");
  if (p.make == nullptr) {
    why_not = p.error;
    kind = NoGpu::unusable;
    return nullptr;
  }
  std::shared_ptr<const Backend> out;
  int k = static_cast<int>(NoGpu::unusable);
  p.make(&options, &out, &why_not, &k);
  kind = static_cast<NoGpu>(k);
  return out;
}

}  // namespace knn::detail
