#pragma once
// Library-internal helpers of sharded training sets (see knn/communicator.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/search.hpp"

namespace knn::detail {

/// Searches this rank's training rows (`request.train`, global rows offset.. offset + rows) and
/// merges with every other rank: the k nearest of the whole training set, global indices, and
/// each neighbour's payload (`payload[local row]`) in `payload_out` (queries x k). `request.k` is
/// the global k; `request.exclude` holds global rows. Every rank gets the same result.
/// `keys`, when given, is the global index of each local row (ascending) instead of offset + row.
Neighbors search_sharded(const Backend& backend, const SearchRequest& request, const Communicator& comm,
                         std::size_t offset, const double* payload, std::vector<double>& payload_out,
                         const std::int64_t* keys = nullptr);

/// Every rank's values, concatenated in rank order, on every rank.
template <class T>
std::vector<T> gather_all(const Communicator& comm, const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto parts = comm.allgather(std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(T)));
  std::vector<T> all;
  for (const auto& p : parts) {
    const std::size_t at = all.size();
    all.resize(at + p.size() / sizeof(T));
    std::memcpy(all.data() + at, p.data(), p.size());
  }
  return all;
}



/// Neighbours whose index is their position (q * k + j), for voting over a payload array.
Neighbors positional(const Neighbors& nb);

/// The union of every rank's label texts, each once (for the label encoder).
std::vector<std::string> all_labels(const Communicator& comm, const std::vector<std::string>& labels);

}  // namespace knn::detail
