#pragma once
// Predictions from sorted neighbour lists, for one k or for every prefix k of a longer list.
// Running sums along each list give all prefixes in one pass (the k-sweep); a single k is the
// same computation with one prefix, so both give bit-identical results.
#include <cstddef>
#include <vector>

#include "knn/search.hpp"
#include "knn/weights.hpp"

namespace knn {

/// Throws knn::Error unless `ks` is ascending and within 1..nb.k, and holds a single k when vote
/// shares (`proba`) are asked for.
void check_prefixes(const Neighbors& nb, const std::vector<std::size_t>& ks, bool proba = false);

/// For each query and each k in `ks` (ascending, each <= nb.k): the class of largest weighted
/// vote among the first k neighbours, ties to the smallest class id. out: ks.size() x queries.
/// When `proba` is given (only for ks.size() == 1), it receives queries x n_classes vote shares.
void vote_prefixes(const Neighbors& nb, const int* train_class, std::size_t n_classes,
                   const Weights& weights, const std::vector<std::size_t>& ks, int* out,
                   double* proba = nullptr);

/// Weighted mean of the targets of the first k neighbours, for each k in ks. out: ks.size() x
/// queries.
void average_prefixes(const Neighbors& nb, const double* train_target, const Weights& weights,
                      const std::vector<std::size_t>& ks, double* out);

}  // namespace knn
