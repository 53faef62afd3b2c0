#pragma once
// Carving the caller's temporary storage into aligned sub-allocations, CUB style: the same
// plan answers the size query (null temp pointer) and hands out the pointers on the real call.
#include <cstddef>
#include <cstdint>

#include "../status.hpp"

namespace knn::prim::detail {

constexpr std::size_t temp_alignment = 256;

constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + temp_alignment - 1) / temp_alignment * temp_alignment;
}

template <int N>
struct TempPlan {
  std::size_t sizes[N];

  std::size_t offset(int i) const {
    std::size_t off = 0;
    for (int k = 0; k < i; ++k) off += align_up(sizes[k]);
    return off;
  }
  // Never 0, so that a caller can always allocate what the size query returned.
  std::size_t total() const {
    const std::size_t t = offset(N);
    return t ? t : 1;
  }
  template <typename T>
  T* get(void* temp, int i) const {
    return reinterpret_cast<T*>(static_cast<unsigned char*>(temp) + offset(i));
  }
};

// The first step of every device-level call: answer the size query, or check the storage given.
// Returns true when the caller should return `status` now (size query answered, or error).
template <int N>
bool temp_query_or_check(void* temp, std::size_t& temp_bytes, const TempPlan<N>& plan,
                         Status& status) {
  status = Status{};
  if (temp == nullptr) {
    temp_bytes = plan.total();
    return true;
  }
  if (temp_bytes < plan.total()) {
    status = make_error(Errc::temp_too_small,
                        "temp_storage_bytes is smaller than the size query returned", KNN_PRIM_WHERE);
    return true;
  }
  return false;
}

}  // namespace knn::prim::detail

// Inside a device-level function: answers the size query or rejects too small storage.
#define KNN_PRIM_TEMP_QUERY(temp, temp_bytes, plan)                                   \
  do {                                                                                \
    ::knn::prim::Status knn_prim_tq_;                                                 \
    if (::knn::prim::detail::temp_query_or_check(temp, temp_bytes, plan, knn_prim_tq_)) \
      return knn_prim_tq_;                                                            \
  } while (0)
