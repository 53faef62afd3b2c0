#include "backend/cuda/blas_products.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <limits>
#include <string>
#include <type_traits>

namespace knn::cuda {

struct BlasProducts::Api {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t) = nullptr;
  // Written out: the C++ header overloads GemmEx.
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType,
                         int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                         cublasGemmAlgo_t) = nullptr;
};

std::unique_ptr<BlasProducts> BlasProducts::open() {
  // The major version the plugin was built against; the loader looks beside the plugin's
  // run path (the CUDA Toolkit's library folder) as well.
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nullptr;
  std::unique_ptr<BlasProducts> b(new BlasProducts());
  b->api_ = std::make_unique<Api>();
  Api& f = *b->api_;
  const auto find = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, symbol));
    return fn != nullptr;
  };
  if (!find(f.create, "cublasCreate_v2") || !find(f.destroy, "cublasDestroy_v2") || !find(f.set_stream, "cublasSetStream_v2") ||
      !find(f.set_math_mode, "cublasSetMathMode") || !find(f.gemm, "cublasGemmEx"))
    return nullptr;
  cublasHandle_t h = nullptr;
  if (f.create(&h) != CUBLAS_STATUS_SUCCESS) return nullptr;
  b->handle_ = h;
  return b;
}

BlasProducts::~BlasProducts() {
  if (handle_) api_->destroy(static_cast<cublasHandle_t>(handle_));
  // The library stays loaded (never dlclose'd): unloading it while the process runs gains nothing.
}

bool BlasProducts::run(ProductKind kind, const ProductArgs& a, cudaStream_t st) {
  constexpr std::int64_t most = std::numeric_limits<int>::max();
  if (a.rows > most || a.cols > most || a.ldq > most || a.ldt > most || a.ldc > most) return false;
  const auto h = static_cast<cublasHandle_t>(handle_);
  const bool tf32 = kind == ProductKind::tf32, half = kind == ProductKind::fp16;
  if (api_->set_stream(h, st) != CUBLAS_STATUS_SUCCESS ||
      api_->set_math_mode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)
    return false;
  // Row-major rows x cols = column-major cols x rows: T^T Q in cuBLAS's terms. FP16 operands are
  // multiplied exactly and summed in float (CUBLAS_COMPUTE_32F), as our kernel does.
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType in = half ? CUDA_R_16F : CUDA_R_32F;
  const void* t = half ? static_cast<const void*>(a.th) : a.t;
  const void* q = half ? static_cast<const void*>(a.qh) : a.q;
  return api_->gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(a.cols), static_cast<int>(a.rows), a.kdim, &one, t, in,
                    static_cast<int>(a.ldt), q, in, static_cast<int>(a.ldq), &zero, a.c, CUDA_R_32F, static_cast<int>(a.ldc),
                    tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

}  // namespace knn::cuda
