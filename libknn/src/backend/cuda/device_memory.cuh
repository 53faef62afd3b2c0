#pragma once
// Device and page-locked memory that frees itself, and the CUDA objects a backend keeps (events,
// streams), each released with its owner.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "backend/cuda/cuda_check.cuh"

namespace knn::cuda {

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

}  // namespace knn::cuda
