// The search's first pass alone: our TF32 products kernel (libknn/src/backend/cuda/
// products_kernel.cuh) at several tilings against cuBLAS's TF32 GemmEx on the same operands, at
// the shapes the search takes (a chunk of Fashion-MNIST queries against its 60,000 training rows,
// with 784 terms, or 2,352 for split operands; 10^6 x 128 rows). Device time by CUDA events,
// median of 7 after one warm-up call; the largest difference from cuBLAS's values, as a check.
//
//   bench_products [--quick]     (--quick: the search's tiling and cuBLAS only)
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

#include "backend/cuda/products_kernel.cuh"

namespace {

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
};

struct Variant {
  const char* name;
  std::function<void(const ProductArgs&)> run;
};

template <class T>
Variant tiling(const char* name) {
  return {name, [](const ProductArgs& a) { knn::cuda::launch_tf32_products<T>(a, nullptr); }};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("card: %s\n\n", prop.name);
  const Shape shapes[] = {{"Fashion-MNIST chunk, tf32", 2500, 60000, 784},
                          {"Fashion-MNIST chunk, split operands", 2500, 60000, 2352},
                          {"Fashion-MNIST all queries, tf32", 10000, 60000, 784},
                          {"10^6 x 128 tile, tf32", 2147, 1000000, 128},
                          {"10^6 x 128 tile, split operands", 2147, 1000000, 384}};
  std::vector<Variant> variants = {tiling<Tf32Tiling<128, 128, 64, 64, 3, 2>>("128x128, 4 warps of 64x64, 3 stages (search)")};
  if (!quick) {
    variants.push_back(tiling<Tf32Tiling<128, 256, 64, 64, 3, 1>>("128x256, 8 warps of 64x64, 3 stages"));
    variants.push_back(tiling<Tf32Tiling<256, 128, 64, 64, 3, 1>>("256x128, 8 warps of 64x64, 3 stages"));
    variants.push_back(tiling<Tf32Tiling<128, 128, 64, 32, 3, 1>>("128x128, 8 warps of 64x32, 3 stages"));
    variants.push_back(tiling<Tf32Tiling<128, 128, 64, 64, 4, 1>>("128x128, 4 warps of 64x64, 4 stages"));
    variants.push_back(tiling<Tf32Tiling<64, 128, 32, 64, 4, 2>>("64x128, 4 warps of 32x64, 4 stages"));
    variants.push_back(tiling<Tf32Tiling<128, 64, 64, 32, 4, 2>>("128x64, 4 warps of 64x32, 4 stages"));
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  for (const Shape& s : shapes) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> hq(static_cast<size_t>(s.rows) * s.kdim), ht(static_cast<size_t>(s.cols) * s.kdim);
    for (float& x : hq) x = u(rng);
    for (float& x : ht) x = u(rng);
    float *q, *t, *c, *ref;
    const size_t out = static_cast<size_t>(s.rows) * s.cols;
    CHECK(cudaMalloc(&q, hq.size() * 4));
    CHECK(cudaMalloc(&t, ht.size() * 4));
    CHECK(cudaMalloc(&c, out * 4));
    CHECK(cudaMalloc(&ref, out * 4));
    CHECK(cudaMemcpy(q, hq.data(), hq.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(t, ht.data(), ht.size() * 4, cudaMemcpyHostToDevice));
    const double flop = 2.0 * s.rows * s.cols * s.kdim;
    const float one = 1.0f, zero = 0.0f;
    const double base = median_ms([&] {
      cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.cols), static_cast<int>(s.rows), s.kdim, &one, t, CUDA_R_32F, s.kdim, q,
                   CUDA_R_32F, s.kdim, &zero, ref, CUDA_R_32F, static_cast<int>(s.cols), CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    });
    std::vector<float> hr(out), hc(out);
    CHECK(cudaMemcpy(hr.data(), ref, out * 4, cudaMemcpyDeviceToHost));
    std::printf("| %s: %ld x %ld x %d | time (ms) | TFLOP/s | ratio to cuBLAS | largest difference from cuBLAS |\n|---|---|---|---|---|\n", s.name,
                s.rows, s.cols, s.kdim);
    std::printf("| cuBLAS GemmEx, TF32 | %.3f | %.0f | 1.00x | |\n", base, flop / base / 1e9);
    for (const Variant& v : variants) {
      CHECK(cudaMemset(c, 0xff, out * 4));
      const ProductArgs a{q, s.kdim, t, s.kdim, s.rows, s.cols, s.kdim, c, s.cols};
      const double ms = median_ms([&] { v.run(a); });
      CHECK(cudaMemcpy(hc.data(), c, out * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < out; i += 97) worst = std::max(worst, std::fabs(static_cast<double>(hc[i]) - hr[i]) / std::max(1.0f, std::fabs(hr[i])));
      std::printf("| %s | %.3f | %.0f | %.2fx | %.2e |\n", v.name, ms, flop / ms / 1e9, ms / base, worst);
    }
    std::printf("\n");
    cudaFree(q), cudaFree(t), cudaFree(c), cudaFree(ref);
  }
  cublasDestroy(h);
  return 0;
}
