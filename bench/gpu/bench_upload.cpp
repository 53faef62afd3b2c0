// How fast queries reach the GPU from the caller's memory: the host-to-device copy of a
// Fashion-MNIST query set (10,000 x 784 floats, 31 MB) from pageable memory, from page-locked
// memory, and the host copy into page-locked memory with 1, 2, 4 and 8 threads. Medians of 15
// after a warm-up; one table. The GPU search uploads its queries one way or the other.
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CK(x)                                                                               \
  do {                                                                                      \
    const cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "bench_upload: %s: %s\n", #x, cudaGetErrorString(e_));           \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

namespace {

double median_ms(const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < 15; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char* what, std::size_t bytes, double ms) {
  std::printf("| %s | %.3f | %.1f |\n", what, ms, bytes / (ms * 1e-3) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{10000} * 784;
  const std::size_t bytes = count * sizeof(float);
  std::vector<float> pageable(count);
  for (std::size_t i = 0; i < count; ++i) pageable[i] = static_cast<float>(i % 255) / 255.0f;
  float *pinned = nullptr, *device = nullptr;
  CK(cudaMallocHost(&pinned, bytes));
  CK(cudaMalloc(&device, bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  std::printf("| %zu floats (%.1f MB) | ms | GB/s |\n|---|---|---|\n", count, bytes / 1e6);
  row("cudaMemcpyAsync from pageable memory, then synchronize", bytes, median_ms([&] {
        CK(cudaMemcpyAsync(device, pageable.data(), bytes, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
      }));
  row("cudaMemcpyAsync from page-locked memory, then synchronize", bytes, median_ms([&] {
        CK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
      }));
  for (int threads : {1, 2, 4, 8}) {
    char what[96];
    std::snprintf(what, sizeof what, "host copy into page-locked memory, %d thread%s", threads, threads > 1 ? "s" : "");
    row(what, bytes, median_ms([&] {
          const std::size_t part = (bytes + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static)
          for (int p = 0; p < threads; ++p) {
            const std::size_t b0 = std::min(bytes, p * part), b1 = std::min(bytes, b0 + part);
            std::memcpy(reinterpret_cast<char*>(pinned) + b0, reinterpret_cast<const char*>(pageable.data()) + b0, b1 - b0);
          }
        }));
  }
  row("cudaHostRegister + copy + cudaHostUnregister", bytes, median_ms([&] {
        CK(cudaHostRegister(pageable.data(), bytes, cudaHostRegisterDefault));
        CK(cudaMemcpyAsync(device, pageable.data(), bytes, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaHostUnregister(pageable.data()));
      }));
  CK(cudaFreeHost(pinned));
  CK(cudaFree(device));
  return 0;
}
