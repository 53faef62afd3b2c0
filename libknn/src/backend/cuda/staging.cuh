#pragma once
// Queries on their way to the device and results on their way back: page-locked staging of the
// uploads, and the host's copies of a tile's lists into the caller's, beside the device's work.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "knn/search.hpp"

namespace knn::cuda {

struct GpuContext;

/// Floats per piece of an upload: the two page-locked buffers take turns, so that the host's copy
/// of one piece into page-locked memory runs beside the copy engine's upload of the other. Small,
/// because page-locked memory is costly to give back: a process's end took about 0.03 s longer
/// for every 64 MiB it held (bench/RESULTS.md, 2026-11-27).
constexpr std::size_t kStagePiece = std::size_t{1} << 20;

/// count floats from host memory to dst through the page-locked staging buffers, a piece at a
/// time (the copy engine reads page-locked memory at the bus's pace, pageable memory at a
/// fraction of it); `st` waits for them. The copies run on the context's copy stream, which does
/// not wait for `st`: `dst` must not be read by work still pending on any stream (a buffer a
/// kernel on `st` may still read is written with cudaMemcpyAsync on `st` instead).
void upload_staged(GpuContext& ctx, float* dst, const float* src, std::size_t count, cudaStream_t st);

/// `bytes` from device memory src into host memory dst through the same page-locked buffers, a
/// piece at a time: the copy engine writes one piece while the host's threads copy the one before
/// out (the copy engine writes pageable memory at a fraction of the bus's pace). Starts once the
/// work queued on `st` is done; returns when dst holds it all.
void download_staged(GpuContext& ctx, void* dst, const void* src, std::size_t bytes, cudaStream_t st);

/// v = n copies of x, in memory the kernel may back with huge pages: a fresh list of 80 MB
/// (10^4 queries, k = 1,000) takes the host tens of milliseconds to fault in 4 KiB at a time.
template <class T>
void fill_fresh(std::vector<T>& v, std::size_t n, T x);
extern template void fill_fresh(std::vector<std::int64_t>&, std::size_t, std::int64_t);
extern template void fill_fresh(std::vector<double>&, std::size_t, double);

/// Where a search of device memory (DeviceSearchRequest) writes its lists: queries x k places each,
/// in device memory, row q for query q.
struct DeviceLists {
  std::int64_t* index = nullptr;
  double* dist = nullptr;
};

// A tile's neighbour lists waiting for the host to copy them into the caller's: the first round's
// in page-locked memory (ctx.host[results]), and the second round's for the queries it redid.
struct TileResults {
  std::int64_t q0 = 0, qt = 0, k = 0;
  int results = 0;
  std::vector<std::int64_t> redone;  // queries of the tile (0-based in it), in the order of dist and index
  std::vector<double> dist;
  std::vector<std::int64_t> index;
};


/// The lists of a finished tile into out: the first round's by several threads (tens of megabytes
/// with k = 1,000), then the second round's over them.
void deliver(GpuContext& ctx, const TileResults& r, Neighbors& out);

}  // namespace knn::cuda
