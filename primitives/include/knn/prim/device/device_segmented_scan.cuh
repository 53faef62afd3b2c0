#pragma once
// Segmented scans: each segment is scanned on its own. Segments are given either by head flags
// (a segment starts where heads[i] != 0, and at i = 0) or by an offsets array (segment s is
// [offsets[s], offsets[s+1]), offsets non-decreasing; elements before offsets[0] or from
// offsets[num_segments] on are not written). Both run the single-pass scan over (head, value)
// pairs with the operator "restart at a head", which is associative.
// Temp-storage convention as in device_scan.cuh. in and out may be the same array.
#include <cstddef>
#include <cstdint>

#include "device_scan.cuh"

namespace knn::prim {

namespace detail {

template <typename V>
struct HeadValue {
  V value;
  unsigned head;
};

template <typename Op>
struct RestartAtHead {
  Op op;
  template <typename V>
  KNN_PRIM_HD HeadValue<V> operator()(const HeadValue<V>& a, const HeadValue<V>& b) const {
    return b.head ? b : HeadValue<V>{op(a.value, b.value), a.head};
  }
};

template <typename FlagIt>
struct FlagHeads {
  FlagIt heads;
  __device__ bool operator()(long long i) const { return heads[i] != 0; }
};

struct EverythingCovered {
  __device__ bool operator()(long long) const { return true; }
};

template <typename OffsetIt>
struct OffsetsCovered {
  OffsetIt offsets;
  long long num_segments;
  __device__ bool operator()(long long i) const {
    return i >= static_cast<long long>(offsets[0]) && i < static_cast<long long>(offsets[num_segments]);
  }
};

// For the exclusive form a head element carries op(init, x): the exclusive prefix of the
// element after it then starts from init.
template <typename V, typename InputIt, typename HeadFn, typename Op>
struct HeadValueLoad {
  InputIt in;
  HeadFn is_head;
  Op op;
  V init;
  bool exclusive;
  __device__ HeadValue<V> operator()(long long i) const {
    const V x = static_cast<V>(in[i]);
    const bool head = i == 0 || is_head(i);
    return {head && exclusive ? op(init, x) : x, head ? 1u : 0u};
  }
};

template <typename V, typename OutputIt, typename HeadFn, typename CoveredFn>
struct HeadValueStore {
  OutputIt out;
  HeadFn is_head;
  CoveredFn covered;
  V init;
  bool exclusive;
  __device__ void operator()(long long i, const HeadValue<V>& r) const {
    if (!covered(i)) return;
    out[i] = exclusive && (i == 0 || is_head(i)) ? init : r.value;
  }
};

template <typename V, typename InputIt, typename OutputIt, typename HeadFn, typename CoveredFn, typename Op>
Status segmented_scan_run(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, HeadFn head,
                          CoveredFn covered, Op op, V init, bool exclusive, std::int64_t n,
                          cudaStream_t stream) {
  using P = HeadValue<V>;
  const HeadValueLoad<V, InputIt, HeadFn, Op> load{in, head, op, init, exclusive};
  const HeadValueStore<V, OutputIt, HeadFn, CoveredFn> store{out, head, covered, init, exclusive};
  if (exclusive)
    return scan_dispatch<P, true>(temp, temp_bytes, load, store, RestartAtHead<Op>{op}, P{init, 0u}, n, stream);
  return scan_dispatch<P, false>(temp, temp_bytes, load, store, RestartAtHead<Op>{op}, P{init, 0u}, n, stream);
}

template <typename OffsetIt>
__global__ void mark_segment_heads_kernel(OffsetIt offsets, long long num_segments, long long n,
                                          unsigned char* flags) {
  const long long s = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s > num_segments) return;
  // The end of the last segment starts a run too, so nothing after the covered range leaks
  // into the last segment (those elements are scanned but never written).
  const long long at = static_cast<long long>(offsets[s]);
  if (at >= 0 && at < n) flags[at] = 1;
}

template <typename V, typename InputIt, typename OutputIt, typename OffsetIt, typename Op>
Status segmented_scan_by_offsets(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out,
                                 std::int64_t n, OffsetIt offsets, std::int64_t num_segments, Op op,
                                 V init, bool exclusive, cudaStream_t stream) {
  KNN_PRIM_EXPECTS(n >= 0 && num_segments >= 0, "segmented scan: negative size");
  using Heads = FlagHeads<const unsigned char*>;
  using Covered = OffsetsCovered<OffsetIt>;
  std::size_t scan_bytes = 0;
  KNN_PRIM_TRY((segmented_scan_run<V>(nullptr, scan_bytes, in, out, Heads{nullptr},
                                      Covered{offsets, num_segments}, op, init, exclusive, n, stream)));
  const TempPlan<2> plan{{static_cast<std::size_t>(n), scan_bytes}};
  KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan);
  if (n == 0 || num_segments == 0) return {};
  KNN_PRIM_EXPECTS(!is_null(in) && !is_null(out) && !is_null(offsets),
                   "segmented scan: null data pointer");
  unsigned char* flags = plan.get<unsigned char>(temp, 0);
  KNN_PRIM_CUDA_TRY(cudaMemsetAsync(flags, 0, static_cast<std::size_t>(n), stream));
  mark_segment_heads_kernel<<<static_cast<unsigned>(ceil_div<long long>(num_segments + 1, 256)), 256, 0, stream>>>(
      offsets, num_segments, n, flags);
  KNN_PRIM_LAUNCH_CHECK();
  return segmented_scan_run<V>(plan.get<void>(temp, 1), scan_bytes, in, out, Heads{flags},
                               Covered{offsets, num_segments}, op, init, exclusive, n, stream);
}

}  // namespace detail

// Inclusive scan restarted at every head: out[i] = op(in[s], ..., in[i]), s the last head <= i.
template <typename InputIt, typename FlagIt, typename OutputIt, typename Op>
Status inclusive_segmented_scan(void* temp, std::size_t& temp_bytes, InputIt in, FlagIt heads,
                                OutputIt out, Op op, std::int64_t n, cudaStream_t stream = 0) {
  using V = detail::value_of<InputIt>;
  if (temp != nullptr && n > 0)
    KNN_PRIM_EXPECTS(!detail::is_null(in) && !detail::is_null(heads) && !detail::is_null(out),
                     "segmented scan: null data pointer");
  return detail::segmented_scan_run<V>(temp, temp_bytes, in, out, detail::FlagHeads<FlagIt>{heads},
                                       detail::EverythingCovered{}, op, V{}, false, n, stream);
}

// Exclusive scan restarted at every head: out[i] = init at a head, else op(init, in[s], ..., in[i-1]).
template <typename InputIt, typename FlagIt, typename OutputIt, typename Op, typename T>
Status exclusive_segmented_scan(void* temp, std::size_t& temp_bytes, InputIt in, FlagIt heads,
                                OutputIt out, Op op, T init, std::int64_t n, cudaStream_t stream = 0) {
  if (temp != nullptr && n > 0)
    KNN_PRIM_EXPECTS(!detail::is_null(in) && !detail::is_null(heads) && !detail::is_null(out),
                     "segmented scan: null data pointer");
  return detail::segmented_scan_run<T>(temp, temp_bytes, in, out, detail::FlagHeads<FlagIt>{heads},
                                       detail::EverythingCovered{}, op, init, true, n, stream);
}

// Segment s = [offsets[s], offsets[s+1]) of arrays of n items; offsets live in device memory.
template <typename InputIt, typename OutputIt, typename OffsetIt, typename Op>
Status inclusive_segmented_scan_by_offsets(void* temp, std::size_t& temp_bytes, InputIt in,
                                           OutputIt out, std::int64_t n, OffsetIt offsets,
                                           std::int64_t num_segments, Op op, cudaStream_t stream = 0) {
  using V = detail::value_of<InputIt>;
  return detail::segmented_scan_by_offsets<V>(temp, temp_bytes, in, out, n, offsets, num_segments,
                                              op, V{}, false, stream);
}

template <typename InputIt, typename OutputIt, typename OffsetIt, typename Op, typename T>
Status exclusive_segmented_scan_by_offsets(void* temp, std::size_t& temp_bytes, InputIt in,
                                           OutputIt out, std::int64_t n, OffsetIt offsets,
                                           std::int64_t num_segments, Op op, T init,
                                           cudaStream_t stream = 0) {
  return detail::segmented_scan_by_offsets<T>(temp, temp_bytes, in, out, n, offsets, num_segments,
                                              op, init, true, stream);
}

}  // namespace knn::prim
