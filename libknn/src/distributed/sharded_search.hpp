#pragma once
// The search of a training set sharded over ranks: each rank's nearest, merged over all ranks.
#include <vector>

#include "distributed/row_keys.hpp"
#include "knn/communicator.hpp"
#include "knn/search.hpp"

namespace knn::detail {

/// Searches this rank's training rows (`request.train`, global rows `keys`) and merges with every
/// other rank: the k nearest of the whole training set, global indices, and each neighbour's
/// payload (`payload[local row]`, or 0 without payload) in `payload_out` (queries x k).
/// `request.k` is the global k; `request.exclude` holds global rows. Every rank gets the same
/// result.
Neighbors search_sharded(const Backend& backend, const SearchRequest& request, const Communicator& comm,
                         const RowKeys& keys, const double* payload, std::vector<double>& payload_out);

}  // namespace knn::detail
