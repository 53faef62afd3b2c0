#pragma once
// Library-internal helpers of sharded training sets (see knn/communicator.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
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



/// How a part of the training rows is searched (a backend's search, or the GPU's own).
using SearchFn = std::function<Neighbors(const SearchRequest&)>;

/// Per list, the k best of two sorted lists of k candidates (`in` and `inout`) into `inout`.
void merge_candidate_lists(const Candidate* in, Candidate* inout, std::size_t lists, std::size_t k);

/// The request over its training rows taken `rows_per_part` at a time (for a device that cannot
/// hold them all): each part's nearest, merged by (distance, row), so the answer is the one of a
/// single search. `request.exclude` holds rows of the whole training set.
Neighbors search_in_parts(const SearchFn& search_rows, const SearchRequest& request, std::size_t rows_per_part);

/// Neighbours whose index is their position (q * k + j), for voting over a payload array.
Neighbors positional(const Neighbors& nb);

/// The union of every rank's label texts, each once (for the label encoder).
std::vector<std::string> all_labels(const Communicator& comm, const std::vector<std::string>& labels);

}  // namespace knn::detail
