// Min-max scaling on the GPU, with the parameters and values of the host's Scaler bit for bit
// (core/scaler.cpp).
//
// Fit: per tile of training rows, knn::prim::column_min_max gives each column's float minimum and
// maximum, folded over the tiles. Converting a float to double is exact and keeps the order, so
// these are the host's minima and maxima in double, but for the sign of a zero: where a column's
// minimum is zero, the host keeps the first zero in row order (std::min keeps the first of equal
// values), and that sign reaches the offset and the scaled -0.0s. A kernel finds each column's
// first zero row, and the host reads its sign. The maximum's sign never matters: a range of
// +-0 - +-0 is scale 1 either way, and any other range is the same number. Scaler::set_min_max
// then applies fit()'s rule. NaN, which loading rejects, is skipped by column_min_max but kept by
// the host where it lies in a column's first row: the two scalers then differ in that column, and
// both throw the same ScaleOverflow for the NaN once scaled.
//
// Transform: arith::scaled_value on both sides (no flush of subnormals either side). The first value that is not finite once scaled (lowest row, then
// lowest column) is the one the host reports, with the same ScaleOverflow; the host's matrix is
// left unchanged then. The same arithmetic is every scaler kind's transform (min-max and
// standard): scale_rows exposes it to the search, which scales queries given unscaled
// (SearchRequest::scaler) in device memory as they arrive.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <knn/prim/device/device_reduce.cuh>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/staging.cuh"
#include "arith/scaled_value.hpp"
#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/scale_rows.cuh"
#include "backend/cuda/resident_train.cuh"
#include "knn/scaler.hpp"
#include "knn/stage_times.hpp"

namespace knn::cuda {

namespace {

// Device memory for one tile of rows, or the backend's memory budget where smaller; a tile holds
// at least one row.
constexpr std::size_t kWorkingSet = std::size_t{256} << 20;
constexpr int kThreads = 256;
// A flat index or row that was not found.
constexpr unsigned long long kNone = ~0ull;

// first[c]: the smallest row (row0 + local row) whose value in column c is +0.0 or -0.0. Reading
// first[c] before the atomic skips most of them; a stale read only costs an atomic.
__global__ void first_zeros(const float* x, long long items, long long cols, unsigned long long row0, unsigned long long* first) {
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < items;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (x[p] != 0.0f) continue;
    const long long c = p % cols;
    const unsigned long long r = row0 + static_cast<unsigned long long>(p / cols);
    if (r < first[c]) atomicMin(first + c, r);
  }
}

// lo, hi: the running minimum and maximum of each column, with those of one more tile.
__global__ void fold_min_max(const float* tile_lo, const float* tile_hi, long long cols, float* lo, float* hi) {
  const long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (c >= cols) return;
  lo[c] = fminf(lo[c], tile_lo[c]);
  hi[c] = fmaxf(hi[c], tile_hi[c]);
}

// x -> (x - offset) / scale in double, rounded to float once, in place; bad: the smallest flat
// index (first_item + p, row-major over the whole matrix) of a value not finite once scaled. Such
// a value is written as 0, so that a search that reads the rows before its caller throws stays
// on finite numbers.
__global__ void scale_min_max(float* x, long long items, long long cols, const double* offset, const double* scale,
                              unsigned long long first_item, unsigned long long* bad) {
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < items;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = p % cols;
    const float y = arith::scaled_value(x[p], offset[c], scale[c]);
    const bool finite = isfinite(y);
    if (!finite) atomicMin(bad, first_item + static_cast<unsigned long long>(p));
    x[p] = finite ? y : 0.0f;
  }
}

// Rows per tile of `cols` floats.
std::size_t tile_rows(std::size_t rows, std::size_t cols, const BackendOptions& options) {
  std::size_t set = kWorkingSet;
  if (options.device_memory_budget) set = std::min(set, options.device_memory_budget);
  return std::max<std::size_t>(1, std::min(rows, set / (cols * sizeof(float))));
}

// What both directions share: a tile of rows, the scaler's parameters and the overflow flag.
struct TileScaling {
  std::size_t rows, cols, tile;
  DeviceArray<float> x;
  DeviceArray<double> offset, scale;
  DeviceArray<unsigned long long> bad;

  TileScaling(std::size_t r, std::size_t c, const BackendOptions& options) : TileScaling(r, c, tile_rows(r, c, options)) {}
  TileScaling(std::size_t r, std::size_t c, std::size_t t) : rows(r), cols(c), tile(t), x(t * c), offset(c), scale(c), bad(1) {}
  bool one_tile() const { return tile >= rows; }

  // Scales the rows of `in` into `out` (both host, rows x cols) with `scaler`'s parameters, tile
  // by tile; `resident`: the only tile is in x already. Returns the flat index of the first value
  // not finite once scaled, kNone when there is none.
  unsigned long long run(const Scaler& scaler, const float* in, float* out, bool resident, cudaStream_t st) {
    KNN_CUDA(cudaMemcpyAsync(offset.get(), scaler.offset().data(), cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemcpyAsync(scale.get(), scaler.scale().data(), cols * sizeof(double), cudaMemcpyHostToDevice, st));
    KNN_CUDA(cudaMemsetAsync(bad.get(), 0xff, sizeof(unsigned long long), st));
    for (std::size_t r0 = 0; r0 < rows; r0 += tile) {
      const std::size_t m = std::min(tile, rows - r0);
      if (!resident)
        KNN_CUDA(cudaMemcpyAsync(x.get(), in + r0 * cols, m * cols * sizeof(float), cudaMemcpyHostToDevice, st));
      scale_rows(x.get(), m, cols, offset.get(), scale.get(), r0, bad.get(), st);
      KNN_CUDA(cudaMemcpyAsync(out + r0 * cols, x.get(), m * cols * sizeof(float), cudaMemcpyDeviceToHost, st));
    }
    unsigned long long first_bad = kNone;
    KNN_CUDA(cudaMemcpyAsync(&first_bad, bad.get(), sizeof first_bad, cudaMemcpyDeviceToHost, st));
    KNN_CUDA(cudaStreamSynchronize(st));
    return first_bad;
  }
};

[[noreturn]] void overflow(MatrixView m, unsigned long long flat) {
  const auto i = static_cast<std::size_t>(flat / m.cols), j = static_cast<std::size_t>(flat % m.cols);
  throw ScaleOverflow(i, j, m(i, j), Scaling::minmax);
}

// Temp bytes of column_min_max on up to `rows` rows; 0 where it cannot take this many columns.
std::size_t min_max_temp(std::size_t rows, std::size_t cols) {
  std::size_t bytes = 0;
  const knn::prim::Status s = knn::prim::column_min_max(nullptr, bytes, nullptr, static_cast<std::int64_t>(rows),
                                                         static_cast<std::int64_t>(cols), nullptr, nullptr);
  return s.ok() ? bytes : 0;
}

// Scaler::fit's min-max parameters of `train` (rows and columns > 0) from the device, tile by
// tile: rows_at(r0, m) has rows r0 .. r0 + m - 1 of `train` in device memory when the work queued
// on the context's stream before it has run (it uploads them, or points into rows already there).
// False where the host should answer: more columns than column_min_max takes.
template <class RowsAt>
bool fit_on_device(GpuContext& ctx, MatrixView train, std::size_t tile, RowsAt&& rows_at, Scaler& fitted) {
  const std::size_t rows = train.rows, cols = train.cols;
  const std::size_t temp_bytes = min_max_temp(tile, cols);
  if (temp_bytes == 0) return false;
  DeviceArray<unsigned char> temp(temp_bytes);
  DeviceArray<float> lo(cols), hi(cols), tile_lo(cols), tile_hi(cols);
  DeviceArray<unsigned long long> first(cols);
  const cudaStream_t st = ctx.stream->s;
  const auto lc = static_cast<long long>(cols);

  KNN_CUDA(cudaMemsetAsync(first.get(), 0xff, cols * sizeof(unsigned long long), st));
  for (std::size_t r0 = 0; r0 < rows; r0 += tile) {
    const std::size_t m = std::min(tile, rows - r0);
    const auto items = static_cast<long long>(m * cols);
    const float* x = rows_at(r0, m);
    std::size_t bytes = temp.bytes();
    check_prim(knn::prim::column_min_max(temp.get(), bytes, x, static_cast<std::int64_t>(m), lc, r0 == 0 ? lo.get() : tile_lo.get(),
                                         r0 == 0 ? hi.get() : tile_hi.get(), st));
    if (r0 > 0) {
      fold_min_max<<<blocks_for(lc, kThreads), kThreads, 0, st>>>(tile_lo.get(), tile_hi.get(), lc, lo.get(), hi.get());
      KNN_LAUNCHED(fold_min_max);
    }
    first_zeros<<<blocks_for(items, kThreads), kThreads, 0, st>>>(x, items, lc, static_cast<unsigned long long>(r0), first.get());
    KNN_LAUNCHED(first_zeros);
  }
  std::vector<float> host_lo(cols), host_hi(cols);
  std::vector<unsigned long long> host_first(cols);
  KNN_CUDA(cudaMemcpyAsync(host_lo.data(), lo.get(), cols * sizeof(float), cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(host_hi.data(), hi.get(), cols * sizeof(float), cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaMemcpyAsync(host_first.data(), first.get(), cols * sizeof(unsigned long long), cudaMemcpyDeviceToHost, st));
  KNN_CUDA(cudaStreamSynchronize(st));

  std::vector<double> min_of(cols), max_of(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    const bool zero = host_lo[c] == 0.0f && host_first[c] != kNone;
    min_of[c] = zero ? static_cast<double>(train(static_cast<std::size_t>(host_first[c]), c)) : static_cast<double>(host_lo[c]);
    max_of[c] = static_cast<double>(host_hi[c]);
  }
  fitted = Scaler(Scaling::minmax, fitted.kept());
  fitted.set_min_max(min_of, max_of);
  return true;
}

// Scaler::fit then transform of `train` (rows and columns > 0) on the GPU, into `out`, in tiles
// of the working set. False, with the scaler and `out` untouched, where the host should answer:
// the GPU out of memory, or more columns than column_min_max takes.
bool gpu_fit_min_max(GpuContext& ctx, const BackendOptions& options, Scaler& scaler, MatrixView train, Matrix& out) {
  try {
    KNN_CUDA(cudaSetDevice(ctx.device));
    TileScaling s(train.rows, train.cols, options);
    const cudaStream_t st = ctx.stream->s;
    Scaler fitted(Scaling::minmax, scaler.kept());  // one-hot columns stay as they are
    const auto upload = [&](std::size_t r0, std::size_t m) {
      // On `st` itself: the next tile overwrites s.x, which the last tile's kernels on `st` read.
      KNN_CUDA(cudaMemcpyAsync(s.x.get(), train.row(r0), m * train.cols * sizeof(float), cudaMemcpyHostToDevice, st));
      return static_cast<const float*>(s.x.get());
    };
    if (!fit_on_device(ctx, train, s.tile, upload, fitted)) return false;
    Matrix scaled(train.rows, train.cols);
    const unsigned long long bad = s.run(fitted, train.data, scaled.values.data(), s.one_tile(), st);
    scaler = fitted;
    if (bad != kNone) overflow(train, bad);
    out = std::move(scaled);
  } catch (const GpuOutOfMemory&) {
    return false;
  }
  return true;
}

// The same with the rows kept: uploaded once, whole, fitted and scaled in device memory, copied
// back into `out` and kept there as `prepared` (the rows a search would otherwise upload again).
// False, with nothing changed, where they would not stay on the device (gpu_keeps), the GPU is out
// of memory or the host should answer.
bool gpu_fit_min_max_kept(GpuContext& ctx, const BackendOptions& options, Scaler& scaler, MatrixView train, Matrix& out,
                          std::shared_ptr<const PreparedTrain>& prepared) {
  try {
    if (!gpu_keeps(ctx, train.rows, train.cols, options)) return false;
    TileScaling s(train.rows, train.cols, train.rows);  // one tile: every row
    const cudaStream_t st = ctx.stream->s;
    upload_staged(ctx, s.x.get(), train.data, train.size(), st);
    Scaler fitted(Scaling::minmax, scaler.kept());  // one-hot columns stay as they are
    if (!fit_on_device(ctx, train, s.tile, [&](std::size_t, std::size_t) { return static_cast<const float*>(s.x.get()); }, fitted))
      return false;
    stage_done("GPU: rows uploaded, min-max fitted");
    Matrix scaled(train.rows, train.cols);
    const unsigned long long bad = s.run(fitted, nullptr, scaled.values.data(), true, st);
    stage_done("GPU: rows scaled, copied back");
    if (bad != kNone) {
      scaler = fitted;
      overflow(train, bad);
    }
    std::shared_ptr<const PreparedTrain> kept = gpu_prepare_device(ctx, s.x, train.rows, train.cols, options, st);
    scaler = fitted;
    out = std::move(scaled);
    prepared = std::move(kept);
  } catch (const GpuOutOfMemory&) {
    return false;
  }
  return true;
}

// Scaler::transform of `m` (rows and columns > 0, as many columns as the scaler) on the GPU. False,
// with `m` untouched, where the host should answer (the GPU out of memory).
bool gpu_scale_min_max(GpuContext& ctx, const BackendOptions& options, const Scaler& scaler, Matrix& m) {
  try {
    KNN_CUDA(cudaSetDevice(ctx.device));
    TileScaling s(m.rows, m.cols, options);
    // Into a copy first: on an overflow the host's transform leaves m as it was.
    std::vector<float> scaled(m.values.size());
    const unsigned long long bad = s.run(scaler, m.values.data(), scaled.data(), false, ctx.stream->s);
    if (bad != kNone) overflow(m, bad);
    m.values.swap(scaled);
  } catch (const GpuOutOfMemory&) {
    return false;
  }
  return true;
}

}  // namespace

void scale_rows(float* x, std::size_t rows, std::size_t cols, const double* offset, const double* scale, std::size_t first_row,
                unsigned long long* bad, cudaStream_t st) {
  const auto items = static_cast<long long>(rows * cols);
  if (items == 0) return;
  scale_min_max<<<blocks_for(items, kThreads), kThreads, 0, st>>>(x, items, static_cast<long long>(cols), offset, scale,
                                                                  static_cast<unsigned long long>(first_row * cols), bad);
  KNN_LAUNCHED(scale_min_max);
}

Matrix CudaBackend::fit_scaler(Scaler& scaler, MatrixView train) const {
  if (scaler.kind() == Scaling::minmax && train.rows > 0 && train.cols > 0) {
    Matrix out;
    if (on_context([&](GpuContext& ctx) { return gpu_fit_min_max(ctx, options_, scaler, train, out); })) return out;
  }
  return Backend::fit_scaler(scaler, train);
}

Matrix CudaBackend::fit_scaler_prepared(Scaler& scaler, MatrixView train, std::shared_ptr<const PreparedTrain>& prepared) const {
  if (scaler.kind() == Scaling::minmax && train.rows > 0 && train.cols > 0) {
    Matrix out;
    std::shared_ptr<const PreparedTrain> kept;
    if (on_context([&](GpuContext& ctx) { return gpu_fit_min_max_kept(ctx, options_, scaler, train, out, kept); })) {
      prepared = std::move(kept);
      return out;
    }
  }
  return Backend::fit_scaler_prepared(scaler, train, prepared);
}

void CudaBackend::scale(const Scaler& scaler, Matrix& m) const {
  // A scaler that does not match m gets the host's error.
  if (scaler.kind() == Scaling::minmax && m.rows > 0 && m.cols > 0 && m.cols == scaler.offset().size() &&
      on_context([&](GpuContext& ctx) { return gpu_scale_min_max(ctx, options_, scaler, m); }))
    return;
  Backend::scale(scaler, m);
}

}  // namespace knn::cuda
