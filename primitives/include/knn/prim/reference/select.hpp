#pragma once
// Sequential host versions of stream compaction, for tests.
#include <cstdint>
#include <vector>

namespace knn::prim::reference {

template <typename T, typename Pred>
std::vector<T> select_if(const T* in, std::int64_t n, Pred pred) {
  std::vector<T> out;
  for (std::int64_t i = 0; i < n; ++i)
    if (pred(in[i])) out.push_back(in[i]);
  return out;
}

template <typename T, typename Flag>
std::vector<T> select_flagged(const T* in, const Flag* flags, std::int64_t n) {
  std::vector<T> out;
  for (std::int64_t i = 0; i < n; ++i)
    if (flags[i]) out.push_back(in[i]);
  return out;
}

// Kept items in order, then rejected items in order; returns the number kept.
template <typename T, typename Pred>
std::int64_t stable_partition(const T* in, T* out, std::int64_t n, Pred pred) {
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (pred(in[i])) out[kept++] = in[i];
  std::int64_t r = kept;
  for (std::int64_t i = 0; i < n; ++i)
    if (!pred(in[i])) out[r++] = in[i];
  return kept;
}

}  // namespace knn::prim::reference
