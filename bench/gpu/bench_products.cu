// The search's first pass alone: our TF32 and FP16 products kernels (libknn/src/backend/cuda/
// products_kernel.cuh, fp16_products_kernel.cuh, and wgmma_products_kernel.cuh on a Hopper build
// and device) at several tilings against cuBLAS's TF32 and FP16 GemmEx on the same operands, at
// the shapes the search takes (a chunk of Fashion-MNIST queries against its 60,000 training rows,
// with 784 terms, or 2,352 for split operands; rows of 512 and 256 terms, around where the search
// starts to take the wgmma kernel; 10^6 x 128 rows). Device time by CUDA events, median of 7
// after one warm-up call; the largest difference from cuBLAS's values of the same operand type,
// at every 97th product, as a check.
//
//   bench_products [--quick]     (--quick: the search's mma.sync tilings, two wgmma ones and
//                                cuBLAS; without it, other tilings too: bench/RESULTS.md holds
//                                the TF32 ones)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cuda_fp16.h>

#include "backend/cuda/fp16_products_kernel.cuh"
#include "backend/cuda/products_kernel.cuh"
#include "backend/cuda/wgmma_products_kernel.cuh"

namespace {

using knn::cuda::Fp16Tiling;
using knn::cuda::ProductArgs;
using knn::cuda::Tf32Tiling;

#define CHECK(call)                                                                  \
  do {                                                                               \
    const cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));               \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

double median_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Shape {
  const char* name;
  long rows, cols;
  int kdim;
  bool half;  // FP16 operands too (the TF32 pass's)
};

struct Variant {
  const char* name;
  bool half;
  std::function<void(const ProductArgs&)> run;
};

template <class T>
Variant tiling(const char* name) {
  return {name, false, [](const ProductArgs& a) { knn::cuda::launch_tf32_products<T>(a, nullptr); }};
}
template <class T>
Variant half_tiling(const char* name) {
  return {name, true, [](const ProductArgs& a) { knn::cuda::launch_fp16_products<T>(a, nullptr); }};
}

template <class T>
Variant wgmma_tiling(const char* name) {
  return {name, true, [](const ProductArgs& a) { knn::cuda::launch_wgmma_products<T>(a, nullptr); }};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("card: %s\n\n", prop.name);
  const Shape shapes[] = {{"Fashion-MNIST chunk, tf32", 2500, 60000, 784, true},
                          {"Fashion-MNIST chunk, split operands", 2500, 60000, 2352, false},
                          {"Fashion-MNIST all queries, tf32", 10000, 60000, 784, true},
                          {"rows of 512 terms (where the search takes wgmma from)", 10000, 60000, 512, true},
                          {"rows of 256 terms", 10000, 60000, 256, true},
                          {"10^6 x 128 tile, tf32", 2147, 1000000, 128, true},
                          {"10^6 x 128 tile, split operands", 2147, 1000000, 384, false}};
  std::vector<Variant> variants = {tiling<Tf32Tiling<128, 128, 64, 64, 3, 2>>("TF32 128x128, 4 warps of 64x64, 3 stages (search)"),
                                   half_tiling<Fp16Tiling<128, 128, 64, 64, 3, 2>>("FP16 128x128, 4 warps of 64x64, 3 stages (search)")};
  if (!quick) {
    variants.push_back(half_tiling<Fp16Tiling<128, 256, 64, 64, 3, 1>>("FP16 128x256, 8 warps of 64x64, 3 stages"));
    variants.push_back(half_tiling<Fp16Tiling<256, 128, 64, 64, 3, 1>>("FP16 256x128, 8 warps of 64x64, 3 stages"));
    variants.push_back(half_tiling<Fp16Tiling<128, 256, 64, 64, 4, 1>>("FP16 128x256, 8 warps of 64x64, 4 stages"));
    variants.push_back(half_tiling<Fp16Tiling<128, 128, 64, 32, 3, 2>>("FP16 128x128, 8 warps of 64x32, 3 stages"));
    variants.push_back(half_tiling<Fp16Tiling<128, 128, 64, 64, 4, 1>>("FP16 128x128, 4 warps of 64x64, 4 stages"));
  }
#if defined(KNN_WGMMA)
  if (prop.major == 9 && prop.minor == 0) {
    using knn::cuda::WgmmaTiling;
    variants.push_back(wgmma_tiling<WgmmaTiling<128, 128, 3, 2>>("FP16 wgmma 128x128, 2 warpgroups, 3 stages"));
    variants.push_back(wgmma_tiling<WgmmaTiling<128, 256, 3, 1>>("FP16 wgmma 128x256, 2 warpgroups, 3 stages"));
    if (!quick) {
      variants.push_back(wgmma_tiling<WgmmaTiling<128, 256, 4, 1>>("FP16 wgmma 128x256, 2 warpgroups, 4 stages"));
      variants.push_back(wgmma_tiling<WgmmaTiling<64, 256, 4, 2>>("FP16 wgmma 64x256, 1 warpgroup, 4 stages"));
      variants.push_back(wgmma_tiling<WgmmaTiling<256, 128, 3, 1>>("FP16 wgmma 256x128, 4 warpgroups, 3 stages"));
    }
  }
#endif
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  for (const Shape& s : shapes) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> hq(static_cast<size_t>(s.rows) * s.kdim), ht(static_cast<size_t>(s.cols) * s.kdim);
    for (float& x : hq) x = u(rng);
    for (float& x : ht) x = u(rng);
    // The same values as FP16 operands (in [0, 1], no scaling needed).
    std::vector<__half> hqh(hq.size()), hth(ht.size());
    for (size_t i = 0; i < hq.size(); ++i) hqh[i] = __float2half_rn(hq[i]);
    for (size_t i = 0; i < ht.size(); ++i) hth[i] = __float2half_rn(ht[i]);
    float *q, *t, *c, *ref, *ref_half;
    __half *qh, *th;
    const size_t out = static_cast<size_t>(s.rows) * s.cols;
    CHECK(cudaMalloc(&q, hq.size() * 4));
    CHECK(cudaMalloc(&t, ht.size() * 4));
    CHECK(cudaMalloc(&qh, hq.size() * 2));
    CHECK(cudaMalloc(&th, ht.size() * 2));
    CHECK(cudaMalloc(&c, out * 4));
    CHECK(cudaMalloc(&ref, out * 4));
    CHECK(cudaMalloc(&ref_half, out * 4));
    CHECK(cudaMemcpy(q, hq.data(), hq.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(t, ht.data(), ht.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(qh, hqh.data(), hqh.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(th, hth.data(), hth.size() * 2, cudaMemcpyHostToDevice));
    const double flop = 2.0 * s.rows * s.cols * s.kdim;
    const float one = 1.0f, zero = 0.0f;
    const auto blas = [&](bool half, float* to) {
      cublasSetMathMode(h, half ? CUBLAS_DEFAULT_MATH : CUBLAS_TF32_TENSOR_OP_MATH);
      cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.cols), static_cast<int>(s.rows), s.kdim, &one,
                   half ? static_cast<const void*>(th) : t, half ? CUDA_R_16F : CUDA_R_32F, s.kdim, half ? static_cast<const void*>(qh) : q,
                   half ? CUDA_R_16F : CUDA_R_32F, s.kdim, &zero, to, CUDA_R_32F, static_cast<int>(s.cols),
                   half ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    };
    const double base = median_ms([&] { blas(false, ref); });
    std::vector<float> hr(out), hrh(out), hc(out);
    CHECK(cudaMemcpy(hr.data(), ref, out * 4, cudaMemcpyDeviceToHost));
    std::printf("| %s: %ld x %ld x %d | time (ms) | TFLOP/s | ratio to cuBLAS TF32 | largest difference from cuBLAS |\n|---|---|---|---|---|\n",
                s.name, s.rows, s.cols, s.kdim);
    std::printf("| cuBLAS GemmEx, TF32 | %.3f | %.0f | 1.00x | |\n", base, flop / base / 1e9);
    if (s.half) {
      const double ms = median_ms([&] { blas(true, ref_half); });
      CHECK(cudaMemcpy(hrh.data(), ref_half, out * 4, cudaMemcpyDeviceToHost));
      std::printf("| cuBLAS GemmEx, FP16 | %.3f | %.0f | %.2fx | |\n", ms, flop / ms / 1e9, ms / base);
    }
    for (const Variant& v : variants) {
      if (v.half && !s.half) continue;
      CHECK(cudaMemset(c, 0xff, out * 4));
      ProductArgs a{q, s.kdim, t, s.kdim, s.rows, s.cols, s.kdim, c, s.cols};
      if (v.half) a.qh = qh, a.th = th;
      const double ms = median_ms([&] { v.run(a); });
      CHECK(cudaMemcpy(hc.data(), c, out * 4, cudaMemcpyDeviceToHost));
      const std::vector<float>& r = v.half ? hrh : hr;
      double worst = 0;
      for (size_t i = 0; i < out; i += 97) worst = std::max(worst, std::fabs(static_cast<double>(hc[i]) - r[i]) / std::max(1.0f, std::fabs(r[i])));
      std::printf("| %s | %.3f | %.0f | %.2fx | %.2e |\n", v.name, ms, flop / ms / 1e9, ms / base, worst);
    }
    std::printf("\n");
    cudaFree(q), cudaFree(t), cudaFree(qh), cudaFree(th), cudaFree(c), cudaFree(ref), cudaFree(ref_half);
  }
  cublasDestroy(h);
  return 0;
}
