#pragma once
// Sequential host versions of the scans, plain and segmented, for tests.
#include <cstdint>

namespace knn::prim::reference {

// out[i] = op(in[0], ..., in[i]). out may equal in.
template <typename T, typename Op>
void inclusive_scan(const T* in, T* out, std::int64_t n, Op op) {
  if (n <= 0) return;
  T acc = in[0];
  out[0] = acc;
  for (std::int64_t i = 1; i < n; ++i) {
    acc = op(acc, in[i]);
    out[i] = acc;
  }
}

// out[0] = init, out[i] = op(init, in[0], ..., in[i-1]). out may equal in.
template <typename T, typename Op>
void exclusive_scan(const T* in, T* out, std::int64_t n, T init, Op op) {
  T acc = init;
  for (std::int64_t i = 0; i < n; ++i) {
    const T item = in[i];
    out[i] = acc;
    acc = op(acc, item);
  }
}

// Segments start where heads[i] != 0 (and at i = 0); each is scanned on its own.
template <typename T, typename Flag, typename Op>
void inclusive_segmented_scan(const T* in, const Flag* heads, T* out, std::int64_t n, Op op) {
  T acc{};
  for (std::int64_t i = 0; i < n; ++i) {
    acc = (i == 0 || heads[i]) ? in[i] : op(acc, in[i]);
    out[i] = acc;
  }
}

template <typename T, typename Flag, typename Op>
void exclusive_segmented_scan(const T* in, const Flag* heads, T* out, std::int64_t n, T init, Op op) {
  T acc = init;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == 0 || heads[i]) acc = init;
    const T item = in[i];
    out[i] = acc;
    acc = op(acc, item);
  }
}

// Segment s is [offsets[s], offsets[s+1]); elements outside every segment are left alone.
template <typename T, typename Offset, typename Op>
void inclusive_segmented_scan_by_offsets(const T* in, T* out, const Offset* offsets,
                                         std::int64_t num_segments, Op op) {
  for (std::int64_t s = 0; s < num_segments; ++s)
    inclusive_scan(in + offsets[s], out + offsets[s], std::int64_t(offsets[s + 1] - offsets[s]), op);
}

template <typename T, typename Offset, typename Op>
void exclusive_segmented_scan_by_offsets(const T* in, T* out, const Offset* offsets,
                                         std::int64_t num_segments, T init, Op op) {
  for (std::int64_t s = 0; s < num_segments; ++s)
    exclusive_scan(in + offsets[s], out + offsets[s], std::int64_t(offsets[s + 1] - offsets[s]), init, op);
}

}  // namespace knn::prim::reference
