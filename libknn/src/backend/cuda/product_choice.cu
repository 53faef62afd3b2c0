#include "backend/cuda/product_choice.cuh"

#include "backend/cuda/blas_products.hpp"
#include "backend/cuda/gpu_context.cuh"

namespace knn::cuda {

void take_products(GpuContext& ctx, ProductKind kind, const ProductArgs& a, cudaStream_t st) {
  const int blas = ctx.tuning.blas;
  if (!ctx.blas_tried && blas != 0 && (blas == 1 || ctx.product_flop >= kBlasAfterFlop)) {
    ctx.blas_tried = true;
    ctx.blas = BlasProducts::open();
  }
  ctx.product_flop += kBlasFlopWeight[static_cast<int>(kind)] * 2.0 * static_cast<double>(a.rows) * static_cast<double>(a.cols) * a.kdim;
  if (ctx.blas && ctx.blas->run(kind, a, st)) return;
  products(kind, a, st, ctx.wgmma);
}

}  // namespace knn::cuda
