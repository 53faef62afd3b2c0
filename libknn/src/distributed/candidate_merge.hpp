#pragma once
// Candidate lists: each query's nearest among some of the training rows, sorted by (distance,
// global row), merged list by list into the nearest of all of them. One merge serves the ranks of
// a sharded training set (sharded_search) and the parts of a set searched in turn on one device
// (search_in_parts): either way ties resolve as in one search of the whole set.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "distributed/row_keys.hpp"
#include "knn/communicator.hpp"
#include "knn/search.hpp"

namespace knn::detail {

/// How a part of the training rows is searched (a backend's search, or the GPU's own).
using SearchFn = std::function<Neighbors(const SearchRequest&)>;

/// The pad of a list with fewer than k candidates: after every real one.
constexpr Candidate kNoCandidate{std::numeric_limits<double>::infinity(), std::numeric_limits<std::int64_t>::max(), 0.0};

/// Fills `lists` (queries x request.k, sorted, padded with kNoCandidate) with the nearest of
/// `request.train`'s rows, whose global indices `keys` gives; each candidate carries
/// `payload[local row]` (0 without payload). `request.exclude` holds global rows.
void nearest_candidates(const SearchFn& search_rows, const SearchRequest& request, const RowKeys& keys,
                        const double* payload, Candidate* lists);

/// Per list, the k best of two sorted lists of k candidates (`in` and `inout`) into `inout`.
void merge_candidate_lists(const Candidate* in, Candidate* inout, std::size_t lists, std::size_t k);

/// The merged lists as neighbours, and each one's payload into `payload_out` where given; a pad
/// still in a list (fewer than k rows over all parts) is an error.
Neighbors neighbors_of_lists(const std::vector<Candidate>& lists, std::size_t queries, std::size_t k,
                             std::vector<double>* payload_out);

/// Neighbours whose index is their position (q * k + j), for voting over the payloads that came
/// with them.
Neighbors positional(Neighbors nb);

}  // namespace knn::detail
