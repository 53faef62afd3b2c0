#include "backend/cuda/resident_train.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/staging.cuh"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/search_plan.cuh"

namespace knn::cuda {

bool split_products(int device, const detail::GpuTuning& tuning) {
  return !tuning.sgemm && tf32_products_fit(device);
}

void DeviceTrain::finish(bool with_split, bool with_half) {
  const auto n = static_cast<std::int64_t>(rows_);
  const int d = static_cast<int>(cols_);
  norms.compute(rows.get(), n, d, 0);
  if (with_split) {
    split.resize(rows_ * cols_ * 3);
    split_rows(rows.get(), n, d, false, split.get(), 0);
  }
  if (with_half) {
    DeviceArray<unsigned char> temp;
    prepare_fused_rows(rows.get(), norms, n, d, true, temp, max_tn, half, 0);
    KNN_CUDA(cudaDeviceSynchronize());  // before temp goes
  }
  KNN_CUDA(cudaDeviceSynchronize());
}

namespace {

// Whether rows kept for searches with `options` keep their TF32 parts too (float32 on tensor cores).
bool keeps_split(const BackendOptions& options, std::size_t cols, const detail::GpuTuning& tuning, int device) {
  const bool tensor_cores = split_products(device, tuning);
  return tensor_cores && !tf32_pass(options.precision, cols, tensor_cores);
}

// Whether they keep their FP16 operands too: TF32 searches, whose l2 products take them, fused or
// written (2 bytes a value more, against 4 more a value for the float32 parts).
bool keeps_half(const BackendOptions& options, std::size_t cols, const detail::GpuTuning& tuning, int device) {
  return tuning.fp16 && tf32_pass(options.precision, cols, split_products(device, tuning));
}

}  // namespace

bool gpu_keeps(std::size_t rows, std::size_t cols, const BackendOptions& options, const detail::GpuTuning& tuning, int device) {
  std::size_t free_bytes = 0, total_bytes = 0;
  KNN_CUDA(cudaSetDevice(device));
  KNN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave most of the memory (or of the budget) to the search's workspace; a set this large is
  // uploaded per search, in parts when it does not fit.
  const std::size_t bytes = rows * cols * sizeof(float) * (keeps_split(options, cols, tuning, device) ? 4 : 1) + rows * TrainNorms::row_bytes +
                            (keeps_half(options, cols, tuning, device) ? rows * fp16_pitch(static_cast<int>(cols)) * sizeof(__half) : 0);
  return bytes <= free_bytes / 4 && !(options.device_memory_budget && bytes > options.device_memory_budget / 2);
}

std::shared_ptr<const PreparedTrain> gpu_prepare(GpuContext& ctx, const Matrix& train, const BackendOptions& options) {
  if (!gpu_keeps(train.rows, train.cols, options, ctx.tuning, ctx.device)) return nullptr;
  KNN_CUDA(cudaSetDevice(ctx.device));
  DeviceArray<float> values(train.values.size());
  const cudaStream_t st = ctx.stream->s;
  upload_staged(ctx, values.get(), train.values.data(), train.values.size(), st);
  return gpu_prepare_device(values, train.rows, train.cols, options, ctx.tuning, ctx.device, st);
}

std::shared_ptr<const PreparedTrain> gpu_prepare_device(DeviceArray<float>& values, std::size_t rows, std::size_t cols,
                                                        const BackendOptions& options, const detail::GpuTuning& tuning, int device,
                                                        cudaStream_t st) {
  return std::make_shared<DeviceTrain>(values, rows, cols, device, keeps_split(options, cols, tuning, device), keeps_half(options, cols, tuning, device),
                                       st);
}

}  // namespace knn::cuda
