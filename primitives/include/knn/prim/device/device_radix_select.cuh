#pragma once
// Batched k-selection: for each row of a row-major rows x cols float matrix, the k smallest
// (or largest) values and their column indices, ties broken by the smaller index, output
// sorted by (value, index): ascending values for smallest, descending for largest, indices
// ascending among equal values. Any k from 1 to cols. Order of floats as in the radix sort:
// -0.0 equals +0.0; NaN is larger than +inf (last for smallest, first for largest). The values
// written are the input's own bits.
//
// out_values is rows x k floats, out_indices rows x k int32 (either may be null); cols < 2^31.
// Temp-storage convention as in device_scan.cuh; temp grows with rows * (k + 4096) * 24 bytes,
// so for very large k process the rows in batches.
//
// radix_select_kth: only the k-th smallest (or largest) value of each row, in the same float
// order, for any k from 1 to cols. Nothing is gathered or sorted: three digit passes over each
// row, so it needs no temp storage with 1,024 rows or more, and rows * 8 KiB below that. The
// input is a dense matrix, or any `rows` whose row(r) (a device function) returns an accessor
// with float operator()(long long c): values computed on the fly (CUB's iterator idea). The value
// written stands for the k-th element's key: +0.0 for a zero of either sign, a quiet NaN
// (0x7fffffff) for NaN.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../detail/radix_kth_kernels.cuh"
#include "../detail/radix_select_kernels.cuh"
#include "../detail/temp_storage.hpp"
#include "../status.hpp"
#include "device_segmented_sort.cuh"

namespace knn::prim {

namespace detail {

// radix_select_k with the threshold pass's tuning as a parameter (for the benchmark).
template <typename Tuning = ThresholdTuning<>>
Status radix_select_dispatch(void* temp, std::size_t& temp_bytes, const float* in, std::int64_t rows,
                             std::int64_t cols, std::int64_t k, float* out_values, std::int32_t* out_indices,
                             bool largest, cudaStream_t stream) {
  using P = RadixSelectPolicy;
  KNN_PRIM_EXPECTS(rows >= 0 && cols >= 0, "radix_select_k: negative matrix size");
  KNN_PRIM_EXPECTS(cols < (1ll << 31), "radix_select_k: rows longer than 2^31 - 1");
  KNN_PRIM_EXPECTS(rows == 0 || (k >= 1 && k <= cols), "radix_select_k: k must be in [1, cols]");
  KNN_PRIM_EXPECTS(rows < (1ll << 31), "radix_select_k: at most 2^31 - 1 rows");
  int index_bits = 0;
  while (index_bits < 31 && (1ll << index_bits) < cols) ++index_bits;
  const SelectDigits digits{32 + index_bits, index_bits};
  const long long stride = k + P::candidate_capacity;
  const std::size_t buffer_items = static_cast<std::size_t>(rows) * static_cast<std::size_t>(stride);
  std::size_t sort_bytes = 0;
  const SelectBufferSegments segments{nullptr, stride};
  KNN_PRIM_TRY((segmented_sort_dispatch<unsigned long long, NoSegmentValue, false>(
      nullptr, sort_bytes, nullptr, nullptr, nullptr, nullptr, static_cast<std::int64_t>(buffer_items),
      rows, segments, false, 0, digits.key_bits, stream)));
  // ticket (2 words), arrivals[rows], ready[rows], rows left by the sampled threshold.
  const std::size_t sync_words = 2 + 2 * static_cast<std::size_t>(rows) + 1;
  const TempPlan<5> plan{{sizeof(RowState) * static_cast<std::size_t>(rows),
                          2 * sizeof(unsigned) * P::bins * static_cast<std::size_t>(rows) + sizeof(unsigned) * sync_words,
                          sizeof(unsigned long long) * buffer_items,
                          sizeof(unsigned long long) * buffer_items, sort_bytes}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (rows == 0 || cols == 0) return {};
  KNN_PRIM_EXPECTS(in != nullptr, "radix_select_k: null input pointer");
  auto* state = plan.get<RowState>(temp, 0);
  auto* hist = plan.get<unsigned>(temp, 1);
  const long long hist_words = static_cast<long long>(P::bins) * rows;
  // Ticket (8 bytes), then arrivals[rows], ready[rows]; zeroed with both histograms.
  auto* sync_base = hist + 2 * hist_words;
  long long lookahead = P::l2_budget_bytes / (cols * 4);
  if (lookahead > rows) lookahead = rows;
  if (lookahead < 2) lookahead = 2;
  const FusedSync sync{reinterpret_cast<unsigned long long*>(sync_base), sync_base + 2, sync_base + 2 + rows,
                       lookahead};
  const SampleShape sampled = sample_shape(cols, k, stride);
  unsigned* rows_left = sync_base + 2 + 2 * rows;
  const SelectArgs args{in, rows, cols, largest ? ~0u : 0u, digits, state,
                        plan.get<unsigned long long>(temp, 2), stride,
                        ceil_div<long long>(cols, P::chunk_items),
                        sampled.run_items ? rows_left : nullptr};
  auto* sorted = plan.get<unsigned long long>(temp, 3);

  select_init_kernel<<<static_cast<unsigned>(ceil_div<long long>(rows, 256)), 256, 0, stream>>>(state, rows, k);
  KNN_PRIM_LAUNCH_CHECK();
  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(hist, 0, sizeof(unsigned) * (2 * hist_words + sync_words), stream));
  // Persistent blocks for the fused first pass: as many as fit on the GPU at once.
  int device = 0, sms = 0, per_sm = 0;
  KNN_PRIM_CUDA_TRY(cudaGetDevice(&device));
  KNN_PRIM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  KNN_PRIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, select_first_pass_kernel<>,
                                                                  P::block_threads, 0));
  const long long items = rows * args.chunks_per_row;
  const long long resident = static_cast<long long>(sms) * (per_sm > 0 ? per_sm : 1);
  if (sampled.run_items) {
    // One read of each row gathers what lies at or below its sampled threshold; the radix
    // passes below then only see the rows where that missed (and return at once if none did).
    select_sample_kernel<<<static_cast<unsigned>(rows), P::sample_threads, 0, stream>>>(
        in, cols, args.flip, sampled, state);
    KNN_PRIM_LAUNCH_CHECK();
    const bool vector_loads = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
    int per_sm_threshold = 0;
    KNN_PRIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_threshold, select_threshold_kernel<Tuning>,
                                                                    P::block_threads, 0));
    const long long threshold_grid = static_cast<long long>(sms) * (per_sm_threshold > 0 ? per_sm_threshold : 1);
    select_threshold_kernel<Tuning><<<static_cast<unsigned>(threshold_grid < items ? threshold_grid : items),
                              P::block_threads, 0, stream>>>(args, vector_loads);
    KNN_PRIM_LAUNCH_CHECK();
    select_threshold_check_kernel<<<static_cast<unsigned>(ceil_div<long long>(rows, 256)), 256, 0, stream>>>(
        state, rows, k, stride, sync.ready, rows_left);
    KNN_PRIM_LAUNCH_CHECK();
  }
  select_first_pass_kernel<<<static_cast<unsigned>(resident < 2 * items ? resident : 2 * items),
                             P::block_threads, 0, stream>>>(args, hist, hist + hist_words, sync);
  KNN_PRIM_LAUNCH_CHECK();
  // Further passes only for rows whose bucket still held too many candidates.
  const unsigned grid = static_cast<unsigned>(items < P::max_blocks ? items : P::max_blocks);
  for (int p = 1; p < digits.passes(); ++p) {
    unsigned* current = hist + (p % 2) * hist_words;
    unsigned* other = hist + ((p + 1) % 2) * hist_words;
    select_bucket_kernel<<<static_cast<unsigned>(rows), P::block_threads, 0, stream>>>(digits, p, state, current, other,
                                                                                      args.rows_left);
    KNN_PRIM_LAUNCH_CHECK();
    select_pass_kernel<<<grid, P::block_threads, 0, stream>>>(args, p, other);
    KNN_PRIM_LAUNCH_CHECK();
  }
  // Each row's buffer holds its selected elements and the last candidates: sort, keep k.
  KNN_PRIM_TRY((segmented_sort_dispatch<unsigned long long, NoSegmentValue, false>(
      plan.get<void>(temp, 4), sort_bytes, args.buffers, sorted, static_cast<const NoSegmentValue*>(nullptr),
      static_cast<NoSegmentValue*>(nullptr), static_cast<std::int64_t>(buffer_items), rows,
      SelectBufferSegments{state, stride}, false, 0, digits.key_bits, stream)));
  const long long total = rows * k;
  const long long blocks = ceil_div<long long>(total, 256);
  select_unpack_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      in, rows, cols, k, index_bits, sorted, stride, out_values, out_indices);
  KNN_PRIM_LAUNCH_CHECK();
  return {};
}

// radix_select_kth over any rows; `path` forces one way of running the passes (for the tests).
template <typename Rows>
Status radix_kth_dispatch(void* temp, std::size_t& temp_bytes, Rows rows, std::int64_t row_count, std::int64_t cols,
                          std::int64_t k, float* out_kth, bool largest, cudaStream_t stream,
                          KthPath path = KthPath::automatic) {
  using P = RadixKthPolicy;
  KNN_PRIM_EXPECTS(row_count >= 0 && cols >= 0, "radix_select_kth: negative matrix size");
  KNN_PRIM_EXPECTS(cols < (1ll << 31), "radix_select_kth: rows longer than 2^31 - 1");
  KNN_PRIM_EXPECTS(row_count < (1ll << 31), "radix_select_kth: at most 2^31 - 1 rows");
  KNN_PRIM_EXPECTS(row_count == 0 || (k >= 1 && k <= cols), "radix_select_kth: k must be in [1, cols]");
  const bool split = path == KthPath::split_rows || (path == KthPath::automatic && row_count < P::row_blocks_min_rows);
  const std::size_t n_rows = static_cast<std::size_t>(row_count);
  const TempPlan<2> plan{{split ? sizeof(unsigned) * P::bins * n_rows : 0, split ? sizeof(KthRowState) * n_rows : 0}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (row_count == 0) return {};
  KNN_PRIM_EXPECTS(out_kth != nullptr, "radix_select_kth: null output pointer");
  const unsigned flip = largest ? ~0u : 0u;
  if (!split) {
    kth_row_kernel<Rows><<<static_cast<unsigned>(row_count), P::block_threads, 0, stream>>>(rows, cols, k, flip, out_kth);
    KNN_PRIM_LAUNCH_CHECK();
    return {};
  }
  auto* hist = plan.get<unsigned>(temp, 0);
  auto* state = plan.get<KthRowState>(temp, 1);
  int device = 0, sms = 0;
  KNN_PRIM_CUDA_TRY(cudaGetDevice(&device));
  KNN_PRIM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Enough chunks for about split_blocks_per_sm work items per SM, none shorter than min_chunk_items.
  const long long target = static_cast<long long>(sms > 0 ? sms : 1) * P::split_blocks_per_sm;
  long long chunks = ceil_div<long long>(target, row_count);
  const long long most = ceil_div<long long>(cols, P::min_chunk_items);
  if (chunks > most) chunks = most;
  if (chunks < 1) chunks = 1;
  const long long chunk_items = ceil_div<long long>(cols, chunks);
  chunks = ceil_div<long long>(cols, chunk_items);
  const long long items = row_count * chunks;
  const unsigned grid = static_cast<unsigned>(items < target ? items : target);
  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(hist, 0, sizeof(unsigned) * P::bins * n_rows, stream));
  for (int pass = 0; pass < P::passes; ++pass) {
    kth_chunk_kernel<Rows><<<grid, P::block_threads, 0, stream>>>(rows, row_count, cols, chunk_items, chunks, pass, flip,
                                                                  state, hist);
    KNN_PRIM_LAUNCH_CHECK();
    kth_bucket_kernel<<<static_cast<unsigned>(row_count), P::block_threads, 0, stream>>>(pass, k, flip, state, hist,
                                                                                         out_kth);
    KNN_PRIM_LAUNCH_CHECK();
  }
  return {};
}

}  // namespace detail

// The k-th smallest (largest) value of each row of a dense rows x cols matrix: out_kth[r].
inline Status radix_select_kth(void* temp, std::size_t& temp_bytes, const float* in, std::int64_t rows,
                               std::int64_t cols, std::int64_t k, float* out_kth, bool largest = false,
                               cudaStream_t stream = 0) {
  KNN_PRIM_EXPECTS(temp == nullptr || rows <= 0 || cols <= 0 || in != nullptr, "radix_select_kth: null input pointer");
  return detail::radix_kth_dispatch(temp, temp_bytes, detail::MatrixRows{in, cols}, rows, cols, k, out_kth, largest,
                                    stream);
}

// The same over values computed on the fly: rows.row(r)(c) is element (r, c).
template <typename Rows, typename = decltype(std::declval<const Rows&>().row(0ll))>
Status radix_select_kth(void* temp, std::size_t& temp_bytes, Rows rows, std::int64_t row_count, std::int64_t cols,
                        std::int64_t k, float* out_kth, bool largest = false, cudaStream_t stream = 0) {
  return detail::radix_kth_dispatch(temp, temp_bytes, rows, row_count, cols, k, out_kth, largest, stream);
}

inline Status radix_select_k(void* temp, std::size_t& temp_bytes, const float* in, std::int64_t rows,
                             std::int64_t cols, std::int64_t k, float* out_values,
                             std::int32_t* out_indices, bool largest = false,
                             cudaStream_t stream = 0) {
  return detail::radix_select_dispatch<>(temp, temp_bytes, in, rows, cols, k, out_values, out_indices, largest,
                                         stream);
}

}  // namespace knn::prim
