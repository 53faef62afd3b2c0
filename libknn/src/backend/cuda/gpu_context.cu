#include "backend/cuda/gpu_context.cuh"

#include "backend/cuda/products.cuh"
#include "backend/cuda/resident_train.cuh"

namespace knn::cuda {

GpuContext::GpuContext(int device_id, const detail::GpuTuning& tuning_switches) : device(device_id), tuning(tuning_switches) {
  KNN_CUDA(cudaSetDevice(device));
  stream = std::make_unique<Stream>();
  select_stream = std::make_unique<Stream>();
  copy_stream = std::make_unique<Stream>();
  KNN_CUDA(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  mma = tf32_products_fit(device);
  wgmma = tuning.wgmma && wgmma_products_fit(device);
  small_k_init();
}

std::shared_ptr<GpuContext> make_gpu_context(int device, const detail::GpuTuning& tuning) {
  return std::make_shared<GpuContext>(device, tuning);
}

}  // namespace knn::cuda
