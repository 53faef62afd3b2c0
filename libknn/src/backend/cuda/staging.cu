#include "backend/cuda/staging.cuh"

#include <algorithm>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "backend/cuda/gpu_context.cuh"
#include "backend/cuda/host_staging.hpp"

namespace knn::cuda {

namespace {

// One piece of upload_staged: through the next of the two staging buffers.
void upload_piece(GpuContext& ctx, float* dst, const float* src, std::size_t count, cudaStream_t st) {
  const int which = ctx.next_stage;
  ctx.next_stage ^= 1;
  PinnedArray<float>& stage = ctx.stage[which];
  if (ctx.stage_used[which]) KNN_CUDA(cudaEventSynchronize(ctx.staged[which].e));
  stage.resize(count);
  parallel_copy(stage.get(), src, count * sizeof(float));
  KNN_CUDA(cudaMemcpyAsync(dst, stage.get(), count * sizeof(float), cudaMemcpyHostToDevice, ctx.copy_stream->s));
  KNN_CUDA(cudaEventRecord(ctx.staged[which].e, ctx.copy_stream->s));
  ctx.stage_used[which] = true;
  KNN_CUDA(cudaStreamWaitEvent(st, ctx.staged[which].e, 0));
}

}  // namespace

void upload_staged(GpuContext& ctx, float* dst, const float* src, std::size_t count, cudaStream_t st) {
  for (std::size_t at = 0; at < count; at += kStagePiece)
    upload_piece(ctx, dst + at, src + at, std::min(kStagePiece, count - at), st);
}

void download_staged(GpuContext& ctx, void* dst, const void* src, std::size_t bytes, cudaStream_t st) {
  constexpr std::size_t piece = kStagePiece * sizeof(float);
  auto* to = static_cast<unsigned char*>(dst);
  const auto* from = static_cast<const unsigned char*>(src);
  KNN_CUDA(cudaEventRecord(ctx.results_ready.e, st));
  KNN_CUDA(cudaStreamWaitEvent(ctx.copy_stream->s, ctx.results_ready.e, 0));
  // The piece in flight in each buffer: its offset and length (0: none).
  std::size_t at[2] = {0, 0}, len[2] = {0, 0};
  const auto drain = [&](int which) {
    if (len[which] == 0) return;
    KNN_CUDA(cudaEventSynchronize(ctx.staged[which].e));
    parallel_copy(to + at[which], ctx.stage[which].get(), len[which]);
    len[which] = 0;
  };
  for (std::size_t off = 0; off < bytes; off += piece) {
    const int which = ctx.next_stage;
    ctx.next_stage ^= 1;
    drain(which);
    if (ctx.stage_used[which]) KNN_CUDA(cudaEventSynchronize(ctx.staged[which].e));  // an upload's copy out of it
    PinnedArray<float>& stage = ctx.stage[which];
    stage.resize(kStagePiece);
    at[which] = off;
    len[which] = std::min(piece, bytes - off);
    KNN_CUDA(cudaMemcpyAsync(stage.get(), from + off, len[which], cudaMemcpyDeviceToHost, ctx.copy_stream->s));
    KNN_CUDA(cudaEventRecord(ctx.staged[which].e, ctx.copy_stream->s));
    ctx.stage_used[which] = true;
  }
  // The older piece first.
  const int newer = ctx.next_stage ^ 1;
  drain(newer ^ 1);
  drain(newer);
}

template <class T>
void fill_fresh(std::vector<T>& v, std::size_t n, T x) {
  v.clear();
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1), last = (begin + n * sizeof(T)) & ~(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  v.assign(n, x);
}
template void fill_fresh(std::vector<std::int64_t>&, std::size_t, std::int64_t);
template void fill_fresh(std::vector<double>&, std::size_t, double);

void deliver(GpuContext& ctx, const TileResults& r, Neighbors& out) {
  const SmallKWorkspace::HostResults& h = ctx.small.host[r.results];
  const auto at = static_cast<std::size_t>(r.q0 * r.k), items = static_cast<std::size_t>(r.qt * r.k);
  parallel_copy(out.distance.data() + at, h.dist.get(), items * sizeof(double));
  parallel_copy(out.index.data() + at, h.index.get(), items * sizeof(std::int64_t));
  const auto k = static_cast<std::size_t>(r.k);
  for (std::size_t x = 0; x < r.redone.size(); ++x) {
    const std::size_t to = at + static_cast<std::size_t>(r.redone[x]) * k;
    std::copy_n(r.dist.begin() + static_cast<std::ptrdiff_t>(x * k), k, out.distance.begin() + static_cast<std::ptrdiff_t>(to));
    std::copy_n(r.index.begin() + static_cast<std::ptrdiff_t>(x * k), k, out.index.begin() + static_cast<std::ptrdiff_t>(to));
  }
}

}  // namespace knn::cuda
