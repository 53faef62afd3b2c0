#pragma once
// Two-kernel reductions: a fixed grid of blocks each reduces a grid-strided share to one
// partial, then one block reduces the partials. The grid size does not depend on the GPU, so
// floating-point results are the same bits on every device and run.
#include "../block/block_reduce.cuh"

// Kernels that need no template parameter still are templates (template <int Unused = 0>):
// a header-only library is included by many translation units of one program, and only
// templates (and inline functions) may be defined in each of them.
namespace knn::prim::detail {

struct ReducePolicy {
  static constexpr int block_threads = 256;
  static constexpr int max_blocks = 1024;  // about a full H100/H200 at 8 blocks per SM
  static constexpr int unroll = 4;         // independent loads in flight per thread
};

// Thread g reduces elements g, g + stride, ... in order. Every thread of a launched block has
// at least one element when the grid is sized by reduce_grid().
template <typename T, typename Load, typename Op>
__device__ T thread_strided_reduce(const Load& load, long long first, long long stride,
                                   long long n, Op op) {
  constexpr int U = ReducePolicy::unroll;
  T acc = load(first);
  long long i = first + stride;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load(i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc = op(acc, v[u]);
  }
  for (; i < n; i += stride) acc = op(acc, load(i));
  return acc;
}

template <typename T, typename Load, typename Op>
__global__ void __launch_bounds__(ReducePolicy::block_threads)
reduce_partials_kernel(Load load, long long n, Op op, T* partials) {
  constexpr int BT = ReducePolicy::block_threads;
  using Reduce = BlockReduce<T, BT>;
  __shared__ typename Reduce::TempStorage temp;
  const long long first = static_cast<long long>(blockIdx.x) * BT + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * BT;
  T items[1];
  if (first < n) items[0] = thread_strided_reduce<T>(load, first, stride, n, op);
  const long long valid = n - static_cast<long long>(blockIdx.x) * BT;
  const T total = Reduce(temp).reduce(items, op, valid);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// out = op(init, reduction of partials[0..count)) (without init unless use_init); with
// count == 0, out = init.
template <typename T, typename Op, typename OutputIt>
__global__ void __launch_bounds__(ReducePolicy::block_threads)
reduce_final_kernel(const T* partials, int count, Op op, T init, bool use_init, OutputIt out) {
  constexpr int BT = ReducePolicy::block_threads;
  using Reduce = BlockReduce<T, BT>;
  __shared__ typename Reduce::TempStorage temp;
  if (count == 0) {
    if (threadIdx.x == 0) *out = init;
    return;
  }
  struct PartialsLoad {
    const T* p;
    __device__ T operator()(long long i) const { return p[i]; }
  };
  T items[1];
  if (static_cast<int>(threadIdx.x) < count)
    items[0] = thread_strided_reduce<T>(PartialsLoad{partials}, threadIdx.x, BT, count, op);
  const T total = Reduce(temp).reduce(items, op, count);
  if (threadIdx.x == 0) *out = use_init ? op(init, total) : total;
}

// Per-column minimum and maximum of a row-major matrix. Block (x, y) covers the column chunk
// y * chunk .. + chunk (chunk = min(cols, block_threads)) and rows x, x + gridDim.x*group, ...
// where `group` rows fit side by side in one block: the block reads whole rows at once.
template <int BT>
__global__ void __launch_bounds__(BT)
column_min_max_partials_kernel(const float* in, long long rows, long long cols, float* partial_min,
                               float* partial_max) {
  __shared__ float smin[BT];
  __shared__ float smax[BT];
  const int chunk = static_cast<int>(cols < BT ? cols : BT);
  const int group = BT / chunk;  // rows read side by side
  const int tid = static_cast<int>(threadIdx.x);
  const int sub_row = tid / chunk;
  const long long col = static_cast<long long>(blockIdx.y) * chunk + tid % chunk;
  const bool active = sub_row < group && col < cols;
  float lo = __int_as_float(0x7f800000);   // +inf
  float hi = __int_as_float(0xff800000);   // -inf
  if (active) {
    for (long long r = static_cast<long long>(blockIdx.x) * group + sub_row; r < rows;
         r += static_cast<long long>(gridDim.x) * group) {
      const float v = in[r * cols + col];
      lo = fminf(lo, v);  // fminf/fmaxf skip NaN
      hi = fmaxf(hi, v);
    }
  }
  smin[tid] = lo;
  smax[tid] = hi;
  __syncthreads();
  if (tid < chunk && col < cols) {
    for (int g = 1; g < group; ++g) {
      lo = fminf(lo, smin[g * chunk + tid]);
      hi = fmaxf(hi, smax[g * chunk + tid]);
    }
    partial_min[blockIdx.x * cols + col] = lo;
    partial_max[blockIdx.x * cols + col] = hi;
  }
}

template <int Unused = 0>
__global__ void column_min_max_final_kernel(const float* partial_min, const float* partial_max,
                                            int parts, long long cols, float* col_min,
                                            float* col_max) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  float lo = partial_min[col], hi = partial_max[col];
  for (int p = 1; p < parts; ++p) {
    lo = fminf(lo, partial_min[p * cols + col]);
    hi = fmaxf(hi, partial_max[p * cols + col]);
  }
  col_min[col] = lo;
  col_max[col] = hi;
}

}  // namespace knn::prim::detail
