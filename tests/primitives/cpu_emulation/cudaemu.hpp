#pragma once
// CPU emulation of the CUDA features the primitives use (see run.sh): one OS thread per CUDA
// thread, blocks one after another, warp collectives through per-warp barriers, launches
// rewritten by launch_rewrite.py. For development on machines without a GPU; never in CI.
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace emu {
struct Barrier {
  std::mutex m;
  std::condition_variable cv;
  int expected = 0, arrived = 0;
  unsigned long gen = 0;
  void reset(int n) { expected = n; arrived = 0; gen = 0; }
  void arrive_and_wait() {
    std::unique_lock<std::mutex> l(m);
    const unsigned long g = gen;
    if (++arrived == expected) {
      arrived = 0;
      ++gen;
      cv.notify_all();
    } else {
      cv.wait(l, [&] { return gen != g; });
    }
  }
  void drop() {
    std::unique_lock<std::mutex> l(m);
    --expected;
    if (arrived > 0 && arrived == expected) {
      arrived = 0;
      ++gen;
      cv.notify_all();
    }
  }
};
struct Warp {
  Barrier bar;
  unsigned long long vals[32];
};
struct Block {
  Barrier bar;
  Warp warps[32];
};
inline thread_local Block* tl_block = nullptr;
inline int last_error = 0;
inline int lane() { return static_cast<int>(threadIdx.x) & 31; }
inline Warp& warp() { return tl_block->warps[threadIdx.x / 32]; }

template <class T>
T exchange(T v, int src) {
  static_assert(sizeof(T) <= 8, "");
  Warp& w = warp();
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  w.vals[lane()] = bits;
  w.bar.arrive_and_wait();
  T r;
  const unsigned long long got = w.vals[src];
  std::memcpy(&r, &got, sizeof(T));
  w.bar.arrive_and_wait();
  return r;
}

// A pool of worker threads, one per CUDA thread of a block, reused across blocks and launches.
struct Pool {
  std::mutex m;
  std::condition_variable cv, done_cv;
  std::vector<std::thread> workers;
  unsigned long job = 0;
  unsigned active = 0, remaining = 0;
  void (*fn)(void*) = nullptr;
  void* ctx = nullptr;
  dim3 g, b, bi;
  Block* blk = nullptr;
  ~Pool() {
    { std::lock_guard<std::mutex> l(m); stop = true; ++job; }
    cv.notify_all();
    for (auto& w : workers) w.join();
  }
  bool stop = false;
  void ensure(unsigned n) {
    while (workers.size() < n) {
      const unsigned id = static_cast<unsigned>(workers.size());
      workers.emplace_back([this, id] { loop(id); });
    }
  }
  void loop(unsigned id) {
    unsigned long seen = 0;
    for (;;) {
      void (*f)(void*);
      void* c;
      {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return job != seen; });
        seen = job;
        if (stop) return;
        if (id >= active) continue;
        f = fn;
        c = ctx;
        threadIdx = dim3(id);
        blockIdx = bi;
        blockDim = b;
        gridDim = g;
        tl_block = blk;
      }
      f(c);
      blk->warps[id / 32].bar.drop();
      blk->bar.drop();
      {
        std::lock_guard<std::mutex> l(m);
        if (--remaining == 0) done_cv.notify_all();
      }
    }
  }
};
inline Pool& pool() { static Pool p; return p; }

template <class F>
void run_blocks(dim3 g, dim3 b, F& body) {
  const unsigned nthreads = b.x * b.y * b.z;
  if (g.x == 0 || g.y == 0 || g.z == 0 || nthreads == 0 || nthreads > 1024 || b.y != 1 || b.z != 1) {
    std::fprintf(stderr, "emu: invalid launch configuration grid (%u,%u,%u) block (%u,%u,%u)\n", g.x, g.y, g.z, b.x, b.y, b.z);
    last_error = 9;  // cudaErrorInvalidConfiguration
    return;
  }
  Pool& p = pool();
  p.ensure(nthreads);
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        auto* blk = new Block;
        blk->bar.reset(static_cast<int>(nthreads));
        for (unsigned w = 0; w < (nthreads + 31) / 32; ++w)
          blk->warps[w].bar.reset(static_cast<int>(nthreads - 32 * w < 32 ? nthreads - 32 * w : 32));
        {
          std::unique_lock<std::mutex> l(p.m);
          p.fn = [](void* c) { (*static_cast<F*>(c))(); };
          p.ctx = &body;
          p.g = g; p.b = b; p.bi = dim3(bx, by, bz); p.blk = blk;
          p.active = nthreads;
          p.remaining = nthreads;
          ++p.job;
          p.cv.notify_all();
          p.done_cv.wait(l, [&] { return p.remaining == 0; });
        }
        delete blk;
      }
}
inline dim3 to_dim(dim3 d) { return d; }
inline dim3 to_dim(unsigned long long x) { return dim3(static_cast<unsigned>(x)); }
inline dim3 to_dim(long long x) { return dim3(static_cast<unsigned>(x)); }
inline dim3 to_dim(unsigned x) { return dim3(x); }
inline dim3 to_dim(int x) { return dim3(static_cast<unsigned>(x)); }
inline dim3 to_dim(long x) { return dim3(static_cast<unsigned>(x)); }
inline dim3 to_dim(unsigned long x) { return dim3(static_cast<unsigned>(x)); }
template <class F, class G, class B, class... R>
void launch(F&& body, G g, B b, R...) {
  run_blocks(to_dim(g), to_dim(b), body);
}
}  // namespace emu

// Intrinsics.
inline void __syncthreads() { emu::tl_block->bar.arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp().bar.arrive_and_wait(); }
template <class T> T __shfl_sync(unsigned, T v, int src, int = 32) { return emu::exchange(v, src & 31); }
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int = 32) {
  const int s = emu::lane() - static_cast<int>(d);
  return emu::exchange(v, s < 0 ? emu::lane() : s);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) {
  const int s = emu::lane() + static_cast<int>(d);
  return emu::exchange(v, s > 31 ? emu::lane() : s);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m, int = 32) { return emu::exchange(v, emu::lane() ^ m); }
inline unsigned __ballot_sync(unsigned, int pred) {
  emu::Warp& w = emu::warp();
  w.vals[emu::lane()] = pred ? 1 : 0;
  w.bar.arrive_and_wait();
  unsigned m = 0;
  for (int i = 0; i < 32; ++i) m |= static_cast<unsigned>(w.vals[i] & 1) << i;
  w.bar.arrive_and_wait();
  return m;
}
template <class T> unsigned __match_any_sync(unsigned, T v) {
  emu::Warp& w = emu::warp();
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  w.vals[emu::lane()] = bits;
  w.bar.arrive_and_wait();
  unsigned m = 0;
  for (int i = 0; i < 32; ++i) m |= (w.vals[i] == bits ? 1u : 0u) << i;
  w.bar.arrive_and_wait();
  return m;
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __clz(int x) { return x ? __builtin_clz(static_cast<unsigned>(x)) : 32; }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned) { std::this_thread::yield(); }
template <class T> T __ldcg(const T* p) { return *const_cast<const volatile T*>(p); }
template <class T> T __ldcs(const T* p) { return *p; }
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline bool __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0u; }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
template <class T, class U> T atomicAdd(T* p, U v) { return __atomic_fetch_add(p, static_cast<T>(v), __ATOMIC_SEQ_CST); }

// Runtime API.
enum cudaError { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9 };
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated error"; }
inline cudaError_t cudaGetLastError() { const int e = emu::last_error; emu::last_error = 0; return static_cast<cudaError_t>(e); }
inline cudaError_t cudaPeekAtLastError() { return static_cast<cudaError_t>(emu::last_error); }
inline cudaError_t cudaMalloc(void** p, std::size_t n) {
  *p = std::aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <class T> cudaError_t cudaMalloc(T** p, std::size_t n) { return cudaMalloc(reinterpret_cast<void**>(p), n); }
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemset(void* p, int v, std::size_t n) { std::memset(p, v, n); return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int v, std::size_t n, cudaStream_t = nullptr) { std::memset(p, v, n); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* d, const void* s, std::size_t n, cudaMemcpyKind) { std::memmove(d, s, n); return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, std::size_t n, cudaMemcpyKind, cudaStream_t = nullptr) { std::memmove(d, s, n); return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) { *v = 2; return cudaSuccess; }
template <class K> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, K, int, std::size_t) { *n = 2; return cudaSuccess; }
