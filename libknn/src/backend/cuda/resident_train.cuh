#pragma once
// Training rows kept in device memory between searches (Backend::prepare), with what the searches
// read of them besides: squared norms, TF32 parts, FP16 operands.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/operands.cuh"
#include "core/environment.hpp"
#include "knn/search.hpp"

namespace knn::cuda {

// Training rows and their squared norms in device memory; for float32 searches on tensor cores,
// their TF32 parts too (three times the rows' bytes more).
class DeviceTrain final : public PreparedTrain {
 public:
  // From rows already on the device (taken from `values`), once the work on `st` has finished.
  DeviceTrain(DeviceArray<float>& values, std::size_t n, std::size_t d, int device, bool with_split, bool with_half, cudaStream_t st)
      : device_(device), rows_(n), cols_(d) {
    KNN_CUDA(cudaSetDevice(device));
    KNN_CUDA(cudaStreamSynchronize(st));
    rows.swap(values);
    finish(with_split, with_half);
  }
  bool fits(const Matrix& m, int device) const { return device == device_ && m.rows == rows_ && m.cols == cols_; }
  DeviceArray<float> rows;
  DeviceArray<float> split;  // n x 3d, [hi | lo | hi], or empty
  TrainNorms norms;
  // For TF32 searches (keeps_half): the largest squared norm and the FP16 operands, made once here
  // instead of in every search; else empty.
  DeviceArray<float> max_tn;
  DeviceArray<__half> half;

 private:
  void finish(bool with_split, bool with_half);
  int device_;
  std::size_t rows_, cols_;
};

struct GpuContext;
/// Whether training rows of this shape stay on ctx's device between searches (gpu_prepare's rule).
bool gpu_keeps(const GpuContext& ctx, std::size_t rows, std::size_t cols, const BackendOptions& options);
/// Uploads training rows (through the context's page-locked staging) and their squared norms,
/// where gpu_keeps allows; else nullptr.
std::shared_ptr<const PreparedTrain> gpu_prepare(GpuContext& ctx, const Matrix& train, const BackendOptions& options);
/// gpu_prepare of rows already in device memory, rows x cols floats, which it takes from `values`
/// (left empty); the work before on `st` is waited for.
std::shared_ptr<const PreparedTrain> gpu_prepare_device(const GpuContext& ctx, DeviceArray<float>& values, std::size_t rows,
                                                        std::size_t cols, const BackendOptions& options, cudaStream_t st);

}  // namespace knn::cuda
