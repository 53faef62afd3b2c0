#pragma once
// The search's products, our own kernels: every query row against every training row, the first
// pass that picks candidates (docs/exactness.md bounds each kind). TF32 tensor cores (mma.sync)
// where the device has them and the kernel's shared memory (tf32_products_fit), FP16 on Hopper's
// warpgroup instructions (wgmma) for long rows where the build and the device allow
// (wgmma_products_fit), float32 FMA otherwise or when asked. A backend opens cuBLAS only once its products make that pay
// (product_choice.cuh).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace knn::cuda {

enum class ProductKind {
  fp32,  // float32 multiply-adds: fp32_dot_bound
  tf32,  // TF32 tensor cores on the operands' float bits: tf32_dot_bound, and split_tf32_dot_bound
         // for split operands (whose values TF32 holds exactly)
  fp16,  // FP16 tensor cores on operands scaled by powers of 2 (fp16_operands.cuh): tf32_dot_bound
         // with fp16_limits' absolute margin, once the products are scaled back
};

/// C = Q T^T: `rows` query rows (row i at q + i * ldq) against `cols` training rows (row j at
/// t + j * ldt), each `kdim` terms, into c (row i at c + i * ldc, floats). The terms are summed in
/// an order of the kernel's; past kdim nothing is read.
struct ProductArgs {
  const float* q;
  std::int64_t ldq;
  const float* t;
  std::int64_t ldt;
  std::int64_t rows, cols;
  int kdim;
  float* c;
  std::int64_t ldc;
  // ProductKind::fp16 reads these instead of q and t: rows of halves, ldq, ldt and kdim counted
  // in halves and multiples of 8, rows 16-byte aligned (fp16_query_rows, fp16_training_rows).
  const __half* qh = nullptr;
  const __half* th = nullptr;
};

/// The products, queued on st. tf32 and fp16 need tf32_products_fit (GpuContext::mma); with
/// `wgmma` (GpuContext::wgmma, which needs wgmma_products_fit) FP16 rows of 512 terms or more take
/// the wgmma kernel.
void products(ProductKind kind, const ProductArgs& a, cudaStream_t st, bool wgmma = false);

/// Whether `device` runs the TF32 and FP16 kernels: compute capability 8.0 or later and the shared
/// memory a block of the TF32 one takes (110,592 bytes: more than cards of compute capability 8.6
/// and 8.9 give one block; the FP16 one takes 98,304).
bool tf32_products_fit(int device);

/// Whether this build holds the wgmma FP16 kernel's body: its CUDA architectures include 90a
/// (Hopper by its own features, which defines KNN_WGMMA).
bool wgmma_products_built();

/// Whether `device` runs the wgmma FP16 kernel: the build holds it, the device is of compute
/// capability 9.0 exactly (sm_90a code runs nowhere else), and gives a block its shared memory.
bool wgmma_products_fit(int device);

/// ProductKind::fp16's products on the wgmma kernel whatever their length, queued on st (the
/// warm-up and the tests ask for it by name); only where wgmma_products_fit holds.
void wgmma_products(const ProductArgs& a, cudaStream_t st);

}  // namespace knn::cuda
