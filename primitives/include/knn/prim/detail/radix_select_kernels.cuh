#pragma once
// Batched radix select: the k smallest of each row by the unique composite key
// (ordered value bits, column index), so that ties by value go to the smaller index and the
// k-th key is exact. Passes over a row narrow down the composite key of the k-th element
// 11 bits at a time: a histogram of the digit among the remaining candidates gives the bucket
// that holds it; elements in lower buckets are selected outright (written to the row's output
// buffer); the bucket's elements stay candidates. Once the bucket holds at most
// `candidate_capacity` elements they are all written too, and a segmented sort of each row's
// buffer (selected + candidates) puts the k smallest first.
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "radix_traits.hpp"

namespace knn::prim::detail {

struct RadixSelectPolicy {
  static constexpr int block_threads = 256;
  static constexpr int digit_bits = 11;
  static constexpr int bins = 1 << digit_bits;
  static constexpr int chunk_items = 16384;  // elements of a row per block work item
  static constexpr int candidate_capacity = 4096;
  static constexpr int max_blocks = 2048;
};

enum : int { row_active = 0, row_collecting = 1, row_done = 2 };

struct RowState {
  unsigned long long prefix;  // top bits of the k-th composite key found so far
  long long need;             // how many of the current candidates still belong to the result
  unsigned long long count;   // elements written to the row's output buffer (atomic)
  int phase;
  int pad;
};

// Where the digits of pass p sit in the composite key of `key_bits` bits.
struct SelectDigits {
  int key_bits;   // 32 + index bits
  int index_bits;
  KNN_PRIM_HD int done_after(int p) const {
    const int d = RadixSelectPolicy::digit_bits * (p + 1);
    return d < key_bits ? d : key_bits;
  }
  KNN_PRIM_HD int shift(int p) const { return key_bits - done_after(p); }
  KNN_PRIM_HD int width(int p) const { return done_after(p) - RadixSelectPolicy::digit_bits * p; }
  KNN_PRIM_HD int passes() const {
    return (key_bits + RadixSelectPolicy::digit_bits - 1) / RadixSelectPolicy::digit_bits;
  }
};

KNN_PRIM_DEVICE unsigned long long composite_key(float value, long long index, unsigned flip,
                                                 int index_bits) {
  const unsigned v = RadixTraits<float>::to_ordered(value) ^ flip;
  return (static_cast<unsigned long long>(v) << index_bits) | static_cast<unsigned long long>(index);
}

__global__ void select_init_kernel(RowState* state, long long rows, long long k) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) state[r] = RowState{0ull, k, 0ull, row_active, 0};
}

// One work item = one chunk of one row. filter_pass < 0: histogram of digit 0 of every
// element. filter_pass = p >= 0: the bucket of pass p is known (state.prefix): write selected
// elements (and, when collecting, the candidates) to the row's buffer, and histogram digit p+1
// of the remaining candidates.
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads)
select_pass_kernel(const float* in, long long rows, long long cols, unsigned flip,
                   SelectDigits digits, int filter_pass, RowState* state, unsigned* hist_next,
                   unsigned long long* buffers, long long buffer_stride) {
  using P = RadixSelectPolicy;
  __shared__ unsigned hist[P::bins];
  const long long chunks_per_row = (cols + P::chunk_items - 1) / P::chunk_items;
  const long long items = rows * chunks_per_row;
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t & 31;
  const int next = filter_pass + 1;
  const bool has_next = next < digits.passes();
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long row = item / chunks_per_row;
    const long long chunk_begin = (item % chunks_per_row) * P::chunk_items;
    const long long chunk_end = chunk_begin + P::chunk_items < cols ? chunk_begin + P::chunk_items : cols;
    const RowState st = state[row];  // read-only in this kernel except `count`
    if (st.phase == row_done) continue;
    const bool collecting = st.phase == row_collecting;
    const bool histogram = has_next && !collecting;
    if (histogram) {
      for (int b = t; b < P::bins; b += P::block_threads) hist[b] = 0;
      __syncthreads();
    }
    int cand_shift = 0, new_shift = 0;
    unsigned long long cand_prefix = 0;
    if (filter_pass >= 0) {
      cand_shift = digits.shift(filter_pass) + digits.width(filter_pass);
      new_shift = digits.shift(filter_pass);
      cand_prefix = st.prefix >> digits.width(filter_pass);
    }
    const int next_shift = has_next ? digits.shift(next) : 0;
    const unsigned long long next_mask = has_next ? (1ull << digits.width(next)) - 1 : 0;
    const float* row_in = in + row * cols;
    unsigned long long* row_buffer = buffers + row * buffer_stride;
    // Every thread runs the same number of rounds so that the warp-aggregated writes below see
    // full warps; `unroll` loads per thread are in flight before any is used.
    constexpr int unroll = 8;
    for (long long base = chunk_begin; base < chunk_end; base += P::block_threads * unroll) {
      float v[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        const long long i = base + u * P::block_threads + t;
        v[u] = i < chunk_end ? row_in[i] : 0.f;
      }
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        const long long i = base + u * P::block_threads + t;
        bool write = false;
        unsigned long long key = 0;
        if (i < chunk_end) {
          key = composite_key(v[u], i, flip, digits.index_bits);
          // cand_shift <= key_bits <= 63, so the shift is defined.
          const bool candidate = filter_pass < 0 || (key >> cand_shift) == cand_prefix;
          if (candidate) {
            bool still_candidate = filter_pass < 0;
            if (filter_pass >= 0) {
              const unsigned long long hi = key >> new_shift;
              write = hi < st.prefix || (hi == st.prefix && collecting);
              still_candidate = hi == st.prefix && !collecting;
            }
            if (still_candidate && histogram)
              atomicAdd(&hist[static_cast<unsigned>((key >> next_shift) & next_mask)], 1u);
          }
        }
        const unsigned writers = __ballot_sync(0xffffffffu, write);
        if (writers) {
          const int leader = __ffs(writers) - 1;
          unsigned long long slot = 0;
          if (lane == leader)
            slot = atomicAdd(&state[row].count, static_cast<unsigned long long>(__popc(writers)));
          slot = __shfl_sync(0xffffffffu, slot, leader);
          if (write) row_buffer[slot + __popc(writers & ((1u << lane) - 1u))] = key;
        }
      }
    }
    if (histogram) {
      __syncthreads();
      unsigned* row_hist = hist_next + row * P::bins;
      for (int b = t; b < P::bins; b += P::block_threads)
        if (hist[b]) atomicAdd(row_hist + b, hist[b]);
      __syncthreads();
    }
  }
}

// Pass p's bucket for each row from the histogram of digit p; zeroes the other histogram.
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads)
select_bucket_kernel(SelectDigits digits, int pass, RowState* state, const unsigned* hist,
                     unsigned* hist_other) {
  using P = RadixSelectPolicy;
  constexpr int per_thread = P::bins / P::block_threads;
  using Scan = BlockScan<unsigned long long, P::block_threads, 1>;
  __shared__ typename Scan::TempStorage scan;
  const long long row = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  RowState& st = state[row];
  for (int b = t; b < P::bins; b += P::block_threads) hist_other[row * P::bins + b] = 0;
  const int phase = st.phase;
  if (phase != row_active) {
    __syncthreads();
    if (t == 0) st.phase = row_done;
    return;
  }
  const unsigned* h = hist + row * P::bins + t * per_thread;
  unsigned long long sum[1] = {0}, before[1];
  for (int j = 0; j < per_thread; ++j) sum[0] += h[j];
  Scan(scan).exclusive_scan(sum, before, 0ull, Sum{});
  const long long need = st.need;
  __syncthreads();  // everyone has read st.need before thread `owner` updates it
  if (static_cast<long long>(before[0]) < need && need <= static_cast<long long>(before[0] + sum[0])) {
    unsigned long long below = before[0];
    int b = 0;
    while (below + h[b] < static_cast<unsigned long long>(need)) below += h[b++];
    const int bucket = t * per_thread + b;
    st.prefix = (st.prefix << digits.width(pass)) | static_cast<unsigned long long>(bucket);
    st.need = need - static_cast<long long>(below);
    const bool last = pass + 1 == digits.passes();
    st.phase = (h[b] <= static_cast<unsigned>(P::candidate_capacity) || last) ? row_collecting : row_active;
  }
}

// The k first keys of each sorted row buffer, as values (read back from the input, so -0.0
// and NaN payloads survive) and column indices.
__global__ void select_unpack_kernel(const float* in, long long rows, long long cols, long long k,
                                     int index_bits, const unsigned long long* sorted,
                                     long long buffer_stride, float* out_values, int* out_indices) {
  const long long total = rows * k;
  const unsigned long long mask = index_bits ? (1ull << index_bits) - 1 : 0;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long row = i / k, j = i % k;
    const long long col = static_cast<long long>(sorted[row * buffer_stride + j] & mask);
    if (out_indices) out_indices[i] = static_cast<int>(col);
    if (out_values) out_values[i] = in[row * cols + col];
  }
}

// Segment of row r in the row buffers: [r * stride, r * stride + count).
struct SelectBufferSegments {
  const RowState* state;
  long long stride;
  __device__ long long begin(long long r) const { return r * stride; }
  __device__ long long end(long long r) const {
    return r * stride + static_cast<long long>(state[r].count);
  }
};

}  // namespace knn::prim::detail
