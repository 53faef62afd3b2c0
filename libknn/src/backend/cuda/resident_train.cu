#include "backend/cuda/resident_train.cuh"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/staging.cuh"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/products.cuh"
#include "backend/cuda/search_plan.cuh"

namespace knn::cuda {

void DeviceTrain::finish(bool with_split, bool with_half) {
  const auto n = static_cast<std::int64_t>(rows_);
  const int d = static_cast<int>(cols_);
  norms.compute(rows.get(), n, d, 0);
  if (with_split) {
    split.resize(rows_ * cols_ * 3);
    split_rows(rows.get(), n, d, false, split.get(), 0);
  }
  DeviceArray<unsigned char> temp;  // the largest norm's reduction; it goes after the sync below
  if (with_half) prepare_fused_rows(rows.get(), norms, n, d, true, temp, max_tn, half, 0);
  KNN_CUDA(cudaDeviceSynchronize());
}

namespace {

// Whether rows kept for searches with `options` keep their TF32 parts too (float32 on tensor cores).
bool keeps_split(const GpuContext& ctx, const BackendOptions& options, std::size_t cols) {
  return ctx.tensor_cores() && !tf32_pass(options.precision, cols, ctx.tensor_cores());
}

// Whether they keep their FP16 operands too: TF32 searches, whose l2 products take them, fused or
// written (2 bytes a value more, against 4 more a value for the float32 parts).
bool keeps_half(const GpuContext& ctx, const BackendOptions& options, std::size_t cols) {
  return ctx.tuning.fp16 && tf32_pass(options.precision, cols, ctx.tensor_cores());
}

}  // namespace

bool gpu_keeps(const GpuContext& ctx, std::size_t rows, std::size_t cols, const BackendOptions& options) {
  std::size_t free_bytes = 0, total_bytes = 0;
  KNN_CUDA(cudaSetDevice(ctx.device));
  KNN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave most of the memory (or of the budget) to the search's workspace; a set this large is
  // uploaded per search, in parts when it does not fit.
  const std::size_t bytes = rows * cols * sizeof(float) * (keeps_split(ctx, options, cols) ? 4 : 1) + rows * TrainNorms::row_bytes +
                            (keeps_half(ctx, options, cols) ? rows * fp16_pitch(static_cast<int>(cols)) * sizeof(__half) : 0);
  return bytes <= free_bytes / 4 && !(options.device_memory_budget && bytes > options.device_memory_budget / 2);
}

std::shared_ptr<const PreparedTrain> gpu_prepare(GpuContext& ctx, const Matrix& train, const BackendOptions& options) {
  if (!gpu_keeps(ctx, train.rows, train.cols, options)) return nullptr;
  KNN_CUDA(cudaSetDevice(ctx.device));
  DeviceArray<float> values(train.values.size());
  const cudaStream_t st = ctx.stream->s;
  upload_staged(ctx, values.get(), train.values.data(), train.values.size(), st);
  return gpu_prepare_device(ctx, values, train.rows, train.cols, options, st);
}

std::shared_ptr<const PreparedTrain> gpu_prepare_device(const GpuContext& ctx, DeviceArray<float>& values, std::size_t rows,
                                                        std::size_t cols, const BackendOptions& options, cudaStream_t st) {
  return std::make_shared<DeviceTrain>(values, rows, cols, ctx.device, keeps_split(ctx, options, cols), keeps_half(ctx, options, cols), st);
}

}  // namespace knn::cuda
