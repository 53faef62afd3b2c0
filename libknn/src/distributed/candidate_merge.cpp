#include "distributed/candidate_merge.hpp"

#include <algorithm>
#include <numeric>

#include "knn/error.hpp"

namespace knn::detail {

void nearest_candidates(const SearchFn& search_rows, const SearchRequest& request, const RowKeys& keys,
                        const double* payload, Candidate* lists) {
  const std::size_t nq = request.queries.rows, k = request.k, local = request.train->rows;
  // Queries whose excluded row is among these rows can take one row fewer; when k reaches the row
  // count, they are searched apart from the others.
  std::vector<std::int64_t> exclude(nq, -1);
  std::vector<std::size_t> group[2];  // [0]: no excluded row here, or k below the row count; [1]: the rest
  for (std::size_t q = 0; q < nq; ++q) {
    const std::int64_t at = request.exclude ? keys.local(request.exclude[q], local) : -1;
    exclude[q] = at;
    group[at >= 0 && k >= local ? 1 : 0].push_back(q);
  }
  for (int gi = 0; gi < 2; ++gi) {
    const auto& ids = group[gi];
    const std::size_t k_local = std::min(k, gi == 1 ? local - 1 : local);
    if (ids.empty() || k_local == 0) continue;
    const bool all = ids.size() == nq;
    Matrix subset;
    std::vector<std::int64_t> ex;
    if (!all) subset = take_rows(request.queries, ids);
    bool any = false;
    for (std::size_t q : ids) ex.push_back(exclude[q]), any = any || exclude[q] >= 0;
    SearchRequest r = request;
    r.queries = all ? request.queries : MatrixView(subset);
    r.k = k_local;
    r.exclude = any ? ex.data() : nullptr;  // none of its rows excluded: k may be all of them
    const Neighbors nb = search_rows(r);
    for (std::size_t qi = 0; qi < ids.size(); ++qi)
      for (std::size_t j = 0; j < k_local; ++j) {
        const std::int64_t i = nb.index_row(qi)[j];
        lists[ids[qi] * k + j] = {nb.distance_row(qi)[j], keys.global(static_cast<std::size_t>(i)), payload ? payload[i] : 0.0};
      }
  }
}

void merge_candidate_lists(const Candidate* in, Candidate* inout, std::size_t lists, std::size_t k) {
  const auto less = [](const Candidate& a, const Candidate& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
  };
  std::vector<Candidate> merged(k);
  for (std::size_t q = 0; q < lists; ++q, in += k, inout += k) {
    std::size_t i = 0, j = 0;
    for (std::size_t o = 0; o < k; ++o) merged[o] = less(in[i], inout[j]) ? in[i++] : inout[j++];
    std::copy(merged.begin(), merged.end(), inout);
  }
}

Neighbors neighbors_of_lists(const std::vector<Candidate>& lists, std::size_t queries, std::size_t k,
                             std::vector<double>* payload_out) {
  Neighbors out;
  out.queries = queries;
  out.k = k;
  out.index.resize(queries * k);
  out.distance.resize(queries * k);
  if (payload_out) payload_out->resize(queries * k);
  for (std::size_t i = 0; i < queries * k; ++i) {
    if (lists[i].index == kNoCandidate.index) throw Error("search: fewer than k candidates over all parts of the training rows");
    out.index[i] = lists[i].index;
    out.distance[i] = lists[i].distance;
    if (payload_out) (*payload_out)[i] = lists[i].payload;
  }
  return out;
}

Neighbors positional(Neighbors nb) {
  std::iota(nb.index.begin(), nb.index.end(), std::int64_t{0});
  return nb;
}

}  // namespace knn::detail
