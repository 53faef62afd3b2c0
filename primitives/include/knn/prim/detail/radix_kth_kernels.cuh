#pragma once
// Batched k-th value: the value of each row's k-th smallest element, without gathering or
// sorting anything. Three digit passes (11, 11 and 10 bits, high to low) over the ordered bits
// of the row's values: each pass histograms the digit among the elements whose higher digits
// equal those found so far, and the bucket holding the k-th element fixes the next digit. After
// the third pass every bit of the k-th element's ordered key is known.
//
// Two ways to run a pass:
// - row blocks (many rows): one block a row does all three passes with its histogram in shared
//   memory; it needs no device memory at all.
// - split rows (few rows): chunks of each row are histogrammed by separate blocks into a global
//   histogram per row, and a block per row then finds the bucket (kth_bucket_kernel).
#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "radix_traits.hpp"

namespace knn::prim::detail {

struct RadixKthPolicy {
  static constexpr int block_threads = 256;
  static constexpr int bins = 2048;  // the widest digit: 11 bits
  static constexpr int passes = 3;
  static constexpr int unroll = 8;   // loads per thread in flight
  // With at least this many rows each row gets a block of its own (enough blocks to fill an
  // H100 or H200 several times over); fewer rows are split into chunks of at least
  // min_chunk_items elements, about split_blocks_per_sm work items per SM in all.
  static constexpr long long row_blocks_min_rows = 1024;
  static constexpr long long min_chunk_items = 8192;
  static constexpr int split_blocks_per_sm = 8;
};

enum class KthPath { automatic, row_blocks, split_rows };

KNN_PRIM_HD int kth_digit_shift(int pass) { return pass == 0 ? 21 : pass == 1 ? 10 : 0; }
KNN_PRIM_HD int kth_digit_width(int pass) { return pass == 2 ? 10 : 11; }

// The values of a dense row-major matrix, as radix_select_kth reads its input: row(r) gives an
// accessor whose operator()(c) is element (r, c).
struct MatrixRows {
  const float* in;
  long long cols;
  struct Row {
    const float* p;
    KNN_PRIM_DEVICE float operator()(long long c) const { return p[c]; }
  };
  KNN_PRIM_DEVICE Row row(long long r) const { return Row{in + r * cols}; }
};

// Adds elements [begin, end) of one row whose ordered key (xor flip) matches `prefix` above
// pass `pass`'s digit to the shared histogram of that digit, by the whole block.
template <typename Row>
KNN_PRIM_DEVICE void kth_histogram(const Row& row, long long begin, long long end, int pass, unsigned prefix,
                                   unsigned flip, unsigned* hist) {
  using P = RadixKthPolicy;
  const int shift = kth_digit_shift(pass);
  const int high = shift + kth_digit_width(pass);  // 32 in pass 0: no digit found yet
  const unsigned mask = (1u << kth_digit_width(pass)) - 1u;
  for (long long base = begin + static_cast<long long>(threadIdx.x); base < end;
       base += static_cast<long long>(P::block_threads) * P::unroll) {
    float v[P::unroll];
#pragma unroll
    for (int u = 0; u < P::unroll; ++u) {
      const long long i = base + static_cast<long long>(u) * P::block_threads;
      v[u] = i < end ? row(i) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < P::unroll; ++u) {
      if (base + static_cast<long long>(u) * P::block_threads < end) {
        const unsigned key = RadixTraits<float>::to_ordered(v[u]) ^ flip;
        if (high >= 32 || (key >> high) == prefix) atomicAdd(&hist[(key >> shift) & mask], 1u);
      }
    }
  }
}

constexpr int kth_bins_per_thread = RadixKthPolicy::bins / RadixKthPolicy::block_threads;
using KthScan = BlockScan<unsigned, RadixKthPolicy::block_threads, 1>;

struct KthShared {
  typename KthScan::TempStorage scan;
  unsigned bucket, below;
};

// The bucket holding the need-th (1-based) counted element, from each thread's counts of bins
// t * kth_bins_per_thread + j, and how many counted elements lie in lower buckets: left in
// shared.bucket and shared.below, readable by every thread on return. need must be at most the
// total count. The caller synchronises before `shared` is written again.
KNN_PRIM_DEVICE void kth_find_bucket(const unsigned (&h)[kth_bins_per_thread], unsigned need, KthShared& shared) {
  unsigned sum[1] = {0u}, before[1];
#pragma unroll
  for (int j = 0; j < kth_bins_per_thread; ++j) sum[0] += h[j];
  KthScan(shared.scan).exclusive_scan(sum, before, 0u, Sum{});
  if (before[0] < need && need <= before[0] + sum[0]) {
    unsigned below = before[0];
    int b = -1;
#pragma unroll
    for (int j = 0; j < kth_bins_per_thread; ++j) {  // unrolled, so that h stays in registers
      if (b < 0) {
        if (below + h[j] >= need) b = j;
        else below += h[j];
      }
    }
    shared.bucket = static_cast<unsigned>(static_cast<int>(threadIdx.x) * kth_bins_per_thread + b);
    shared.below = below;
  }
  __syncthreads();
}

// Row blocks: block r finds row r's k-th value in three passes over the row.
template <typename Rows>
__global__ void __launch_bounds__(RadixKthPolicy::block_threads)
kth_row_kernel(Rows rows, long long cols, long long k, unsigned flip, float* out) {
  using P = RadixKthPolicy;
  __shared__ unsigned hist[P::bins];
  __shared__ KthShared shared;
  const long long r = blockIdx.x;
  const auto row = rows.row(r);
  const int t = static_cast<int>(threadIdx.x);
  unsigned prefix = 0u, need = static_cast<unsigned>(k);
  for (int pass = 0; pass < P::passes; ++pass) {
    for (int b = t; b < P::bins; b += P::block_threads) hist[b] = 0u;
    __syncthreads();
    kth_histogram(row, 0, cols, pass, prefix, flip, hist);
    __syncthreads();
    unsigned h[kth_bins_per_thread];
#pragma unroll
    for (int j = 0; j < kth_bins_per_thread; ++j) h[j] = hist[t * kth_bins_per_thread + j];
    kth_find_bucket(h, need, shared);
    prefix = (prefix << kth_digit_width(pass)) | shared.bucket;
    need -= shared.below;
    __syncthreads();
  }
  if (t == 0) out[r] = RadixTraits<float>::from_ordered(prefix ^ flip);
}

// Split rows: per row, the digits found so far and the rank left to find among the elements
// that share them.
struct KthRowState {
  unsigned prefix;
  unsigned need;
};

// One pass's histograms: grid-stride over (row, chunk) work items, each added to its row's
// global histogram (bins words a row, zero before the pass).
template <typename Rows>
__global__ void __launch_bounds__(RadixKthPolicy::block_threads)
kth_chunk_kernel(Rows rows, long long row_count, long long cols, long long chunk_items, long long chunks_per_row,
                 int pass, unsigned flip, const KthRowState* state, unsigned* hist) {
  using P = RadixKthPolicy;
  __shared__ unsigned smem[P::bins];
  const int t = static_cast<int>(threadIdx.x);
  const long long items = row_count * chunks_per_row;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long r = item / chunks_per_row;
    const long long begin = (item % chunks_per_row) * chunk_items;
    const long long end = begin + chunk_items < cols ? begin + chunk_items : cols;
    for (int b = t; b < P::bins; b += P::block_threads) smem[b] = 0u;
    __syncthreads();
    kth_histogram(rows.row(r), begin, end, pass, pass == 0 ? 0u : state[r].prefix, flip, smem);
    __syncthreads();
    unsigned* row_hist = hist + r * P::bins;
    for (int b = t; b < P::bins; b += P::block_threads)
      if (smem[b]) atomicAdd(row_hist + b, smem[b]);
    __syncthreads();
  }
}

// One block a row: the pass's bucket from the row's global histogram, which it zeroes for the
// next pass. After the last pass the row's k-th value goes to out[r].
template <int Unused = 0>
__global__ void __launch_bounds__(RadixKthPolicy::block_threads)
kth_bucket_kernel(int pass, long long k, unsigned flip, KthRowState* state, unsigned* hist, float* out) {
  __shared__ KthShared shared;
  const long long r = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  unsigned* row_hist = hist + r * RadixKthPolicy::bins + t * kth_bins_per_thread;
  unsigned h[kth_bins_per_thread];
#pragma unroll
  for (int j = 0; j < kth_bins_per_thread; ++j) {
    h[j] = row_hist[j];
    row_hist[j] = 0u;
  }
  const KthRowState st = pass == 0 ? KthRowState{0u, static_cast<unsigned>(k)} : state[r];
  kth_find_bucket(h, st.need, shared);  // synchronises: every thread has read state[r]
  if (t == 0) {
    const unsigned prefix = (st.prefix << kth_digit_width(pass)) | shared.bucket;
    if (pass + 1 == RadixKthPolicy::passes) out[r] = RadixTraits<float>::from_ordered(prefix ^ flip);
    else state[r] = KthRowState{prefix, st.need - shared.below};
  }
}

}  // namespace knn::prim::detail
