#pragma once
// Device-wide reductions (sum, min, max, any associative operator, arg-min / arg-max) and the
// per-column minimum and maximum of a row-major float matrix (for min-max scaling).
// Temp-storage convention as in device_scan.cuh. Results are written to device memory.
// Floating-point results do not depend on the GPU model: the grid has a fixed maximum size.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>

#include "../detail/load_store.cuh"
#include "../detail/reduce_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../operators.hpp"
#include "../status.hpp"

namespace knn::prim {

namespace detail {

inline int reduce_grid(std::int64_t n) {
  const long long blocks = ceil_div<long long>(n, ReducePolicy::block_threads);
  return static_cast<int>(blocks < ReducePolicy::max_blocks ? blocks : ReducePolicy::max_blocks);
}

template <typename T, typename Load, typename OutputIt, typename Op>
Status reduce_dispatch(void* temp, std::size_t& temp_bytes, Load load, OutputIt out, std::int64_t n,
                       Op op, T init, bool use_init, cudaStream_t stream) {
  KNN_PRIM_EXPECTS(n >= 0, "reduce: negative number of items");
  const TempPlan<1> plan{{sizeof(T) * ReducePolicy::max_blocks}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  KNN_PRIM_EXPECTS(!is_null(out), "reduce: null output pointer");
  const int blocks = reduce_grid(n);
  T* partials = plan.get<T>(temp, 0);
  if (blocks > 0) {
    reduce_partials_kernel<T><<<blocks, ReducePolicy::block_threads, 0, stream>>>(load, n, op, partials);
    KNN_PRIM_LAUNCH_CHECK();
  }
  reduce_final_kernel<T><<<1, ReducePolicy::block_threads, 0, stream>>>(partials, blocks, op, init, use_init, out);
  KNN_PRIM_LAUNCH_CHECK();
  return {};
}

template <typename T, typename InputIt>
struct IndexedLoad {
  InputIt in;
  __device__ KeyValuePair<std::int64_t, T> operator()(long long i) const {
    return {static_cast<std::int64_t>(i), static_cast<T>(in[i])};
  }
};

}  // namespace detail

// *out = op(init, in[0], ..., in[n-1]) (in an unspecified grouping: op must be associative);
// *out = init when n == 0.
template <typename InputIt, typename OutputIt, typename Op, typename T>
Status reduce(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n, Op op,
              T init, cudaStream_t stream = 0) {
  if (temp != nullptr && n > 0) KNN_PRIM_EXPECTS(!detail::is_null(in), "reduce: null input pointer");
  return detail::reduce_dispatch<T>(temp, temp_bytes, detail::PointerLoad<T, InputIt>{in}, out, n,
                                    op, init, true, stream);
}

template <typename InputIt, typename OutputIt>
Status reduce_sum(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n,
                  cudaStream_t stream = 0) {
  using T = detail::value_of<InputIt>;
  return reduce(temp, temp_bytes, in, out, n, Sum{}, T{}, stream);
}

// NaN is skipped; an empty or all-NaN input gives +infinity (floats) or the type's maximum.
template <typename InputIt, typename OutputIt>
Status reduce_min(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n,
                  cudaStream_t stream = 0) {
  using T = detail::value_of<InputIt>;
  using L = std::numeric_limits<T>;
  return reduce(temp, temp_bytes, in, out, n, Min{}, L::has_infinity ? L::infinity() : L::max(), stream);
}

// NaN is skipped; an empty or all-NaN input gives -infinity (floats) or the type's lowest.
template <typename InputIt, typename OutputIt>
Status reduce_max(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t n,
                  cudaStream_t stream = 0) {
  using T = detail::value_of<InputIt>;
  using L = std::numeric_limits<T>;
  return reduce(temp, temp_bytes, in, out, n, Max{}, L::has_infinity ? -L::infinity() : L::lowest(), stream);
}

// *out = {index, value} of the smallest value, ties to the smaller index; NaN only when every
// value is NaN. n must be at least 1.
template <typename InputIt, typename T>
Status arg_min(void* temp, std::size_t& temp_bytes, InputIt in, KeyValuePair<std::int64_t, T>* out,
               std::int64_t n, cudaStream_t stream = 0) {
  KNN_PRIM_EXPECTS(n >= 1, "arg_min: needs at least one item");
  if (temp != nullptr) KNN_PRIM_EXPECTS(!detail::is_null(in), "arg_min: null input pointer");
  using KV = KeyValuePair<std::int64_t, T>;
  return detail::reduce_dispatch<KV>(temp, temp_bytes, detail::IndexedLoad<T, InputIt>{in}, out, n,
                                     ArgMin{}, KV{}, false, stream);
}

// *out = {index, value} of the largest value, ties to the smaller index; the first NaN if any.
template <typename InputIt, typename T>
Status arg_max(void* temp, std::size_t& temp_bytes, InputIt in, KeyValuePair<std::int64_t, T>* out,
               std::int64_t n, cudaStream_t stream = 0) {
  KNN_PRIM_EXPECTS(n >= 1, "arg_max: needs at least one item");
  if (temp != nullptr) KNN_PRIM_EXPECTS(!detail::is_null(in), "arg_max: null input pointer");
  using KV = KeyValuePair<std::int64_t, T>;
  return detail::reduce_dispatch<KV>(temp, temp_bytes, detail::IndexedLoad<T, InputIt>{in}, out, n,
                                     ArgMax{}, KV{}, false, stream);
}

// col_min[c], col_max[c]: minimum and maximum of column c of the row-major rows x cols matrix
// `in`, NaN skipped (+inf / -inf for a column without numbers, or when rows == 0).
inline Status column_min_max(void* temp, std::size_t& temp_bytes, const float* in, std::int64_t rows,
                             std::int64_t cols, float* col_min, float* col_max,
                             cudaStream_t stream = 0) {
  constexpr int BT = 256;
  KNN_PRIM_EXPECTS(rows >= 0 && cols >= 0, "column_min_max: negative matrix size");
  const long long chunk = cols < BT ? cols : BT;
  const long long col_chunks = chunk ? detail::ceil_div<long long>(cols, chunk) : 0;
  KNN_PRIM_EXPECTS(col_chunks <= 65535, "column_min_max: more than 16.7 million columns");
  const long long group = chunk ? BT / chunk : 1;
  long long parts = detail::ceil_div<long long>(rows, group);
  const long long max_parts = col_chunks ? (1024 + col_chunks - 1) / col_chunks : 1;
  if (parts > max_parts) parts = max_parts;
  if (parts < 1) parts = 1;
  const detail::TempPlan<2> plan{{sizeof(float) * parts * cols, sizeof(float) * parts * cols}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (cols == 0) return {};
  KNN_PRIM_EXPECTS(col_min != nullptr && col_max != nullptr, "column_min_max: null output pointer");
  KNN_PRIM_EXPECTS(rows == 0 || in != nullptr, "column_min_max: null input pointer");
  float* pmin = plan.template get<float>(temp, 0);
  float* pmax = plan.template get<float>(temp, 1);
  detail::column_min_max_partials_kernel<BT><<<dim3(static_cast<unsigned>(parts), static_cast<unsigned>(col_chunks)), BT, 0, stream>>>(
      in, rows, cols, pmin, pmax);
  KNN_PRIM_LAUNCH_CHECK();
  detail::column_min_max_final_kernel<<<static_cast<unsigned>(detail::ceil_div<long long>(cols, BT)), BT, 0, stream>>>(
      pmin, pmax, static_cast<int>(parts), cols, col_min, col_max);
  KNN_PRIM_LAUNCH_CHECK();
  return {};
}

}  // namespace knn::prim
