#include "distributed/distributed.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <string>

#include "knn/error.hpp"

namespace knn {

void collective(const Communicator* comm, const std::function<void()>& step) {
  if (!distributed(comm)) {
    step();
    return;
  }
  // "" on success, else "!", the parameter's name, a NUL and the detail (both may be empty: another
  // rank names the cause).
  std::string state;
  try {
    step();
  } catch (const Error& e) {
    state = "!" + e.parameter_name() + '\0' + e.detail();
  }
  bool failed = false;
  for (const auto& s : comm->allgather(state)) {
    if (s.size() > 2) {
      const std::size_t nul = s.find('\0');
      const std::string name = s.substr(1, nul - 1), detail = s.substr(nul + 1);
      throw name.empty() ? Error(detail) : Error::parameter(name, detail);
    }
    failed = failed || !s.empty();
  }
  if (failed) throw Error("a rank failed without a message");
}

ShardRange shard_range(const Communicator& comm, std::size_t local_rows) {
  std::string mine(sizeof(std::uint64_t), '\0');
  const std::uint64_t n = local_rows;
  std::memcpy(mine.data(), &n, sizeof n);
  ShardRange r;
  const auto all = comm.allgather(mine);
  for (int i = 0; i < comm.size(); ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, all[static_cast<std::size_t>(i)].data(), sizeof v);
    if (i < comm.rank()) r.offset += v;
    r.total += v;
  }
  return r;
}

namespace {
// Texts as one byte string, each with its length in front, so any bytes may appear in them.
template <class Range>
std::string pack(const Range& texts) {
  std::string packed;
  for (const auto& t : texts) {
    const std::uint64_t n = t.size();
    packed.append(reinterpret_cast<const char*>(&n), sizeof n);
    packed += t;
  }
  return packed;
}

// Every rank's packed texts, unpacked in rank order.
std::vector<std::string> unpack_all(const Communicator& comm, const std::string& packed) {
  std::vector<std::string> all;
  for (const auto& p : comm.allgather(packed))
    for (std::size_t at = 0; at < p.size();) {
      std::uint64_t n = 0;
      std::memcpy(&n, p.data() + at, sizeof n);
      at += sizeof n;
      all.push_back(p.substr(at, n));
      at += n;
    }
  return all;
}
}  // namespace

std::vector<std::string> gather_labels(const Communicator& comm, const std::vector<std::string>& labels) {
  return unpack_all(comm, pack(labels));
}

namespace detail {

namespace {
constexpr Candidate kPad{std::numeric_limits<double>::infinity(), std::numeric_limits<std::int64_t>::max(), 0.0};

// Fills `lists` (queries x request.k, sorted, padded) with the nearest of `request.train`'s rows,
// whose global indices are keys[i] or offset + i. Queries whose excluded row is among them can
// take one row fewer; when k reaches the row count, they are searched apart from the others.
void local_candidates(const SearchFn& search_rows, const SearchRequest& request, std::size_t offset,
                      const std::int64_t* keys, const double* payload, Candidate* lists) {
  const std::size_t nq = request.queries->rows, k = request.k, local = request.train->rows;
  std::vector<std::int64_t> exclude(nq, -1);
  std::vector<std::size_t> group[2];  // [0]: no excluded row here, or k below the row count; [1]: the rest
  for (std::size_t q = 0; q < nq; ++q) {
    const std::int64_t g = request.exclude ? request.exclude[q] : -1;
    std::int64_t at = -1;
    if (g >= 0 && keys) {  // keys ascend
      const std::int64_t* it = std::lower_bound(keys, keys + local, g);
      if (it != keys + local && *it == g) at = it - keys;
    } else if (g >= static_cast<std::int64_t>(offset) && g < static_cast<std::int64_t>(offset + local)) {
      at = g - static_cast<std::int64_t>(offset);
    }
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
    if (!all) subset = take_rows(*request.queries, ids);
    bool any = false;
    for (std::size_t q : ids) ex.push_back(exclude[q]), any = any || exclude[q] >= 0;
    SearchRequest r = request;
    r.queries = all ? request.queries : &subset;
    r.k = k_local;
    r.exclude = any ? ex.data() : nullptr;  // none of its rows excluded: k may be all of them
    const Neighbors nb = search_rows(r);
    for (std::size_t qi = 0; qi < ids.size(); ++qi)
      for (std::size_t j = 0; j < k_local; ++j) {
        const std::int64_t i = nb.index_row(qi)[j];
        const std::int64_t global = keys ? keys[i] : i + static_cast<std::int64_t>(offset);
        lists[ids[qi] * k + j] = {nb.distance_row(qi)[j], global, payload ? payload[i] : 0.0};
      }
  }
}

Neighbors from_lists(const std::vector<Candidate>& lists, std::size_t nq, std::size_t k, std::vector<double>* payload_out) {
  Neighbors out;
  out.queries = nq;
  out.k = k;
  out.index.resize(nq * k);
  out.distance.resize(nq * k);
  if (payload_out) payload_out->resize(nq * k);
  for (std::size_t i = 0; i < nq * k; ++i) {
    if (lists[i].index == kPad.index) throw Error("search: fewer than k candidates over all parts of the training rows");
    out.index[i] = lists[i].index;
    out.distance[i] = lists[i].distance;
    if (payload_out) (*payload_out)[i] = lists[i].payload;
  }
  return out;
}
}  // namespace

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

Neighbors search_sharded(const Backend& backend, const SearchRequest& request, const Communicator& comm,
                         std::size_t offset, const double* payload, std::vector<double>& payload_out,
                         const std::int64_t* keys) {
  const std::size_t nq = request.queries->rows, k = request.k;
  std::vector<Candidate> lists(nq * k, kPad);
  // A failure here on one rank must not leave the others waiting in the merge.
  collective(&comm, [&] {
    local_candidates([&](const SearchRequest& r) { return search(backend, r); }, request, offset, keys, payload, lists.data());
  });
  comm.merge_candidates(lists.data(), nq, k);
  return from_lists(lists, nq, k, &payload_out);
}

Neighbors search_in_parts(const SearchFn& search_rows, const SearchRequest& request, std::size_t rows_per_part) {
  const Matrix& train = *request.train;
  const std::size_t nq = request.queries->rows, k = request.k;
  std::vector<Candidate> best(nq * k, kPad), part_lists;
  for (std::size_t b = 0; b < train.rows; b += rows_per_part) {
    const std::size_t e = std::min(train.rows, b + rows_per_part);
    Matrix part(e - b, train.cols);
    std::copy(train.row(b), train.row(b) + (e - b) * train.cols, part.values.begin());
    SearchRequest r = request;
    r.train = &part;
    r.prepared = nullptr;
    part_lists.assign(nq * k, kPad);
    local_candidates(search_rows, r, b, nullptr, nullptr, part_lists.data());
    merge_candidate_lists(part_lists.data(), best.data(), nq, k);
  }
  return from_lists(best, nq, k, nullptr);
}

Neighbors positional(const Neighbors& nb) {
  Neighbors p = nb;
  std::iota(p.index.begin(), p.index.end(), std::int64_t{0});
  return p;
}

std::vector<std::string> all_labels(const Communicator& comm, const std::vector<std::string>& labels) {
  const std::set<std::string> mine(labels.begin(), labels.end());
  const auto every = unpack_all(comm, pack(mine));
  const std::set<std::string> all(every.begin(), every.end());
  return {all.begin(), all.end()};
}

}  // namespace detail
}  // namespace knn
