#include "backend/cuda/device_queries.cuh"

#include <cmath>
#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

constexpr unsigned long long kNoValue = ~0ull;

// first: the smallest flat index of a value that is not finite. Reading it before the atomic
// skips most of them; a stale read only costs an atomic.
__global__ void first_non_finite(const float* x, long long items, unsigned long long* first) {
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < items;
       p += static_cast<long long>(gridDim.x) * blockDim.x)
    if (!isfinite(x[p]) && static_cast<unsigned long long>(p) < *first) atomicMin(first, static_cast<unsigned long long>(p));
}

// `name`: the request's field, as the API spells it.
void check_pointer(const void* p, int device, const char* name) {
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error::parameter(name, std::string("not memory a GPU can use (") + cudaGetErrorString(e) + ")");
  }
  if (a.type == cudaMemoryTypeManaged || (a.type == cudaMemoryTypeDevice && a.device == device)) return;
  if (a.type == cudaMemoryTypeDevice)
    throw Error::parameter(name, "memory of GPU " + std::to_string(a.device) + ", and the search runs on GPU " + std::to_string(device) +
                                     ": give memory of that GPU, or managed memory");
  throw Error::parameter(name, "host memory: give memory of the GPU (cudaMalloc) or managed memory, or search host memory with "
                               "knn::search");
}

std::string spelled(float v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace

void check_device_request(GpuContext& ctx, int device, MatrixView queries, const DeviceLists& lists, cudaStream_t st) {
  check_pointer(queries.data, device, "queries");
  check_pointer(lists.index, device, "index");
  check_pointer(lists.dist, device, "distance");
  const auto items = static_cast<long long>(queries.size());
  if (items == 0) return;
  ctx.tile.scale_bad.resize(1);
  KNN_CUDA(cudaMemsetAsync(ctx.tile.scale_bad.get(), 0xff, sizeof(unsigned long long), st));
  first_non_finite<<<blocks_for(std::min<long long>(items, 1ll << 24), 256), 256, 0, st>>>(queries.data, items, ctx.tile.scale_bad.get());
  KNN_LAUNCHED(first_non_finite);
  unsigned long long first = kNoValue;
  KNN_CUDA(cudaMemcpyAsync(&first, ctx.tile.scale_bad.get(), sizeof first, cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaStreamSynchronize(st));
  if (first == kNoValue) return;
  float v = 0.0f;
  KNN_CUDA(cudaMemcpy(&v, queries.data + first, sizeof v, cudaMemcpyDefault));
  throw Error::parameter("queries", "row " + std::to_string(first / queries.cols + 1) + ", feature " + std::to_string(first % queries.cols + 1) +
                                        " is " + spelled(v) + "; every query value must be a finite number");
}

}  // namespace knn::cuda
