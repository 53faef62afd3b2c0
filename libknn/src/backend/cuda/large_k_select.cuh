#pragma once
// Selection for k above kFastK: tau is each query's exact k-th upper bound (knn::prim's batched
// radix select over the bounds as they are computed), candidates are counted, placed by a scan
// and written in row order, and knn::prim's stable segmented sort ranks each query's list.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "backend/cuda/bounds.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/stage_timer.cuh"
#include "knn/metric.hpp"
#include "knn/search.hpp"

namespace knn::cuda {

struct GpuContext;
struct DeviceLists;

/// The device buffers of this path, kept between searches.
struct LargeKWorkspace {
  DeviceArray<unsigned> tau;
  DeviceArray<float> kth;
  DeviceArray<std::int64_t> count, offset, cand, out_index;
  DeviceArray<int> cand_query;
  DeviceArray<double> dist, out_dist;
  template <class F>
  void for_each_buffer(F&& f) {
    f(tau), f(kth), f(count), f(offset), f(cand), f(out_index), f(cand_query), f(dist), f(out_dist);
  }
};

/// The k nearest of a tile's qt queries (q, from query q0 of the search; `bounds` over its
/// product), into rows q0.. of out, on st; allocate_out() is called, while the device works,
/// before the results are copied into out. With `lists`, they go to its rows q0.. instead, on the
/// device, and out and allocate_out are left alone.
void large_k_tile(GpuContext& ctx, const Bounds& bounds, const float* q, const float* train, int d, Metric metric, std::int64_t q0,
                  std::int64_t qt, std::int64_t k, Neighbors& out, const std::function<void()>& allocate_out,
                  const DeviceLists* lists, StageTimer& timer, cudaStream_t st);

}  // namespace knn::cuda
