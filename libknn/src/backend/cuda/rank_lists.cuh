#pragma once
// Candidate lists ranked by knn::prim's stable segmented sort, for lists longer than a block's
// shared memory holds (k above kFastK, and rows tied within the margin).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include <knn/prim/device/device_segmented_sort.cuh>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device_memory.cuh"

namespace knn::cuda {

/// The sort's sorted copies, kept between searches.
struct RankWorkspace {
  DeviceArray<double> sorted_dist;
  DeviceArray<std::int64_t> sorted_index;
  template <class F>
  void for_each_buffer(F&& f) {
    f(sorted_dist), f(sorted_index);
  }
};

// The first k of each sorted list (list x starts at begins[x] and holds at least k), to rows x of
// out_dist and out_index; with `only`, the lists x with only[x] set alone.
template <class BeginIt>
__global__ void take_first_k(const double* sorted_dist, const std::int64_t* sorted_index, BeginIt begins, const int* only,
                             std::int64_t lists, std::int64_t k, double* out_dist, std::int64_t* out_index) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lists * k;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t x = i / k;
    if (only && !only[x]) continue;
    const std::int64_t at = begins[x] + i % k;
    out_dist[i] = sorted_dist[at];
    out_index[i] = sorted_index[at];
  }
}

// Lists [begins[x], ends[x]) of candidates (distance, training row), each in row order, sorted by
// (distance, row) with knn::prim's stable segmented sort, and the first k of each (of those with
// only[x] set, when `only` is given) written to rows x of out_dist and out_index, which hold
// lists x k places.
template <class BeginIt, class EndIt>
void rank_lists(RankWorkspace& w, DeviceArray<unsigned char>& temp, const double* dist, const std::int64_t* index, std::int64_t places,
                std::int64_t lists, BeginIt begins, EndIt ends, const int* only, std::int64_t k, double* out_dist, std::int64_t* out_index,
                cudaStream_t st) {
  w.sorted_dist.resize(static_cast<std::size_t>(places));
  w.sorted_index.resize(static_cast<std::size_t>(places));
  std::size_t bytes = 0;
  check_prim(knn::prim::segmented_sort_pairs(nullptr, bytes, dist, w.sorted_dist.get(), index, w.sorted_index.get(), places, lists,
                                             begins, ends, 0, 64, st));
  temp.resize(bytes);
  check_prim(knn::prim::segmented_sort_pairs(temp.get(), bytes, dist, w.sorted_dist.get(), index, w.sorted_index.get(), places,
                                             lists, begins, ends, 0, 64, st));
  take_first_k<<<blocks_for(std::min<std::int64_t>(lists * k, std::int64_t{1} << 24), 256), 256, 0, st>>>(
      w.sorted_dist.get(), w.sorted_index.get(), begins, only, lists, k, out_dist, out_index);
  KNN_LAUNCHED(take_first_k);
}

}  // namespace knn::cuda
