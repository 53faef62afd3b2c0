#pragma once
// Shared helpers of the primitives tests: GPU detection, seeds, poisoned device buffers.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <knn/prim/status.hpp>

namespace knn::prim::test {

// Any failure of cudaGetDeviceCount (no driver, no device, ...) means: no usable GPU.
inline bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define KNN_PRIM_REQUIRE_GPU()                                      \
  do {                                                              \
    if (!::knn::prim::test::has_gpu()) GTEST_SKIP() << "no CUDA GPU"; \
  } while (0)

#define CUDA_ASSERT(call)                                                          \
  do {                                                                             \
    const cudaError_t e_ = (call);                                                 \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);         \
  } while (0)

#define PRIM_ASSERT(expr)                                                                       \
  do {                                                                                          \
    const ::knn::prim::Status s_ = (expr);                                                      \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.message << " (" << s_.where << ")";             \
  } while (0)

// A fresh seed per test, recorded so a failure can be replayed.
inline unsigned fresh_seed() { return std::random_device{}(); }
#define KNN_PRIM_SEED(var)                          \
  const unsigned var = ::knn::prim::test::fresh_seed(); \
  SCOPED_TRACE("seed " + std::to_string(var))

constexpr unsigned char poison_byte = 0xAB;

// Device memory for a test: freed on scope exit, filled with 0xAB until written.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (cudaMalloc(&ptr_, bytes() ? bytes() : 1) != cudaSuccess) ptr_ = nullptr;
    else poison();
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }

  T* get() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  void poison() const { if (ptr_ && bytes()) cudaMemset(ptr_, poison_byte, bytes()); }
  void upload(const std::vector<T>& host) const {
    if (bytes()) cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice);
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (bytes()) cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

// Temp storage sized by a primitive's size query (null temp pointer first).
class TempStorage {
 public:
  explicit TempStorage(std::size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&ptr_, bytes ? bytes : 1) != cudaSuccess) ptr_ = nullptr;
    else cudaMemset(ptr_, poison_byte, bytes ? bytes : 1);
  }
  ~TempStorage() { if (ptr_) cudaFree(ptr_); }
  TempStorage(const TempStorage&) = delete;
  TempStorage& operator=(const TempStorage&) = delete;
  void* get() const { return ptr_; }
  std::size_t& bytes() { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// Bitwise equality, so that -0.0 vs +0.0 and NaN payloads count.
template <typename T>
bool same_bits(const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

// KNN_PRIM_TEST_QUICK=1 (set by bench/primitives/run_gpu.sh under compute-sanitizer, which
// runs kernels 10-100x slower) drops the largest sizes; every edge case stays.
inline bool quick_run() {
  const char* q = std::getenv("KNN_PRIM_TEST_QUICK");
  return q && *q && *q != '0';
}

// The sizes every device test runs: empty, one, around a warp, around a tile, and a
// non-power of two near 10^6 (prime, so no tile or warp divides it).
inline std::vector<std::int64_t> edge_sizes(std::int64_t tile) {
  std::vector<std::int64_t> s = {0, 1, 31, 32, 33, tile - 1, tile, tile + 1, 2 * tile + 7};
  s.push_back(quick_run() ? 3 * tile + 1 : 999983);
  return s;
}

}  // namespace knn::prim::test
