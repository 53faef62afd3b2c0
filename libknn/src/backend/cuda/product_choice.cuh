#pragma once
// Whose kernels take a search's products: ours (products.cuh) until a backend's products have
// cost more than loading cuBLAS would have saved, cuBLAS's after (blas_products.hpp). Loading it
// takes about 0.2 s; on an H100 its TF32 products ran at about 3.2 times our kernel's rate
// (bench_products), which saves some 6 ms a TFLOP. So a backend that has asked for 32 TFLOP (ten
// Fashion-MNIST searches of 10,000 queries with float32 operands) opens it, and a short run
// never pays for it: the rule of renting until the rent would have bought. KNN_GPU_BLAS=1 opens
// it at the first product, 0 never.
#include <cuda_runtime.h>

#include "backend/cuda/products.cuh"

namespace knn::cuda {

struct GpuContext;

constexpr double kBlasAfterFlop = 32e12;
// FP16 products count 0.4 of their operations: cuBLAS saves about 2.5 ms a TFLOP of them against
// about 6 of TF32 products (bench_products on an H100: 547 against our 231 TFLOP/s, and 343
// against 107). Indexed by ProductKind: fp32, tf32, fp16.
constexpr double kBlasFlopWeight[] = {1.0, 1.0, 0.4};

/// The products of `a` on st, by cuBLAS where ctx has opened it, else by our kernels.
void take_products(GpuContext& ctx, ProductKind kind, const ProductArgs& a, cudaStream_t st);

}  // namespace knn::cuda
