#pragma once
// What the GPU stages share: checked CUDA calls, device and page-locked memory that frees itself,
// and the context a backend keeps between calls (its stream, cuBLAS handle and buffers).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <knn/prim/status.hpp>

#include "backend/cuda/cuda_backend.hpp"
#include "knn/error.hpp"

namespace knn::cuda {

/// Thrown for cudaErrorMemoryAllocation: a stage that has a host path takes it instead.
class GpuOutOfMemory : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void fail(cudaError_t err, const char* what) {
  cudaGetLastError();
  if (err == cudaErrorMemoryAllocation)
    throw GpuOutOfMemory(std::string("GPU out of memory (") + what + "); lower " + param("device_memory_budget") + " or use " + param("device") + " cpu");
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
}

#define KNN_CUDA(call)                         \
  do {                                         \
    const cudaError_t e_ = (call);             \
    if (e_ != cudaSuccess) fail(e_, #call);    \
  } while (0)
#define KNN_LAUNCHED(name) KNN_CUDA(cudaGetLastError())

inline void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error ") + std::to_string(static_cast<int>(s)) + " in " + what);
}

inline void check_prim(const knn::prim::Status& s) {
  if (!s.ok()) throw Error(std::string("GPU primitive failed: ") + s.message + " at " + s.where);
}

inline unsigned blocks_for(std::int64_t items, int threads) {
  return static_cast<unsigned>(std::min<std::int64_t>((items + threads - 1) / threads, 1 << 30));
}

// Memory that throws knn::Error (out of memory included), frees itself and only grows: device
// memory, or page-locked host memory so that copies from the device run asynchronously.
template <class T, bool Pinned = false>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t count) { resize(count); }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void swap(Buffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(capacity_, other.capacity_);
  }
  void resize(std::size_t count) {
    if (count <= capacity_) return;
    release();
    void* p = nullptr;
    const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
    if (Pinned) KNN_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    else KNN_CUDA(cudaMalloc(&p, bytes));
    ptr_ = static_cast<T*>(p);
    capacity_ = count;
  }
  T* get() const { return ptr_; }
  std::size_t bytes() const { return capacity_ * sizeof(T); }
  void release() {
    if (Pinned) cudaFreeHost(ptr_);
    else cudaFree(ptr_);
    ptr_ = nullptr;
    capacity_ = 0;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};
template <class T>
using DeviceArray = Buffer<T>;
template <class T>
using PinnedArray = Buffer<T, true>;

/// Whether training rows of this shape stay on `device` between searches (gpu_prepare's rule).
bool gpu_keeps(std::size_t rows, std::size_t cols, const BackendOptions& options, int device);
/// gpu_prepare of rows already in device memory, rows x cols floats, which it takes from `values`
/// (left empty); the work before on `st` is waited for.
std::shared_ptr<const PreparedTrain> gpu_prepare_device(DeviceArray<float>& values, std::size_t rows, std::size_t cols,
                                                        const BackendOptions& options, int device, cudaStream_t st);

/// Scaler::transform's arithmetic on rows x cols floats in device memory, in place, on `st`
/// (cuda_scale.cu): offset and scale are the scaler's, cols doubles each in device memory. bad
/// gets the smallest flat index (row-major, counted from row 0 of the whole matrix, of which x
/// starts at first_row) of a value not finite once scaled, through atomicMin; such values become
/// 0. Start bad at ~0ull.
void scale_rows(float* x, std::size_t rows, std::size_t cols, const double* offset, const double* scale, std::size_t first_row,
                unsigned long long* bad, cudaStream_t st);

struct Event {
  cudaEvent_t e = nullptr;
  explicit Event(unsigned flags = cudaEventDisableTiming) { KNN_CUDA(cudaEventCreateWithFlags(&e, flags)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { KNN_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { check_blas(cublasCreate(&h), "cublasCreate"); }
  ~Blas() { cublasDestroy(h); }
};

// Kept between the calls of one backend (made by make_gpu_context, cuda_search.cu): a stream, a
// cuBLAS handle and the search's device buffers that only grow, since creating them costs
// milliseconds per search (allocating and freeing gigabytes of workspace most of all). A search
// with a memory budget of its own starts from empty buffers.
struct GpuContext {
  explicit GpuContext(int device_id);
  template <class F>
  void for_each_buffer(F&& f) {
    f(q), f(q_split), f(s), f(qn), f(dist), f(out_dist), f(tau), f(count), f(offset), f(cand), f(out_index), f(exclude), f(cand_query),
        f(left), f(found), f(slot_row), f(slot_base), f(slot_limit), f(temp), f(sample_tn), f(sample_up), f(sample_dn),
        f(sample_exclude), f(max_tn), f(half_rows), f(scaler_offset), f(scaler_scale), f(scale_bad), f(kth), f(sorted_dist), f(sorted_index), f(row_ordered);
  }
  std::size_t bytes() {
    std::size_t total = 0;
    for_each_buffer([&](const auto& a) { total += a.bytes(); });
    return total;
  }
  void release() {
    for_each_buffer([](auto& a) { a.release(); });
  }

  int device;
  // float32 products are taken from split operands on TF32 tensor cores (split_tf32_dot_bound):
  // compute capability 8.0 or later, unless KNN_GPU_SGEMM=1 asks for cuBLAS's float32 product.
  bool tensor_cores = false;
  int multiprocessors = 1;  // the device's count, for the sizes of grids
  // The product runs on `stream`; the selection of one chunk of queries on `select_stream`,
  // beside the product of the next. Voting runs on `stream`.
  std::unique_ptr<Stream> stream, select_stream;
  std::unique_ptr<Blas> blas;
  Event product_done;
  // Queries reach the GPU through two page-locked staging buffers: the host fills one while the
  // copy engine reads the other on copy_stream, beside the product of the chunk before (a copy
  // from pageable memory holds the calling thread and runs at a third of the speed).
  std::unique_ptr<Stream> copy_stream;
  PinnedArray<float> stage[2];
  Event staged[2];  // the copy out of stage[i] has finished
  bool stage_used[2] = {false, false};
  int next_stage = 0;
  // A tile's first-round results in page-locked memory, two sets taken in turn: the host copies
  // one tile's into the caller's lists while the device works on the next.
  struct HostResults {
    PinnedArray<double> dist;
    PinnedArray<std::int64_t> index;
    PinnedArray<int> left;
    PinnedArray<unsigned long long> found;
  };
  HostResults host[2];
  DeviceArray<float> q, q_split, s;  // q_split: the queries' TF32 parts, rows of [hi | hi | lo]
  DeviceArray<double> qn, dist, out_dist;
  DeviceArray<unsigned> tau;
  DeviceArray<std::int64_t> count, offset, cand, out_index, exclude, slot_base, slot_limit;
  DeviceArray<int> cand_query, left, slot_row;
  DeviceArray<unsigned long long> found;
  DeviceArray<unsigned char> temp;
  // The fused path's sample of the training rows (every stride-th): squared norms, exact and
  // rounded up and down, and the queries' excluded rows as rows of the sample.
  DeviceArray<double> sample_tn;
  DeviceArray<float> sample_up, sample_dn;
  DeviceArray<std::int64_t> sample_exclude;
  DeviceArray<float> max_tn;  // the fused pass's largest squared norm of the training rows
  DeviceArray<__half> half_rows;  // the fused pass's FP16 operands: the training rows scaled (fp16_rows)
  // A search's query scaler (SearchRequest::scaler): its offsets and scales, and the first value
  // that overflowed (scale_rows).
  DeviceArray<double> scaler_offset, scaler_scale;
  DeviceArray<unsigned long long> scale_bad;
  // Large k: each query's k-th upper bound (radix_select_kth). Lists ranked by the segmented sort
  // (large k, and second-round lists too long for shared memory): sorted distances and rows, and
  // the second round's lists in row order.
  DeviceArray<float> kth;
  DeviceArray<double> sorted_dist;
  DeviceArray<std::int64_t> sorted_index, row_ordered;
};

}  // namespace knn::cuda
