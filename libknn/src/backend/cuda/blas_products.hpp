#pragma once
// cuBLAS's products, opened at run time: the plugin does not link cuBLAS, so that a run whose
// products are few never loads it (about 0.2 s of start-up on an H100). A backend whose products
// have cost more than that load would save opens it (take_products, product_choice.cu); its TF32,
// FP16 and float32 GemmEx are within the same bounds as our kernels (docs/exactness.md).
#include <cuda_runtime.h>

#include <memory>

#include "backend/cuda/products.cuh"

namespace knn::cuda {

class BlasProducts {
 public:
  /// cuBLAS's library, its entry points and a handle; null where any is missing (the products stay
  /// ours).
  static std::unique_ptr<BlasProducts> open();
  ~BlasProducts();
  BlasProducts(const BlasProducts&) = delete;
  BlasProducts& operator=(const BlasProducts&) = delete;
  /// The products of `a` on st; false where cuBLAS cannot take them (sizes beyond int), or it
  /// fails: our kernels take them then.
  bool run(ProductKind kind, const ProductArgs& a, cudaStream_t st);

 private:
  struct Api;
  BlasProducts() = default;
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;
};

}  // namespace knn::cuda
