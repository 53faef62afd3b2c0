#pragma once
// KNN_HD marks a function that both backends compile: the host's C++ and nvcc's device code.
// The translation units that call the rules in arith/ contract no multiply and add into an FMA
// (-ffp-contract=off on the host, --fmad=false under nvcc), so each operation rounds as written
// and both sides give the same bits.
#if defined(__CUDACC__)
#define KNN_HD __host__ __device__
#else
#define KNN_HD
#endif

namespace knn::arith {

// Double operations rounded to nearest on their own: on the device through the intrinsics that
// never contract into an FMA, whatever the compiler's flags; on the host as written (the library
// builds with -ffp-contract=off).
#if defined(__CUDA_ARCH__)
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }
__device__ inline double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ inline double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline double div(double a, double b) { return __ddiv_rn(a, b); }
#else
inline double add(double a, double b) { return a + b; }
inline double sub(double a, double b) { return a - b; }
inline double mul(double a, double b) { return a * b; }
inline double div(double a, double b) { return a / b; }
#endif

}  // namespace knn::arith
