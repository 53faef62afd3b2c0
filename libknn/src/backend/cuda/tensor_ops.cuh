#pragma once
// The device instructions the products and the fused pass share: asynchronous copies from global
// to shared memory (cp.async, compute capability 8.0 and later) and the TF32 and FP16 tensor-core
// steps (mma.sync), with float accumulators, and ldmatrix for FP16 operands.
#include <cuda_runtime.h>

namespace knn::cuda {

// Copies `bytes` (0 to 16) of the 16 at gmem to smem and zero-fills the rest: with 0, gmem is
// not read, but must still be a valid address.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int bytes) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}
// The same for one float (bytes 0 or 4).
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, int bytes) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most Pending of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory"); }

// mma.sync m16n8k8 on TF32 operands given as float bits (the tensor cores read the top 19 bits):
// A in a0..a3 = (row gid, k tig), (gid + 8, tig), (gid, tig + 4), (gid + 8, tig + 4); B in
// b0, b1 = (k tig, column gid), (tig + 4, gid); c0..c3 = (gid, 2 tig), (gid, 2 tig + 1),
// (gid + 8, 2 tig), (gid + 8, 2 tig + 1), for lane = 4 gid + tig.
__device__ __forceinline__ void mma_tf32(float (&c)[4], float a0, float a1, float a2, float a3, float b0, float b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// mma.sync m16n8k16 on FP16 pairs (the lower half of each register first), float accumulators.
__device__ __forceinline__ void mma_f16(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The first step of a product: mma_f16 and mma_tf32 with zero accumulators, which are written, not
// read, so that no instruction clears them first.
__device__ __forceinline__ void mma_f16_first(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
}
__device__ __forceinline__ void mma_tf32_first(float (&c)[4], float a0, float a1, float a2, float a3, float b0, float b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)), "f"(0.0f));
}

// ldmatrix.x4: four 8 x 8 matrices of 16-bit values from shared memory, lanes 8m to 8m + 7 giving
// the addresses of matrix m's rows (16 bytes each); lane l receives in r[m] matrix m's row l / 4,
// values 2 (l % 4) and 2 (l % 4) + 1: an mma_f16 operand's layout.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}

}  // namespace knn::cuda
