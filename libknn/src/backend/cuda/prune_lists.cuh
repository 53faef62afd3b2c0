#pragma once
// Candidates dropped before they are ranked: a list's k smallest upper bounds say that its k-th
// nearest row lies within the k-th of them, so a candidate whose lower bound is above it cannot be
// among the k nearest, nor tie with the k-th (docs/exactness.md#pruned-lists). Ranking reads each
// candidate's operand row whole (3 KiB for Fashion-MNIST's 784 features), so each one dropped
// spares most of what it would cost there.
#include <cuda_runtime.h>

#include <cstdint>

namespace knn::cuda {

/// k up to this prunes (a warp holds a list's k smallest upper bounds, one a lane).
constexpr int kPruneMaxK = 32;

/// For each of `slots` first-round lists (list s: places [s cap, s cap + count[s]) of index and
/// bounds, bounds holding each candidate's lower (x) and upper (y) bound of the defined distance):
/// drops the candidates whose lower bound is above the list's k-th smallest upper bound, keeps the
/// others in their order, and sets count[s] to how many were kept. A list that overflowed
/// (count[s] > cap) or holds k or fewer stays as it is. 1 <= k <= kPruneMaxK. Queued on st.
void prune_lists(std::int64_t* index, const float2* bounds, unsigned long long* count, int slots, std::int64_t cap, int k, cudaStream_t st);

}  // namespace knn::cuda
