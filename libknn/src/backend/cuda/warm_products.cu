// The warm-up's products: a process's first cuBLAS product pays cuBLAS's own set-up, about a tenth
// of a second on an H100 and far more than a search's product, which the warm-up takes on its own
// thread.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/gpu_context.cuh"

namespace knn::cuda {

void warm_products(GpuContext& ctx) {
  // The search's call (transposed training rows times queries) in both of its compute types, at
  // a size where cuBLAS picks tensor-core kernels; zeros, so that nothing uninitialised is read.
  constexpr int rows = 1024, queries = 256, dim = 256;
  DeviceArray<float> a(static_cast<std::size_t>(rows) * dim), b(static_cast<std::size_t>(queries) * dim),
      c(static_cast<std::size_t>(rows) * queries);
  const cudaStream_t st = ctx.stream->s;
  KNN_CUDA(cudaMemsetAsync(a.get(), 0, a.bytes(), st));
  KNN_CUDA(cudaMemsetAsync(b.get(), 0, b.bytes(), st));
  const float one = 1.0f, zero = 0.0f;
  for (const bool tf32 : {false, true}) {
    check_blas(cublasSetMathMode(ctx.blas->h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check_blas(cublasGemmEx(ctx.blas->h, CUBLAS_OP_T, CUBLAS_OP_N, rows, queries, dim, &one, a.get(), CUDA_R_32F, dim, b.get(),
                            CUDA_R_32F, dim, &zero, c.get(), CUDA_R_32F, rows,
                            tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
  }
  KNN_CUDA(cudaStreamSynchronize(st));
}

}  // namespace knn::cuda
