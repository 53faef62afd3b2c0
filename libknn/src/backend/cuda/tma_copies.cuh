#pragma once
// Hopper's tensor copies (cp.async.bulk.tensor, the TMA unit) from global to shared memory, and
// the shared-memory barriers (mbarrier) that say when they have landed: one thread asks for a
// whole tile by its coordinates in a tensor map (tensor_maps.cuh), the copy engine writes it
// (zeros past the tensor's ends) and counts its bytes on the barrier, and every thread that reads
// the tile waits on the barrier's phase. Compute capability 9.0 and later; the callers build
// these only where __CUDA_ARCH_FEAT_SM90_ALL is defined.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace knn::cuda {

__device__ __forceinline__ std::uint32_t shared_at(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }

// A barrier that completes a phase when `arrivals` threads have arrived and every byte they
// announced has landed. Its first phase has parity 0.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_at(bar)), "r"(arrivals) : "memory");
}
// Makes barriers this thread initialised visible to the copy engine (and, after a block barrier,
// to the other threads).
__device__ __forceinline__ void mbarrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Arrives on `bar` and announces `bytes` that copies still to be issued will count on it.
__device__ __forceinline__ void mbarrier_expect(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_at(bar)), "r"(bytes) : "memory");
}

// Waits until the phase of `bar` with this parity has completed; what the copies of that phase
// wrote is then visible to this thread, and to wgmma after it.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  const std::uint32_t at = shared_at(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(at), "r"(parity)
        : "memory");
  } while (!done);
}

// The box of `map` at (x, y) (x the contiguous dimension) into shared memory at `to`, counted on
// `bar`. `map` must be a kernel parameter (__grid_constant__) or in global memory.
__device__ __forceinline__ void tma_load_2d(void* to, const CUtensorMap* map, int x, int y, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_at(to)),
               "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(shared_at(bar))
               : "memory");
}
}  // namespace knn::cuda
