#pragma once
// Compiler glue shared by the .cuh headers and the host-only reference headers.
#if defined(__CUDACC__)
#define KNN_PRIM_HD __host__ __device__ __forceinline__
#define KNN_PRIM_DEVICE __device__ __forceinline__
#else
#define KNN_PRIM_HD inline
#endif

namespace knn::prim::detail {
constexpr int warp_threads = 32;
constexpr unsigned full_mask = 0xffffffffu;

template <typename T>
KNN_PRIM_HD constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }
}  // namespace knn::prim::detail
