// Tensor maps through the driver's cuTensorMapEncodeTiled, found by the runtime's entry-point
// lookup (the driver library is opened by the runtime, never linked).
#include "backend/cuda/tensor_maps.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "knn/error.hpp"

namespace knn::cuda {

namespace {

using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

EncodeTiled encode_tiled() {
  static const EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    KNN_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
#else  // runtimes before 12.5 have only the form without a version
    KNN_CUDA(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || !fn) throw Error("the GPU driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later is needed)");
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  return encode;
}

CUtensorMap encode(CUtensorMapDataType type, cuuint32_t rank, const void* base, const cuuint64_t* dims, const cuuint64_t* strides,
                   const cuuint32_t* box, CUtensorMapSwizzle swizzle, const char* what) {
  CUtensorMap map{};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, type, rank, const_cast<void*>(base), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw Error(std::string("cuTensorMapEncodeTiled failed for ") + what + " (CUresult " + std::to_string(r) + ")");
  return map;
}

// The copy engine's coordinates are 32-bit signed.
void check_rows(std::int64_t count, const char* what) {
  if (count < 1 || count > std::numeric_limits<int>::max()) throw Error(std::string(what) + ": " + std::to_string(count) + " rows is outside the copy engine's range");
}

}  // namespace

CUtensorMap half_rows_map(const __half* rows, int cols, std::int64_t count, std::int64_t pitch, int box_rows) {
  check_rows(count, "half_rows_map");
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(count)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(pitch) * sizeof(__half)};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  return encode(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, rows, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, "FP16 rows");
}

CUtensorMap floats_map(const float* values, std::int64_t count, int box) {
  check_rows(count, "floats_map");
  // One row of `count` floats: a two-dimensional map (its row pitch rounded up to 16 bytes, as
  // the encoder asks), whose second coordinate is always 0.
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(count), 1};
  const cuuint64_t strides[1] = {(static_cast<cuuint64_t>(count) * sizeof(float) + 15) / 16 * 16};
  const cuuint32_t boxes[2] = {static_cast<cuuint32_t>(box), 1};
  return encode(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, values, dims, strides, boxes, CU_TENSOR_MAP_SWIZZLE_NONE, "floats");
}

}  // namespace knn::cuda
