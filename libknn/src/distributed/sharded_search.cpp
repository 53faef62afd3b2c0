#include "distributed/sharded_search.hpp"

#include "distributed/candidate_merge.hpp"

namespace knn::detail {

Neighbors search_sharded(const Backend& backend, const SearchRequest& request, const Communicator& comm,
                         const RowKeys& keys, const double* payload, std::vector<double>& payload_out) {
  const std::size_t nq = request.queries.rows, k = request.k;
  std::vector<Candidate> lists(nq * k, kNoCandidate);
  // A failure here on one rank must not leave the others waiting in the merge.
  collective(&comm, [&] {
    nearest_candidates([&](const SearchRequest& r) { return search(backend, r); }, request, keys, payload, lists.data());
  });
  comm.merge_candidates(lists.data(), nq, k);
  return neighbors_of_lists(lists, nq, k, &payload_out);
}

}  // namespace knn::detail
