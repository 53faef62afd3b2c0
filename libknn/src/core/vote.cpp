#include "knn/vote.hpp"

#include <cmath>
#include <stdexcept>

#include "knn/error.hpp"

namespace knn {

void check_prefixes(const Neighbors& nb, const std::vector<std::size_t>& ks, bool proba) {
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i] == 0 || ks[i] > nb.k || (i > 0 && ks[i] <= ks[i - 1]))
      throw Error("k list must be ascending and within 1.." + std::to_string(nb.k));
  if (proba && ks.size() != 1) throw Error("vote shares are given for a single k only");
}

namespace {

// Running sums along one query's neighbour list reproduce neighbor_weights() for every prefix:
// the weights of one neighbour do not depend on k, except for two rules that are prefix-local:
// zero distances (Kind::distance; they lead the sorted list) and a zero weight sum (uniform).
struct PrefixWeights {
  const Weights& w;
  const double* dist;
  bool zero_rule;
  explicit PrefixWeights(const Weights& weights, const double* d)
      : w(weights), dist(d), zero_rule(weights.kind == Weights::Kind::distance && d[0] == 0.0) {}
  double at(std::size_t i) const {
    if (zero_rule) return dist[i] == 0.0 ? 1.0 : 0.0;
    return w.weight(dist[i]);
  }
  static bool usable(double sum) { return sum > 0.0 && std::isfinite(sum); }
};

}  // namespace

void vote_prefixes(const Neighbors& nb, const int* train_class, std::size_t n_classes,
                   const Weights& weights, const std::vector<std::size_t>& ks, int* out,
                   double* proba) {
  check_prefixes(nb, ks, proba != nullptr);
  const std::size_t nq = nb.queries, kmax = ks.empty() ? 0 : ks.back();
#pragma omp parallel
  {
    std::vector<double> votes(n_classes), counts(n_classes);
#pragma omp for schedule(static)
    for (std::ptrdiff_t qi = 0; qi < static_cast<std::ptrdiff_t>(nq); ++qi) {
      const auto q = static_cast<std::size_t>(qi);
      const std::int64_t* idx = nb.index_row(q);
      const PrefixWeights pw(weights, nb.distance_row(q));
      std::fill(votes.begin(), votes.end(), 0.0);
      std::fill(counts.begin(), counts.end(), 0.0);
      double sum = 0.0;
      std::size_t next = 0;
      for (std::size_t i = 0; i < kmax; ++i) {
        const int c = train_class[idx[i]];
        const double wi = pw.at(i);
        votes[static_cast<std::size_t>(c)] += wi;
        counts[static_cast<std::size_t>(c)] += 1.0;
        sum += wi;
        if (i + 1 != ks[next]) continue;
        const std::vector<double>& v = PrefixWeights::usable(sum) ? votes : counts;
        std::size_t best = 0;
        for (std::size_t cl = 1; cl < n_classes; ++cl)
          if (v[cl] > v[best]) best = cl;  // strict: a tie keeps the smaller class
        out[next * nq + q] = static_cast<int>(best);
        if (proba) {
          const double total = PrefixWeights::usable(sum) ? sum : static_cast<double>(i + 1);
          for (std::size_t cl = 0; cl < n_classes; ++cl) proba[q * n_classes + cl] = v[cl] / total;
        }
        ++next;
      }
    }
  }
}

void average_prefixes(const Neighbors& nb, const double* train_target, const Weights& weights,
                      const std::vector<std::size_t>& ks, double* out) {
  check_prefixes(nb, ks);
  const std::size_t nq = nb.queries, kmax = ks.empty() ? 0 : ks.back();
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t qi = 0; qi < static_cast<std::ptrdiff_t>(nq); ++qi) {
    const auto q = static_cast<std::size_t>(qi);
    const std::int64_t* idx = nb.index_row(q);
    const PrefixWeights pw(weights, nb.distance_row(q));
    double wsum = 0.0, wy = 0.0, ysum = 0.0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < kmax; ++i) {
      const double y = train_target[idx[i]];
      const double wi = pw.at(i);
      wsum += wi;
      wy += wi * y;
      ysum += y;
      if (i + 1 != ks[next]) continue;
      out[next * nq + q] = PrefixWeights::usable(wsum) ? wy / wsum : ysum / static_cast<double>(i + 1);
      ++next;
    }
  }
}

// The host computation is every backend's default.
void Backend::vote(const Neighbors& nb, const int* train_class, std::size_t n_classes, const Weights& weights,
                   const std::vector<std::size_t>& ks, int* out, double* proba) const {
  vote_prefixes(nb, train_class, n_classes, weights, ks, out, proba);
}

void Backend::average(const Neighbors& nb, const double* train_target, const Weights& weights,
                      const std::vector<std::size_t>& ks, double* out) const {
  average_prefixes(nb, train_target, weights, ks, out);
}

}  // namespace knn
