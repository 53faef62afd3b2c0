// FP16 operands (fp16_operands.cuh): the training rows' and the queries' scaled copies.
#include "backend/cuda/fp16_operands.cuh"

#include <algorithm>

#include "backend/cuda/cuda_check.cuh"

namespace knn::cuda {

namespace {

// Four halves a thread: group i of row i / (kh / 4).
__global__ void fp16_training_rows_kernel(const float* t, std::int64_t n, int d, int kh, const float* max_tn, __half* out) {
  const float scale = ldexpf(1.0f, 15 - fp16_exponent(*max_tn));
  const std::int64_t groups = n * (kh / 4);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < groups;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i / (kh / 4);
    const int f = static_cast<int>(i - j * (kh / 4)) * 4;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = f + e < d ? t[j * d + f + e] * scale : 0.0f;
    reinterpret_cast<uint2*>(out)[i] = make_uint2(fp16_pair(v[0], v[1]), fp16_pair(v[2], v[3]));
  }
}

// Four halves a thread as above; the thread of a row's first group also writes its limits.
__global__ void fp16_query_rows_kernel(const float* q, const double* qn, std::int64_t rows, int d, int kh, const float* max_tn,
                                       double l2_abs, __half* out, float* v_scale, float* abs_up) {
  const float mt = *max_tn;
  const int et = fp16_exponent(mt);
  const std::int64_t groups = rows * (kh / 4);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < groups;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i / (kh / 4);
    const int f = static_cast<int>(i - j * (kh / 4)) * 4;
    const Fp16Limits h = fp16_limits(qn[j], mt, et, d, l2_abs);
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = f + e < d ? q[j * d + f + e] * h.scale : 0.0f;
    reinterpret_cast<uint2*>(out)[i] = make_uint2(fp16_pair(v[0], v[1]), fp16_pair(v[2], v[3]));
    if (f == 0) {
      v_scale[j] = -0.5f * h.inv2;
      abs_up[j] = h.abs;
    }
  }
}

}  // namespace

void fp16_training_rows(const float* t, std::int64_t n, int d, int kh, const float* max_tn, __half* out, cudaStream_t st) {
  if (n == 0) return;
  fp16_training_rows_kernel<<<blocks_for(std::min<std::int64_t>(n * (kh / 4), std::int64_t{1} << 24), 256), 256, 0, st>>>(t, n, d, kh,
                                                                                                                    max_tn, out);
  KNN_LAUNCHED(fp16_training_rows_kernel);
}

void fp16_query_rows(const float* q, const double* qn, std::int64_t rows, int d, int kh, const float* max_tn, double l2_abs, __half* out,
                     float* v_scale, float* abs_up, cudaStream_t st) {
  if (rows == 0) return;
  fp16_query_rows_kernel<<<blocks_for(std::min<std::int64_t>(rows * (kh / 4), std::int64_t{1} << 24), 256), 256, 0, st>>>(
      q, qn, rows, d, kh, max_tn, l2_abs, out, v_scale, abs_up);
  KNN_LAUNCHED(fp16_query_rows_kernel);
}

}  // namespace knn::cuda
