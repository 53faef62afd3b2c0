#include "cuda/cuda_backend.hpp"

#include <cstdlib>

#include <cuda_runtime_api.h>

#include "common/backend_registry.hpp"

namespace knn {

namespace cuda {

CudaBackend::CudaBackend(int device, const BackendOptions& options) : device_(device), options_(options) {}

Neighbors CudaBackend::search(const SearchRequest& request) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!context_) context_ = make_gpu_context(device_);
  return gpu_search(request, options_, device_, context_.get());
}

std::shared_ptr<const PreparedTrain> CudaBackend::prepare(const Matrix& train) const { return gpu_prepare(train, options_, device_); }

}  // namespace cuda

namespace detail {

std::shared_ptr<const Backend> make_cuda_backend(const BackendOptions& options, std::string& why_not) {
  // Without a driver cudaGetDeviceCount fails with an error other than "no device": any failure
  // means there is no usable GPU.
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    why_not = std::string("no usable GPU (") + cudaGetErrorString(err) + ")";
    cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    why_not = "no usable GPU (no CUDA device found)";
    return nullptr;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  // One GPU per rank: with several ranks on a machine, its local rank picks the GPU.
  if (distributed(options.comm.get()))
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
      if (const char* v = std::getenv(var)) {
        device = std::atoi(v) % count;
        break;
      }
  return std::make_shared<cuda::CudaBackend>(device, options);
}

}  // namespace detail
}  // namespace knn
