#include "distributed/search_in_parts.hpp"

#include <algorithm>
#include <vector>

namespace knn::detail {

Neighbors search_in_parts(const SearchFn& search_rows, const SearchRequest& request, std::size_t rows_per_part) {
  const Matrix& train = *request.train;
  const std::size_t nq = request.queries.rows, k = request.k;
  std::vector<Candidate> best(nq * k, kNoCandidate), part_lists;
  for (std::size_t b = 0; b < train.rows; b += rows_per_part) {
    const std::size_t e = std::min(train.rows, b + rows_per_part);
    Matrix part(e - b, train.cols);
    std::copy(train.row(b), train.row(b) + (e - b) * train.cols, part.values.begin());
    SearchRequest r = request;
    r.train = &part;
    r.prepared = nullptr;
    part_lists.assign(nq * k, kNoCandidate);
    nearest_candidates(search_rows, r, RowKeys{b}, nullptr, part_lists.data());
    merge_candidate_lists(part_lists.data(), best.data(), nq, k);
  }
  return neighbors_of_lists(best, nq, k, nullptr);
}

}  // namespace knn::detail
