#pragma once
// Checked CUDA and knn::prim calls: each failure becomes a knn::Error naming the call, and
// running out of device memory a GpuOutOfMemory, which a stage with a host path catches.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <knn/prim/status.hpp>

#include "knn/error.hpp"

namespace knn::cuda {

/// Thrown for cudaErrorMemoryAllocation: a stage that has a host path takes it instead.
class GpuOutOfMemory : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void fail(cudaError_t err, const char* what) {
  cudaGetLastError();
  if (err == cudaErrorMemoryAllocation)
    throw GpuOutOfMemory(std::string("GPU out of memory (") + what + "); lower " + param("device_memory_budget") + " or use " + param("device") + " cpu");
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
}

#define KNN_CUDA(call)                         \
  do {                                         \
    const cudaError_t e_ = (call);             \
    if (e_ != cudaSuccess) fail(e_, #call);    \
  } while (0)
#define KNN_LAUNCHED(name) KNN_CUDA(cudaGetLastError())

inline void check_prim(const knn::prim::Status& s) {
  if (!s.ok()) throw Error(std::string("GPU primitive failed: ") + s.message + " at " + s.where);
}

inline unsigned blocks_for(std::int64_t items, int threads) {
  return static_cast<unsigned>(std::min<std::int64_t>((items + threads - 1) / threads, 1 << 30));
}

}  // namespace knn::cuda
