#pragma once
// Batched radix select: the k smallest of each row by the unique composite key
// (ordered value bits, column index), so that ties by value go to the smaller index and the
// k-th key is exact. Passes over a row narrow down the composite key of the k-th element
// 11 bits at a time: a histogram of the digit among the remaining candidates gives the bucket
// that holds it; elements in lower buckets are selected outright (written to the row's output
// buffer); the bucket's elements stay candidates. Once the bucket holds at most
// `candidate_capacity` elements they are all written too, and a segmented sort of each row's
// buffer (selected + candidates) puts the k smallest first.
//
// Long rows first try a single read: a sample of each row (64 evenly spread runs) gives a
// threshold tau, the j-th smallest sampled key with j chosen so that at least k of the row lie
// at or below tau with high probability and few more than that do; one pass appends every
// element at or below tau to the row's buffer. A row where that gathered fewer than k or more
// than the buffer holds (skewed or adversarial rows: all equal, sorted) goes through the radix
// passes above, which skip the rows already done.
#include <cmath>

#include "../block/block_scan.cuh"
#include "../operators.hpp"
#include "radix_traits.hpp"

// Kernels that need no template parameter still are templates (template <int Unused = 0>):
// a header-only library is included by many translation units of one program, and only
// templates (and inline functions) may be defined in each of them.
namespace knn::prim::detail {

struct RadixSelectPolicy {
  static constexpr int block_threads = 256;
  static constexpr int digit_bits = 11;
  static constexpr int bins = 1 << digit_bits;
  // Elements of a row per work item. The fused first pass reads a row a second time while it
  // is still in L2: it histograms rows l2_budget_bytes ahead of the row it filters, and the
  // work items in flight (about one per resident block) must span fewer rows than that.
  static constexpr int chunk_items = 8192;
  static constexpr long long l2_budget_bytes = 24ll << 20;
  static constexpr int candidate_capacity = 4096;
  static constexpr int max_blocks = 2048;
  // Sampled threshold: runs of sample_run_items (a multiple of 32, at most 256) per row, read
  // by one block of sample_threads, each holding up to sample_per_thread keys in registers.
  static constexpr int sample_runs = 64;
  static constexpr int sample_threads = 512;
  static constexpr int sample_per_thread = sample_runs * 256 / sample_threads;
  static constexpr long long sampled_min_cols = 32768;
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

template <int Unused = 0>
__global__ void select_init_kernel(RowState* state, long long rows, long long k) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) state[r] = RowState{0ull, k, 0ull, row_active, 0};
}

struct SelectArgs {
  const float* in;
  long long rows, cols;
  unsigned flip;
  SelectDigits digits;
  RowState* state;
  unsigned long long* buffers;  // row r's selected elements and candidates at r * buffer_stride
  long long buffer_stride;
  long long chunks_per_row;
  // Set when the sampled threshold ran: the number of rows it left to the radix passes, which
  // then skip the rows already done (and do nothing at all when it is 0).
  const unsigned* rows_left = nullptr;
};

// Whether the radix passes have anything to do (read once per block).
KNN_PRIM_DEVICE bool radix_passes_needed(const SelectArgs& a) {
  return a.rows_left == nullptr || __ldcg(a.rows_left) != 0u;
}

// State written by other blocks of the same kernel: read from L2, never from a stale L1 line.
KNN_PRIM_DEVICE RowState load_state(const RowState* p) {
  RowState s;
  s.prefix = __ldcg(&p->prefix);
  s.need = __ldcg(&p->need);
  s.count = 0;
  s.phase = __ldcg(&p->phase);
  s.pad = 0;
  return s;
}

// One chunk of one row, by the whole block. filter_pass < 0: histogram of digit 0 of every
// element. filter_pass = p >= 0 (pass p's bucket is in st.prefix): elements below the bucket are
// written to the row's buffer, and so are the bucket's when collecting; otherwise digit p+1 of
// the bucket's elements goes into hist_row. smem_hist: bins words of shared memory.
inline __device__ void select_chunk(const SelectArgs& a, long long row, long long chunk, int filter_pass,
                             const RowState& st, unsigned* smem_hist, unsigned* hist_row) {
  using P = RadixSelectPolicy;
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t & 31;
  const long long chunk_begin = chunk * P::chunk_items;
  const long long chunk_end = chunk_begin + P::chunk_items < a.cols ? chunk_begin + P::chunk_items : a.cols;
  const SelectDigits digits = a.digits;
  const int next = filter_pass + 1;
  const bool collecting = st.phase == row_collecting;
  const bool histogram = next < digits.passes() && !collecting;
  if (histogram) {
    for (int b = t; b < P::bins; b += P::block_threads) smem_hist[b] = 0;
    __syncthreads();
  }
  int cand_shift = 0, new_shift = 0;
  unsigned long long cand_prefix = 0;
  if (filter_pass >= 0) {
    cand_shift = digits.shift(filter_pass) + digits.width(filter_pass);
    new_shift = digits.shift(filter_pass);
    cand_prefix = st.prefix >> digits.width(filter_pass);
  }
  const int next_shift = histogram ? digits.shift(next) : 0;
  const unsigned long long next_mask = histogram ? (1ull << digits.width(next)) - 1 : 0;
  const float* row_in = a.in + row * a.cols;
  unsigned long long* row_buffer = a.buffers + row * a.buffer_stride;
  // Every thread runs the same number of rounds so that the warp-aggregated writes see full
  // warps; `unroll` loads per thread are in flight before any is used.
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
        key = composite_key(v[u], i, a.flip, digits.index_bits);
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
            atomicAdd(&smem_hist[static_cast<unsigned>((key >> next_shift) & next_mask)], 1u);
        }
      }
      const unsigned writers = __ballot_sync(0xffffffffu, write);
      if (writers) {
        const int leader = __ffs(writers) - 1;
        unsigned long long slot = 0;
        if (lane == leader)
          slot = atomicAdd(&a.state[row].count, static_cast<unsigned long long>(__popc(writers)));
        slot = __shfl_sync(0xffffffffu, slot, leader);
        if (write) row_buffer[slot + __popc(writers & ((1u << lane) - 1u))] = key;
      }
    }
  }
  if (histogram) {
    __syncthreads();
    for (int b = t; b < P::bins; b += P::block_threads)
      if (smem_hist[b]) atomicAdd(hist_row + b, smem_hist[b]);
    __syncthreads();
  }
}

// Pass p's bucket for one row from its histogram of digit p (by the whole block); zeroes the
// row's other histogram for the pass after (active rows only: nothing else reads it). Rows not
// active become done.
using SelectScan = BlockScan<unsigned long long, RadixSelectPolicy::block_threads, 1>;
inline __device__ void select_bucket(SelectDigits digits, int pass, RowState* st_ptr, const unsigned* hist_row,
                              unsigned* other_row, typename SelectScan::TempStorage& scan) {
  using P = RadixSelectPolicy;
  constexpr int per_thread = P::bins / P::block_threads;
  const int t = static_cast<int>(threadIdx.x);
  const RowState st = load_state(st_ptr);
  if (st.phase != row_active) {
    __syncthreads();
    if (t == 0) st_ptr->phase = row_done;
    return;
  }
  for (int b = t; b < P::bins; b += P::block_threads) other_row[b] = 0;
  unsigned h[per_thread];
  unsigned long long sum[1] = {0}, before[1];
#pragma unroll
  for (int j = 0; j < per_thread; ++j) {
    h[j] = __ldcg(hist_row + t * per_thread + j);
    sum[0] += h[j];
  }
  SelectScan(scan).exclusive_scan(sum, before, 0ull, Sum{});
  const long long need = st.need;
  if (static_cast<long long>(before[0]) < need && need <= static_cast<long long>(before[0] + sum[0])) {
    // Unrolled search, so that h stays in registers.
    unsigned long long below = before[0];
    int b = -1;
    unsigned in_bucket = 0;
#pragma unroll
    for (int j = 0; j < per_thread; ++j) {
      if (b < 0) {
        if (below + h[j] >= static_cast<unsigned long long>(need)) {
          b = j;
          in_bucket = h[j];
        } else {
          below += h[j];
        }
      }
    }
    const int bucket = t * per_thread + b;
    st_ptr->prefix = (st.prefix << digits.width(pass)) | static_cast<unsigned long long>(bucket);
    st_ptr->need = need - static_cast<long long>(below);
    const bool last = pass + 1 == digits.passes();
    st_ptr->phase = (in_bucket <= static_cast<unsigned>(P::candidate_capacity) || last) ? row_collecting : row_active;
  }
}

// Pass p >= 1 over all rows: grid-stride over (row, chunk), done rows skipped.
template <int Unused = 0>
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads)
select_pass_kernel(SelectArgs a, int filter_pass, unsigned* hist_next) {
  using P = RadixSelectPolicy;
  __shared__ unsigned hist[P::bins];
  if (!radix_passes_needed(a)) return;
  const long long items = a.rows * a.chunks_per_row;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long row = item / a.chunks_per_row;
    const RowState st = load_state(a.state + row);
    if (st.phase == row_done) continue;
    select_chunk(a, row, item % a.chunks_per_row, filter_pass, st, hist, hist_next + row * P::bins);
  }
}

template <int Unused = 0>
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads)
select_bucket_kernel(SelectDigits digits, int pass, RowState* state, const unsigned* hist,
                     unsigned* hist_other, const unsigned* rows_left) {
  using P = RadixSelectPolicy;
  __shared__ typename SelectScan::TempStorage scan;
  if (rows_left != nullptr && __ldcg(rows_left) == 0u) return;
  const long long row = blockIdx.x;
  select_bucket(digits, pass, state + row, hist + row * P::bins, hist_other + row * P::bins, scan);
}

struct FusedSync {
  unsigned long long* ticket;  // next work item
  unsigned* arrivals;  // [rows] histogram chunks finished
  unsigned* ready;     // [rows] 1 once pass 0's bucket is known
  long long lookahead; // rows histogrammed ahead of the row being filtered
};

// Histogram of digit 0, pass 0's bucket and pass 0's filter in one kernel. Work items are
// taken in ticket order: the histogram chunks of row s, then the filter chunks of row
// s - lookahead, so a row is read a second time while it is still in L2. The last histogram
// chunk of a row finds its bucket; filter chunks wait for that. A filter item only waits on
// items with smaller tickets, all taken by running blocks that never wait: no deadlock.
template <int Unused = 0>
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads)
select_first_pass_kernel(SelectArgs a, unsigned* hist0, unsigned* hist1, FusedSync sync) {
  using P = RadixSelectPolicy;
  __shared__ unsigned hist[P::bins];
  __shared__ typename SelectScan::TempStorage scan;
  __shared__ unsigned long long ticket_shared;
  __shared__ int last_shared;
  const int t = static_cast<int>(threadIdx.x);
  const long long C = a.chunks_per_row;
  const unsigned long long total = static_cast<unsigned long long>(a.rows + sync.lookahead) * 2 * C;
  if (!radix_passes_needed(a)) return;
  for (;;) {
    if (t == 0) ticket_shared = atomicAdd(sync.ticket, 1ull);
    __syncthreads();
    const unsigned long long ticket = ticket_shared;
    __syncthreads();
    if (ticket >= total) return;
    const long long step = static_cast<long long>(ticket / (2 * C));
    const long long within = static_cast<long long>(ticket % (2 * C));
    if (within < C) {
      const long long row = step;
      if (row >= a.rows) continue;
      // Rows the sampled threshold finished: their `ready` flag is already set.
      if (a.rows_left != nullptr && load_state(a.state + row).phase == row_done) continue;
      RowState st{};
      st.phase = row_active;
      select_chunk(a, row, within, -1, st, hist, hist0 + row * P::bins);
      __threadfence();  // this block's histogram counts before its arrival
      __syncthreads();
      if (t == 0) last_shared = atomicAdd(sync.arrivals + row, 1u) == C - 1;
      __syncthreads();
      if (last_shared) {
        __threadfence();
        select_bucket(a.digits, 0, a.state + row, hist0 + row * P::bins, hist1 + row * P::bins, scan);
        __threadfence();
        __syncthreads();
        if (t == 0) *reinterpret_cast<volatile unsigned*>(sync.ready + row) = 1u;
      }
    } else {
      const long long row = step - sync.lookahead;
      if (row < 0) continue;
      if (t == 0)
        while (*reinterpret_cast<volatile unsigned*>(sync.ready + row) == 0u) __nanosleep(100);
      __syncthreads();
      __threadfence();
      const RowState st = load_state(a.state + row);
      if (st.phase != row_done)
        select_chunk(a, row, within - C, 0, st, hist, hist1 + row * P::bins);
    }
  }
}

// ---- Sampled threshold ----

// The shape of each row's sample and the rank in it that gives the threshold.
struct SampleShape {
  int run_items = 0;  // 0: no sampling
  long long rank = 0; // 1-based rank of the threshold among the sampled keys
};

// Sampling pays for long rows only, and only while the elements at or below the threshold
// (about rank * cols / samples of them) fit well inside a row's buffer of `stride` places.
inline SampleShape sample_shape(long long cols, long long k, long long stride) {
  using P = RadixSelectPolicy;
  SampleShape s;
  if (cols < P::sampled_min_cols) return s;
  long long run = cols / (16 * P::sample_runs) / 32 * 32;  // the sample is at most 1/16 of a row
  if (run > 256) run = 256;
  const long long samples = run * P::sample_runs;
  // The sampled keys below the row's k-th are Binomial(samples, k / cols) with mean m: rank
  // m + 4 sqrt(m) + 3 lies above their count unless the count is more than four standard
  // deviations (and 3) above its mean.
  const double m = static_cast<double>(k) * static_cast<double>(samples) / static_cast<double>(cols);
  long long rank = static_cast<long long>(m + 4.0 * std::sqrt(m) + 3.0) + 1;
  if (rank > samples) return s;
  const double expected = static_cast<double>(rank) * static_cast<double>(cols) / static_cast<double>(samples);
  if (expected > 0.5 * static_cast<double>(stride)) return s;
  s.run_items = static_cast<int>(run);
  s.rank = rank;
  return s;
}

// One block a row: the rank-th smallest ordered value among the row's sampled elements, found
// with three histogram rounds (11, 11 and 10 bits) over keys held in registers; it goes to
// state[row].prefix.
template <int Unused = 0>
__global__ void __launch_bounds__(RadixSelectPolicy::sample_threads)
select_sample_kernel(const float* in, long long cols, unsigned flip, SampleShape shape, RowState* state) {
  using P = RadixSelectPolicy;
  constexpr int threads = P::sample_threads, per = P::sample_per_thread, bins = P::bins;
  constexpr int bins_per_thread = bins / threads;
  using Scan = BlockScan<unsigned, threads, 1>;
  __shared__ unsigned hist[bins];
  __shared__ typename Scan::TempStorage scan;
  __shared__ unsigned found_bucket, found_below;
  const int t = static_cast<int>(threadIdx.x);
  const long long row = blockIdx.x;
  const float* row_in = in + row * cols;
  const int samples = shape.run_items * P::sample_runs;
  const long long spacing = (cols - shape.run_items) / (P::sample_runs - 1);
  unsigned key[per];
#pragma unroll
  for (int i = 0; i < per; ++i) {
    const int s = i * threads + t;
    key[i] = 0u;
    if (s < samples) {
      const long long pos = (s / shape.run_items) * spacing + s % shape.run_items;
      key[i] = RadixTraits<float>::to_ordered(row_in[pos]) ^ flip;
    }
  }
  unsigned prefix = 0u, need = static_cast<unsigned>(shape.rank);
  constexpr int widths[3] = {11, 11, 10}, shifts[3] = {21, 10, 0};
#pragma unroll
  for (int round = 0; round < 3; ++round) {
    for (int b = t; b < bins; b += threads) hist[b] = 0u;
    __syncthreads();
    const unsigned mask = (1u << widths[round]) - 1u;
#pragma unroll
    for (int i = 0; i < per; ++i) {
      const int s = i * threads + t;
      const bool match = s < samples && (round == 0 || (key[i] >> (shifts[round] + widths[round])) == prefix);
      if (match) atomicAdd(&hist[(key[i] >> shifts[round]) & mask], 1u);
    }
    __syncthreads();
    unsigned h[bins_per_thread];
    unsigned sum[1] = {0u}, before[1];
#pragma unroll
    for (int j = 0; j < bins_per_thread; ++j) {
      h[j] = hist[t * bins_per_thread + j];
      sum[0] += h[j];
    }
    Scan(scan).exclusive_scan(sum, before, 0u, Sum{});
    if (before[0] < need && need <= before[0] + sum[0]) {
      unsigned below = before[0];
      int b = -1;
#pragma unroll
      for (int j = 0; j < bins_per_thread; ++j) {
        if (b < 0) {
          if (below + h[j] >= need) b = j;
          else below += h[j];
        }
      }
      found_bucket = static_cast<unsigned>(t * bins_per_thread + b);
      found_below = below;
    }
    __syncthreads();
    prefix = (prefix << widths[round]) | found_bucket;
    need -= found_below;
    __syncthreads();
  }
  if (t == 0) state[row].prefix = prefix;
}

// "ordered(v) ^ flip <= tau" as float comparisons: lo <= v <= hi, or v is NaN when nan_taken.
struct FloatThreshold {
  float lo, hi;
  bool nan_taken;
  KNN_PRIM_DEVICE bool take(float v) const { return (lo <= v && v <= hi) || (nan_taken && v != v); }
};

// The ordered float order puts -0.0 with +0.0 and NaN above +inf; tau is the ordered key of a
// sampled element, so the float it stands for exists.
KNN_PRIM_DEVICE FloatThreshold float_threshold(unsigned tau, unsigned flip) {
  const float inf = __int_as_float(0x7f800000);
  const unsigned o = tau ^ flip;  // the threshold's own ordered key
  const float value = RadixTraits<float>::from_ordered(o);
  if (flip == 0u)  // smallest: ordered(v) <= o
    return o == ~0u ? FloatThreshold{-inf, inf, true} : FloatThreshold{-inf, value, false};
  // largest: ordered(v) >= o; NaN (ordered ~0) always
  return o == ~0u ? FloatThreshold{inf, -inf, true} : FloatThreshold{value, inf, true};
}

// How the threshold pass reads: Unroll float4 loads per thread in flight, and the resident
// blocks per SM asked of the compiler (which caps its registers).
// Measured on an H200 (bench_primitives --tune-select, 1,024 x 2^20 floats): 4 x 8 reads
// at 84% of the copy rate for k = 10, against 68% for 8 x 4 (more registers, fewer warps).
template <int Unroll = 4, int MinBlocks = 8>
struct ThresholdTuning {
  static constexpr int unroll = Unroll;
  static constexpr int min_blocks = MinBlocks;
};

// Appends the elements a warp found, `hits` bits per thread (bit b of thread t stands for
// element index_of(b)), with one counter update per warp: a warp scan of the hit counts gives
// each thread its places.
template <typename IndexOf, typename ValueOf>
KNN_PRIM_DEVICE void append_hits(unsigned hits, IndexOf index_of, ValueOf value_of, unsigned long long* count,
                                 unsigned long long* row_buffer, long long capacity, unsigned flip,
                                 int index_bits) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const unsigned mine = __popc(hits);
  unsigned before = mine;  // inclusive warp scan, then exclusive
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned other = __shfl_up_sync(0xffffffffu, before, d);
    if (lane >= d) before += other;
  }
  const unsigned total = __shfl_sync(0xffffffffu, before, 31);
  before -= mine;
  unsigned long long base = 0;
  if (lane == 31) base = atomicAdd(count, static_cast<unsigned long long>(total));
  base = __shfl_sync(0xffffffffu, base, 31) + before;
  while (hits) {
    const int b = __ffs(hits) - 1;
    hits &= hits - 1u;
    if (base < static_cast<unsigned long long>(capacity))
      row_buffer[base] = composite_key(value_of(b), index_of(b), flip, index_bits);
    ++base;
  }
}

// Appends every element of a row whose ordered value is at most the row's threshold
// (state[row].prefix) to the row's buffer, counting them all in state[row].count (places past
// the buffer's end are counted, not written). Grid-stride over (row, chunk) work items.
template <typename Tuning = ThresholdTuning<>>
__global__ void __launch_bounds__(RadixSelectPolicy::block_threads, Tuning::min_blocks)
select_threshold_kernel(SelectArgs a, bool vector_loads) {
  using P = RadixSelectPolicy;
  constexpr int unroll = Tuning::unroll;
  static_assert(unroll * 4 <= 32, "one hit bit per element of a round");
  const int t = static_cast<int>(threadIdx.x);
  const long long items = a.rows * a.chunks_per_row;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long row = item / a.chunks_per_row;
    const long long chunk_begin = (item % a.chunks_per_row) * P::chunk_items;
    const long long chunk_end = chunk_begin + P::chunk_items < a.cols ? chunk_begin + P::chunk_items : a.cols;
    const FloatThreshold th = float_threshold(static_cast<unsigned>(a.state[row].prefix), a.flip);
    const float* row_in = a.in + row * a.cols;
    unsigned long long* row_buffer = a.buffers + row * a.buffer_stride;
    unsigned long long* count = &a.state[row].count;
    if (vector_loads) {
      // Rows start on 16-byte boundaries and chunks hold whole float4s (cols % 4 == 0).
      const float4* row4 = reinterpret_cast<const float4*>(row_in);
      const long long b4 = chunk_begin / 4, e4 = chunk_end / 4;
      for (long long base = b4; base < e4; base += P::block_threads * unroll) {
        float4 v[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
          const long long j = base + u * P::block_threads + t;
          v[u] = j < e4 ? __ldcs(row4 + j) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        unsigned hits = 0u;
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
          const bool in = base + u * P::block_threads + t < e4;
          hits |= static_cast<unsigned>(in && th.take(v[u].x)) << (4 * u);
          hits |= static_cast<unsigned>(in && th.take(v[u].y)) << (4 * u + 1);
          hits |= static_cast<unsigned>(in && th.take(v[u].z)) << (4 * u + 2);
          hits |= static_cast<unsigned>(in && th.take(v[u].w)) << (4 * u + 3);
        }
        if (!__any_sync(0xffffffffu, hits != 0u)) continue;
        // Rare: reload the hit's value rather than keep the round's registers live.
        append_hits(
            hits, [&](int b) { return 4 * (base + (b >> 2) * P::block_threads + t) + (b & 3); },
            [&](int b) { return row_in[4 * (base + (b >> 2) * P::block_threads + t) + (b & 3)]; }, count,
            row_buffer, a.buffer_stride, a.flip, a.digits.index_bits);
      }
    } else {
      constexpr int scalar_unroll = 4 * unroll;
      for (long long base = chunk_begin; base < chunk_end; base += P::block_threads * scalar_unroll) {
        float v[scalar_unroll];
#pragma unroll
        for (int u = 0; u < scalar_unroll; ++u) {
          const long long i = base + u * P::block_threads + t;
          v[u] = i < chunk_end ? __ldcs(row_in + i) : 0.f;
        }
        unsigned hits = 0u;
#pragma unroll
        for (int u = 0; u < scalar_unroll; ++u)
          hits |= static_cast<unsigned>(base + u * P::block_threads + t < chunk_end && th.take(v[u])) << u;
        if (!__any_sync(0xffffffffu, hits != 0u)) continue;
        append_hits(
            hits, [&](int b) { return base + b * P::block_threads + t; },
            [&](int b) { return row_in[base + b * P::block_threads + t]; }, count, row_buffer, a.buffer_stride,
            a.flip, a.digits.index_bits);
      }
    }
  }
}

// Rows whose threshold gathered between k and `stride` elements are done; the others start the
// radix passes afresh and are counted in rows_left. Every row's `ready` flag for the fused first
// pass is set for done rows here.
template <int Unused = 0>
__global__ void select_threshold_check_kernel(RowState* state, long long rows, long long k, long long stride,
                                              unsigned* ready, unsigned* rows_left) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const unsigned long long count = state[r].count;
  if (count >= static_cast<unsigned long long>(k) && count <= static_cast<unsigned long long>(stride)) {
    state[r].phase = row_done;
    ready[r] = 1u;
  } else {
    state[r] = RowState{0ull, k, 0ull, row_active, 0};
    atomicAdd(rows_left, 1u);
  }
}

// The k first keys of each sorted row buffer, as values (read back from the input, so -0.0
// and NaN payloads survive) and column indices.
template <int Unused = 0>
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
