#pragma once
// Status of a device-level primitive and the checks that produce it. Host-only: no nvcc needed.
#include <cuda_runtime_api.h>

namespace knn::prim {

enum class Errc : int {
  success = 0,
  invalid_argument,  // a size, pointer or bit range the primitive cannot accept
  temp_too_small,    // temp_storage_bytes is below what the size query reported
  cuda_error,        // a CUDA runtime call or kernel launch failed; see cuda_error
};

// Trivially copyable, never allocates: message and where point at string literals
// (or at cudaGetErrorString's static text).
struct Status {
  Errc code = Errc::success;
  cudaError_t cuda_error = cudaSuccess;
  const char* message = "";
  const char* where = "";

  constexpr bool ok() const noexcept { return code == Errc::success; }
  constexpr explicit operator bool() const noexcept { return ok(); }
};

inline Status make_error(Errc code, const char* message, const char* where) noexcept {
  Status s;
  s.code = code;
  s.message = message;
  s.where = where;
  return s;
}

inline Status make_cuda_error(cudaError_t err, const char* where) noexcept {
  Status s;
  s.code = Errc::cuda_error;
  s.cuda_error = err;
  s.message = cudaGetErrorString(err);
  s.where = where;
  return s;
}

}  // namespace knn::prim

#define KNN_PRIM_STR2(x) #x
#define KNN_PRIM_STR(x) KNN_PRIM_STR2(x)
#define KNN_PRIM_WHERE __FILE__ ":" KNN_PRIM_STR(__LINE__)

// Returns an error Status from the enclosing function when a CUDA runtime call fails.
#define KNN_PRIM_CUDA_TRY(call)                                                  \
  do {                                                                           \
    const cudaError_t knn_prim_err_ = (call);                                    \
    if (knn_prim_err_ != cudaSuccess)                                            \
      return ::knn::prim::make_cuda_error(knn_prim_err_, KNN_PRIM_WHERE);        \
  } while (0)

// Checks the launch just made (configuration errors show up here, not at the <<< >>>).
#define KNN_PRIM_LAUNCH_CHECK() KNN_PRIM_CUDA_TRY(cudaGetLastError())

// Returns invalid_argument with the given reason (a string literal) unless cond holds.
#define KNN_PRIM_EXPECTS(cond, reason)                                                     \
  do {                                                                                     \
    if (!(cond))                                                                           \
      return ::knn::prim::make_error(::knn::prim::Errc::invalid_argument, reason,          \
                                     KNN_PRIM_WHERE);                                      \
  } while (0)

// Propagates a failed Status from a nested primitive.
#define KNN_PRIM_TRY(expr)                                 \
  do {                                                     \
    const ::knn::prim::Status knn_prim_st_ = (expr);       \
    if (!knn_prim_st_.ok()) return knn_prim_st_;           \
  } while (0)
