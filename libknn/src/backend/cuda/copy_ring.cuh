#pragma once
// A ring of shared-memory stages that Hopper's copy engine fills (tma_copies.cuh), as the
// warpgroup kernels of the fused pass stream their operands: each stage has a barrier that says
// it has landed and a count of the warps done with it. The block never meets as a whole: each
// warp waits only for the stage it reads next, and the last warp to be done with a stage asks for
// the one that takes its place, R stages on. Compute capability 9.0; the callers build it only
// where __CUDA_ARCH_FEAT_SM90_ALL is defined.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/tma_copies.cuh"
#include "backend/cuda/wgmma_ops.cuh"

namespace knn::cuda {

// R places over `stages` stages; `landed` and `done` are R entries of shared memory each. `load(s)`
// (one thread) asks for stage s into place s % R, announcing its bytes on landed[s % R].
template <int R>
struct CopyRing {
  std::uint64_t* landed;
  unsigned* done;
  std::int64_t stages;

  // Thread 0 initialises the barriers and asks for the first R stages; a block barrier must
  // follow before any thread waits.
  template <class Load>
  __device__ void start(Load&& load) const {
    if (threadIdx.x != 0) return;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      mbarrier_init(&landed[i], 1);
      done[i] = 0;
    }
    mbarrier_init_fence();
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (i < stages) load(i);
  }

  // Waits until stage s has landed; what its copies wrote is then visible to this thread and to
  // wgmma after it.
  __device__ void wait(std::int64_t s) const { mbarrier_wait(&landed[s % R], static_cast<unsigned>(s / R) & 1u); }

  // A warp done with stage s (all its lanes, converged): the last of the block's `warps` warps to
  // be done asks for stage s + R in its place. The fences order every warp's reads of the place
  // (and of what else that stage's copies replace) before the copy engine's writes.
  template <class Load>
  __device__ void release(std::int64_t s, unsigned warps, Load&& load) const {
    if (threadIdx.x % 32 == 0) {
      const int place = static_cast<int>(s % R);
      __threadfence_block();
      const unsigned before = atomicAdd(&done[place], 1u);
      if ((before + 1) % warps == 0 && s + R < stages) {
        __threadfence_block();
        async_proxy_fence();
        load(s + R);
      }
    }
    __syncwarp();
  }
};

}  // namespace knn::cuda
