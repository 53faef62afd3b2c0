#pragma once
// A guessed tau and its check (docs/exactness.md#guessed-tau): the fused path's first round at
// large k takes as tau a sample's upper bound below its k-th (guessed_tau_rank), and the ranking
// keeps a query's list only where the guess is proved to hold every neighbour
// (arith::l2_sum_ceiling of the k-th distance at or below it).

namespace knn::cuda {

/// What rank_candidates needs to check a guessed tau: each query's guess, replaced by a valid tau
/// where it fails, and the valid tau to fall back on (the sample's k-th upper bound). Null tau:
/// tau is valid, nothing to check.
struct TauGuess {
  unsigned* tau = nullptr;
  const unsigned* valid = nullptr;
};

}  // namespace knn::cuda
