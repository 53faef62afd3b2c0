#pragma once
// What a GPU backend keeps between its calls: the device's resources (streams, page-locked staging,
// per-call temporary memory) and each algorithm's workspace, whose buffers
// only grow, since making them anew costs milliseconds a search (allocating gigabytes of workspace
// most of all). A search with a memory budget of its own starts from empty buffers.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backend/cuda/blas_products.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/fused_collect.cuh"
#include "backend/cuda/large_k_select.cuh"
#include "backend/cuda/rank_lists.cuh"
#include "backend/cuda/small_k_select.cuh"
#include "core/environment.hpp"

namespace knn::cuda {

/// The tile loop's buffers: a tile's queries (and their TF32 parts, rows of [hi | hi | lo], or
/// their FP16 rows with each row's scale and margin), its products, the queries' squared norms and
/// excluded rows, and the query scaler's parameters with the first value that overflowed
/// (scale_rows).
struct TileBuffers {
  DeviceArray<float> q, q_split, s;
  DeviceArray<__half> q_half;
  DeviceArray<float> v_scale, q_abs;
  DeviceArray<double> qn;
  DeviceArray<std::int64_t> exclude;
  DeviceArray<double> scaler_offset, scaler_scale;
  DeviceArray<unsigned long long> scale_bad;
  template <class F>
  void for_each_buffer(F&& f) {
    f(q), f(q_split), f(s), f(q_half), f(v_scale), f(q_abs), f(qn), f(exclude), f(scaler_offset), f(scaler_scale), f(scale_bad);
  }
};

struct GpuContext {
  GpuContext(int device_id, const detail::GpuTuning& tuning_switches);

  template <class F>
  void for_each_buffer(F&& f) {
    f(temp);
    tile.for_each_buffer(f);
    small.for_each_buffer(f);
    large.for_each_buffer(f);
    rank.for_each_buffer(f);
    fused.for_each_buffer(f);
  }
  /// Device bytes the workspaces hold.
  std::size_t bytes() {
    std::size_t total = 0;
    for_each_buffer([&](const auto& a) { total += a.bytes(); });
    return total;
  }
  void release() {
    for_each_buffer([](auto& a) { a.release(); });
  }

  int device;
  detail::GpuTuning tuning;
  // TF32 and FP16 tensor-core products (mma.sync): tf32_products_fit.
  bool mma = false;
  // FP16 products and the fused pass on Hopper's warpgroup instructions: wgmma_products_fit,
  // unless the tuning turns them off (KNN_GPU_WGMMA=0).
  bool wgmma = false;
  /// Whether the searches' float32 products are taken from split operands on the tensor cores, and
  /// precision auto may take the TF32 pass: where the kernels run, unless the tuning asks for
  /// float32 products (KNN_GPU_SGEMM=1).
  bool tensor_cores() const { return mma && !tuning.sgemm; }
  int multiprocessors = 1;  // the device's count, for the sizes of grids
  // The product runs on `stream`; the selection of one chunk of queries on `select_stream`,
  // beside the product of the next. Voting runs on `stream`.
  std::unique_ptr<Stream> stream, select_stream;
  Event product_done;
  // cuBLAS, once opened (take_products): the products' floating-point operations asked so far,
  // and whether opening it was tried.
  std::unique_ptr<BlasProducts> blas;
  double product_flop = 0.0;
  bool blas_tried = false;
  // Queries reach the GPU through two page-locked staging buffers: the host fills one while the
  // copy engine reads the other on copy_stream, beside the product of the chunk before (a copy
  // from pageable memory holds the calling thread and runs at a third of the speed). Large-k
  // lists come back through the same buffers (download_staged).
  std::unique_ptr<Stream> copy_stream;
  PinnedArray<float> stage[2];
  Event staged[2];  // the copy out of (or into) stage[i] has finished
  Event results_ready;  // download_staged: the work on the stream it drains is done
  bool stage_used[2] = {false, false};
  int next_stage = 0;
  DeviceArray<unsigned char> temp;  // knn::prim's temporary storage, for one call at a time

  TileBuffers tile;
  SmallKWorkspace small;
  LargeKWorkspace large;
  RankWorkspace rank;
  FusedWorkspace fused;
};

}  // namespace knn::cuda
