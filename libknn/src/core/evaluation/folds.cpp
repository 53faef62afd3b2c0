// The fold of every row: a seeded shuffle that a script in any language can reproduce.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/evaluation/eval_context.hpp"
#include "knn/error.hpp"

namespace knn {

namespace {

// splitmix64: a tiny generator that a script in any language can reproduce exactly.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

void fold_shuffle(std::vector<std::size_t>& v, SplitMix64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
}

}  // namespace

std::vector<int> assign_folds(std::size_t rows, const std::vector<int>* classes, int folds, std::uint64_t seed) {
  if (folds < 2) throw Error::parameter("folds", quote(std::to_string(folds)) + " is not a whole number >= 2");
  if (static_cast<std::size_t>(folds) > rows)
    throw Error::parameter("folds", quote(std::to_string(folds)) + ": that many folds need at least as many rows; the data has " +
                                     std::to_string(rows));
  SplitMix64 rng{seed};
  std::vector<std::vector<std::size_t>> groups;
  if (classes) {
    int m = -1;
    for (int c : *classes) m = std::max(m, c);
    groups.resize(static_cast<std::size_t>(m + 1));
    for (std::size_t i = 0; i < rows; ++i) groups[static_cast<std::size_t>((*classes)[i])].push_back(i);
  } else {
    groups.emplace_back(rows);
    std::iota(groups[0].begin(), groups[0].end(), std::size_t{0});
  }
  std::vector<int> fold(rows, 0);
  std::size_t dealt = 0;
  for (auto& g : groups) {
    fold_shuffle(g, rng);
    for (std::size_t i : g) fold[i] = static_cast<int>(dealt++ % static_cast<std::size_t>(folds));
  }
  return fold;
}

std::vector<detail::Fold> detail::kfold_folds(std::size_t rows, const std::vector<int>* classes, const FoldSpec& spec) {
  const auto f = assign_folds(rows, classes, spec.folds, spec.seed);
  std::vector<Fold> folds(static_cast<std::size_t>(spec.folds));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t g = 0; g < folds.size(); ++g) (static_cast<int>(g) == f[i] ? folds[g].test : folds[g].train).push_back(i);
  return folds;
}

void detail::check_splits(const std::vector<Split>& splits, std::size_t rows) {
  if (splits.empty()) throw Error::parameter("splits", "no split given");
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const Split& s = splits[i];
    const std::string which = "split " + std::to_string(i + 1) + " of " + std::to_string(splits.size());
    if (s.train.empty() || s.test.empty())
      throw Error::parameter("splits", which + " has no " + (s.train.empty() ? "training" : "test") + " rows");
    for (const auto* part : {&s.train, &s.test})
      for (std::size_t r : *part)
        if (r >= rows)
          throw Error::parameter("splits", which + " names row " + std::to_string(r) + "; the data has " +
                                               std::to_string(rows) + " rows (0-based: the last is " + std::to_string(rows - 1) + ")");
  }
}

}  // namespace knn
