// The warm-up's products: one small product of each kind the search takes, so that their kernels
// are loaded (the runtime loads a kernel on its first launch) before a search needs them.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/products.cuh"

namespace knn::cuda {

void warm_products(GpuContext& ctx) {
  // Zeros, so that nothing uninitialised is read; 16-byte rows, as most searches' are.
  constexpr int rows = 8, dim = 8;
  DeviceArray<float> a(static_cast<std::size_t>(rows) * dim), c(static_cast<std::size_t>(rows) * rows);
  const cudaStream_t st = ctx.stream->s;
  KNN_CUDA(cudaMemsetAsync(a.get(), 0, a.bytes(), st));
  products(ProductKind::fp32, ProductArgs{a.get(), dim, a.get(), dim, rows, rows, dim, c.get(), rows}, st);
  if (ctx.mma) {
    products(ProductKind::tf32, ProductArgs{a.get(), dim, a.get(), dim, rows, rows, dim, c.get(), rows}, st);
    // The same zeros read as halves (all-zero bits are FP16's zero): no allocation of their own.
    ProductArgs half{nullptr, dim, nullptr, dim, rows, rows, dim, c.get(), rows};
    half.qh = half.th = reinterpret_cast<const __half*>(a.get());
    products(ProductKind::fp16, half, st);
    if (ctx.wgmma) wgmma_products(half, st);  // what long FP16 rows take
  }
  KNN_CUDA(cudaStreamSynchronize(st));
}

}  // namespace knn::cuda
