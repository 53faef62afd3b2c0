#pragma once
// The operands of a product: squared norms (double, and float rounded up and down for l2's float
// bounds) and float32 values split into TF32 parts for the tensor cores
// (docs/exactness.md#split-tf32-operands).
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/device_memory.cuh"

namespace knn::cuda {

/// The squared norms of `rows` rows of d floats, in double, into out (one warp a row), on st.
void squared_norms(const float* x, std::int64_t rows, int d, double* out, cudaStream_t st);

/// Each value x of the rows x d matrix as hi = x rounded to TF32 and lo = x - hi rounded to TF32,
/// in rows of 3d: training rows as [hi | lo | hi], queries (query_layout) as [hi | hi | lo], so that
/// one product of 3d terms gives q_hi.t_hi + q_hi.t_lo + q_lo.t_hi.
void split_rows(const float* x, std::int64_t rows, int d, bool query_layout, float* out, cudaStream_t st);

// The squared norms of n training rows on the device: in double (the bounds' double form), and
// rounded up and down to float (l2's float bounds).
struct TrainNorms {
  // Device bytes a training row takes besides its values.
  static constexpr std::size_t row_bytes = sizeof(double) + 2 * sizeof(float);
  DeviceArray<double> exact;
  DeviceArray<float> up, dn;
  void compute(const float* rows, std::int64_t n, int d, cudaStream_t st) {
    exact.resize(static_cast<std::size_t>(n));
    up.resize(static_cast<std::size_t>(n));
    dn.resize(static_cast<std::size_t>(n));
    squared_norms(rows, n, d, exact.get(), st);
    round_norms(exact.get(), n, up.get(), dn.get(), st);
  }

 private:
  static void round_norms(const double* norms, std::int64_t n, float* up, float* dn, cudaStream_t st);
};

}  // namespace knn::cuda
