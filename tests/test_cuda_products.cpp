// The search's own products (backend/cuda/products.cuh) against a double-precision reference on
// fresh random data: every value within its kind's rounding bound (docs/exactness.md), for
// shapes that leave partial tiles, odd term counts, unaligned rows and a strided operand (the
// fused path's sample), and nothing written outside the result. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "arith/bounds.hpp"
#include "backend/cuda/products.cuh"
#include "knn/knn.hpp"
#include "require_gpu.hpp"

namespace {

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Shape {
  std::int64_t rows, cols;
  int kdim;
  std::int64_t ldq, ldt, ldc;  // row pitches in floats, at least kdim, kdim and cols
};

// A device copy of `v`, freed with it.
struct DeviceFloats {
  float* p = nullptr;
  explicit DeviceFloats(const std::vector<float>& v) {
    if (cudaMalloc(&p, v.size() * sizeof(float)) != cudaSuccess) p = nullptr;
    else if (cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) p = nullptr;
  }
  ~DeviceFloats() { cudaFree(p); }
};

void check_products(knn::cuda::ProductKind kind, const Shape& s, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(s.rows) + " x " + std::to_string(s.cols) + " x " +
               std::to_string(s.kdim) + (kind == knn::cuda::ProductKind::tf32 ? ", tf32" : ", fp32"));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> q(static_cast<std::size_t>(s.rows * s.ldq)), t(static_cast<std::size_t>(s.cols * s.ldt));
  for (float& x : q) x = value(rng);
  for (float& x : t) x = value(rng);
  // The result is poisoned with NaN, its padding included: a value left unwritten, or written
  // past a row's end, shows.
  std::vector<float> c(static_cast<std::size_t>(s.rows * s.ldc), std::nanf(""));
  DeviceFloats dq(q), dt(t), dc(c);
  ASSERT_TRUE(dq.p && dt.p && dc.p);
  knn::cuda::products(kind, knn::cuda::ProductArgs{dq.p, s.ldq, dt.p, s.ldt, s.rows, s.cols, s.kdim, dc.p, s.ldc}, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(c.data(), dc.p, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const double bound = kind == knn::cuda::ProductKind::tf32 ? knn::detail::tf32_dot_bound(static_cast<std::size_t>(s.kdim))
                                                            : knn::detail::fp32_dot_bound(static_cast<std::size_t>(s.kdim));
  int failures = 0;
  for (std::int64_t i = 0; i < s.rows && failures < 5; ++i) {
    for (std::int64_t j = 0; j < s.ldc && failures < 5; ++j) {
      const float got = c[static_cast<std::size_t>(i * s.ldc + j)];
      if (j >= s.cols) {
        if (!std::isnan(got)) ADD_FAILURE() << "padding (" << i << ", " << j << ") written: " << got, ++failures;
        continue;
      }
      double exact = 0.0, magnitude = 0.0;
      for (int f = 0; f < s.kdim; ++f) {
        const double p = static_cast<double>(q[static_cast<std::size_t>(i * s.ldq + f)]) * t[static_cast<std::size_t>(j * s.ldt + f)];
        exact += p;
        magnitude += std::fabs(p);
      }
      if (!(std::fabs(got - exact) <= bound * magnitude))
        ADD_FAILURE() << "(" << i << ", " << j << "): " << got << ", exact " << exact << ", allowed error " << bound * magnitude,
            ++failures;
    }
  }
}

std::uint32_t fresh_seed() { return std::random_device{}(); }

const Shape kShapes[] = {
    {1, 1, 1, 1, 1, 1},              // one pair, one term
    {5, 7, 3, 3, 3, 9},              // odd terms: one float at a time; padded result rows
    {128, 128, 32, 32, 32, 128},     // exactly one tile and one stage
    {130, 260, 33, 36, 36, 261},     // partial tiles on both sides, a partial stage; odd pitch
    {257, 129, 784, 784, 784, 129},  // Fashion-MNIST's width
    {300, 1000, 100, 101, 100, 1000},  // unaligned query rows
    {200, 333, 48, 48, 3 * 48, 352},   // every third training row, as the fused path's sample
    {64, 4100, 2352, 2352, 2352, 4100},  // split operands' width (3 x 784), many stages
};

TEST(CudaProducts, Tf32ProductsAreWithinTheirBound) {
  REQUIRE_GPU();
  for (const Shape& s : kShapes) check_products(knn::cuda::ProductKind::tf32, s, fresh_seed());
}

TEST(CudaProducts, Fp32ProductsAreWithinTheirBound) {
  REQUIRE_GPU();
  for (const Shape& s : kShapes) check_products(knn::cuda::ProductKind::fp32, s, fresh_seed());
}

// Split operands hold TF32 values only, so every product of two is exact and only the float
// accumulation errs: within 2 gamma_{kdim+2} of the sum of magnitudes, the accumulation part of
// split_tf32_dot_bound (counted twice in case the accumulator truncates). A kernel that dropped a
// term's low bits, or a term, would not meet it.
TEST(CudaProducts, Tf32ProductsOfTf32ValuesAreFloat32Accurate) {
  REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  const std::int64_t rows = 150, cols = 170;
  const int kdim = 96;
  auto tf32 = [](float x) {  // rounded to TF32 as split_tf32 does
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    b = (b + 0x1000u) & 0xffffe000u;
    std::memcpy(&x, &b, 4);
    return x;
  };
  std::vector<float> q(static_cast<std::size_t>(rows * kdim)), t(static_cast<std::size_t>(cols * kdim));
  for (float& x : q) x = tf32(value(rng));
  for (float& x : t) x = tf32(value(rng));
  std::vector<float> c(static_cast<std::size_t>(rows * cols), std::nanf(""));
  DeviceFloats dq(q), dt(t), dc(c);
  ASSERT_TRUE(dq.p && dt.p && dc.p);
  knn::cuda::products(knn::cuda::ProductKind::tf32, knn::cuda::ProductArgs{dq.p, kdim, dt.p, kdim, rows, cols, kdim, dc.p, cols}, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(c.data(), dc.p, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const double bound = 2.0 * knn::detail::float_gamma(static_cast<std::size_t>(kdim) + 2);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (int f = 0; f < kdim; ++f) {
        const double p = static_cast<double>(q[static_cast<std::size_t>(i * kdim + f)]) * t[static_cast<std::size_t>(j * kdim + f)];
        exact += p;
        magnitude += std::fabs(p);
      }
      const float got = c[static_cast<std::size_t>(i * cols + j)];
      ASSERT_LE(std::fabs(got - exact), bound * magnitude) << "(" << i << ", " << j << "): " << got << ", exact " << exact;
    }
}

// FP16 operands (ProductKind::fp16): products of halves are exact in float, and the tensor cores
// sum them in float, with an alignment of each k-step's 16 products to the largest that may
// truncate (docs/exactness.md#fp16-operands): within (2 gamma_{kdim+2} + 2^-19) of the sum of
// magnitudes of the halves' products, far below one term of these values. Shapes leave partial
// tiles and stages, take a strided training operand (the fused path's sample) and padded rows;
// values are spread over FP16's normal range; the result is poisoned, its padding included.
// `run` takes the products of `a` on the null stream.
void fp16_products_within_bound(void (*run)(const knn::cuda::ProductArgs& a)) {
  struct HalfShape {
    std::int64_t rows, cols;
    int kdim;
    std::int64_t ldq, ldt, ldc;  // in halves (q, t) and floats (c)
  };
  const HalfShape shapes[] = {{1, 1, 8, 8, 8, 1},          {5, 7, 8, 16, 8, 9},           {128, 128, 64, 64, 64, 128},
                              {130, 260, 72, 80, 72, 261}, {257, 129, 784, 784, 784, 129}, {200, 333, 48, 48, 3 * 48, 352},
                              {64, 4100, 1024, 1024, 1024, 4100}, {300, 600, 520, 520, 520, 600}};
  for (const HalfShape& s : shapes) {
    const std::uint32_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(s.rows) + " x " + std::to_string(s.cols) + " x " +
                 std::to_string(s.kdim));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-12, 12);
    std::vector<__half> q(static_cast<std::size_t>(s.rows * s.ldq)), t(static_cast<std::size_t>(s.cols * s.ldt));
    for (__half& x : q) x = __float2half_rn(std::ldexp(mantissa(rng), exponent(rng)));
    for (__half& x : t) x = __float2half_rn(std::ldexp(mantissa(rng), exponent(rng)));
    std::vector<float> c(static_cast<std::size_t>(s.rows * s.ldc), std::nanf(""));
    __half *dq = nullptr, *dt = nullptr;
    CHECK_CUDA(cudaMalloc(&dq, q.size() * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&dt, t.size() * sizeof(__half)));
    CHECK_CUDA(cudaMemcpy(dq, q.data(), q.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dt, t.data(), t.size() * sizeof(__half), cudaMemcpyHostToDevice));
    DeviceFloats dc(c);
    ASSERT_TRUE(dc.p);
    knn::cuda::ProductArgs a{nullptr, s.ldq, nullptr, s.ldt, s.rows, s.cols, s.kdim, dc.p, s.ldc};
    a.qh = dq;
    a.th = dt;
    run(a);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(c.data(), dc.p, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dq);
    cudaFree(dt);
    const double bound = 2.0 * knn::detail::float_gamma(static_cast<std::size_t>(s.kdim) + 2) + 0x1p-19;
    int failures = 0;
    for (std::int64_t i = 0; i < s.rows && failures < 5; ++i)
      for (std::int64_t j = 0; j < s.ldc && failures < 5; ++j) {
        const float got = c[static_cast<std::size_t>(i * s.ldc + j)];
        if (j >= s.cols) {
          if (!std::isnan(got)) ADD_FAILURE() << "padding (" << i << ", " << j << ") written: " << got, ++failures;
          continue;
        }
        double exact = 0.0, magnitude = 0.0;
        for (int f = 0; f < s.kdim; ++f) {
          const double p = static_cast<double>(__half2float(q[static_cast<std::size_t>(i * s.ldq + f)])) *
                           __half2float(t[static_cast<std::size_t>(j * s.ldt + f)]);
          exact += p;
          magnitude += std::fabs(p);
        }
        if (!(std::fabs(got - exact) <= bound * magnitude))
          ADD_FAILURE() << "(" << i << ", " << j << "): " << got << ", exact " << exact << ", allowed error " << bound * magnitude,
              ++failures;
      }
  }
}

// The mma.sync kernel at every length (products() takes wgmma only when its caller passes it).
TEST(CudaProducts, Fp16ProductsOfHalvesAreWithinTheirBound) {
  REQUIRE_GPU();
  fp16_products_within_bound([](const knn::cuda::ProductArgs& a) { knn::cuda::products(knn::cuda::ProductKind::fp16, a, nullptr); });
}

// The same bound on Hopper's warpgroup instructions (wgmma), whatever the rows' length: products()
// takes them only from 512 terms on and where its caller allows, so they are asked for by name.
TEST(CudaProducts, WgmmaFp16ProductsOfHalvesAreWithinTheirBound) {
  REQUIRE_GPU();
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  if (!knn::cuda::wgmma_products_built()) GTEST_SKIP() << "this build's CUDA architectures do not include 90a";
  if (!knn::cuda::wgmma_products_fit(device)) GTEST_SKIP() << "the device is not of compute capability 9.0";
  fp16_products_within_bound([](const knn::cuda::ProductArgs& a) { knn::cuda::wgmma_products(a, nullptr); });
}

bool blas_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublas") != std::string::npos) return true;
  return false;
}

// A short run's products are ours, so it maps no BLAS library: loading cuBLAS took about 0.2 s of
// a run's start on an H100 (product_choice.cuh).
TEST(CudaProducts, GpuSearchLoadsNoBlasLibrary) {
  REQUIRE_GPU();
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  knn::Matrix train(300, 20), queries(40, 20);
  std::mt19937 rng(fresh_seed());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (float& x : train.values) x = value(rng);
  for (float& x : queries.values) x = value(rng);
  for (const knn::Precision p : {knn::Precision::fp32, knn::Precision::tf32}) {
    o.precision = p;
    knn::SearchRequest r;
    r.train = &train;
    r.queries = queries;
    r.k = 5;
    EXPECT_EQ(knn::search(*knn::make_backend(o), r).index.size(), 40u * 5u);
  }
  EXPECT_FALSE(blas_mapped());
}

// KNN_GPU_BLAS=1 takes cuBLAS's products from the first search (a long-running process's choice,
// made early): the library is opened at run time, and the neighbours are the CPU backend's.
TEST(CudaProducts, BlasProductsWhenAskedAnswerAsTheCpu) {
  REQUIRE_GPU();
  ASSERT_FALSE(blas_mapped());
  ::setenv("KNN_GPU_BLAS", "1", 1);
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  knn::Matrix train(2000, 37), queries(300, 37);
  for (float& x : train.values) x = value(rng);
  for (float& x : queries.values) x = value(rng);
  knn::BackendOptions cpu;
  cpu.device = knn::Device::cpu;
  for (const knn::Precision p : {knn::Precision::fp32, knn::Precision::tf32}) {
    for (const knn::Metric m : {knn::Metric::l2, knn::Metric::cosine}) {
      knn::BackendOptions o;
      o.device = knn::Device::cuda;
      o.precision = p;
      knn::SearchRequest r;
      r.train = &train;
      r.queries = queries;
      r.k = 7;
      r.metric = m;
      const knn::Neighbors got = knn::search(*knn::make_backend(o), r), want = knn::search(*knn::make_backend(cpu), r);
      EXPECT_EQ(got.index, want.index);
      EXPECT_EQ(got.distance, want.distance);
    }
  }
  ::unsetenv("KNN_GPU_BLAS");
  EXPECT_TRUE(blas_mapped()) << "cuBLAS was not opened: the products were ours";
}

}  // namespace
