// The candidate merge (distributed/candidate_merge.hpp) that both a sharded training set and a set
// searched in parts rely on, checked in one process: the merged answer must be one search's answer,
// ties and excluded rows included.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/placement.hpp"
#include "distributed/distributed.hpp"
#include "knn/search.hpp"
#include "test_util.hpp"

namespace {

std::shared_ptr<const knn::Backend> cpu() {
  knn::BackendOptions o;
  o.device = knn::Device::cpu;
  return knn::make_backend(o);
}

void expect_same(const knn::Neighbors& got, const knn::Neighbors& want, const std::string& what) {
  ASSERT_EQ(got.queries, want.queries) << what;
  ASSERT_EQ(got.k, want.k) << what;
  for (std::size_t i = 0; i < want.index.size(); ++i) {
    ASSERT_EQ(got.index[i], want.index[i]) << what << " at " << i;
    ASSERT_EQ(got.distance[i], want.distance[i]) << what << " at " << i;  // bit for bit
  }
}

// Random rows with every fifth one a copy of an earlier row, so that equal distances are common.
knn::Matrix rows_with_repeats(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  knn::Matrix m = knn::test::random_matrix(rows, cols, rng);
  for (std::size_t i = 5; i < rows; i += 5) std::copy(m.row(i - 5), m.row(i - 5) + cols, m.row(i));
  return m;
}

}  // namespace

TEST(CandidateMerge, KeepsTheKBestByDistanceThenRow) {
  const knn::Candidate pad = knn::detail::kNoCandidate;
  // Two lists of k = 4: equal distances resolve to the smaller row, pads come last.
  const std::vector<knn::Candidate> in = {{1.0, 7, 70}, {2.0, 3, 30}, {2.0, 9, 90}, pad};
  std::vector<knn::Candidate> inout = {{0.5, 12, 120}, {2.0, 5, 50}, pad, pad};
  knn::detail::merge_candidate_lists(in.data(), inout.data(), 1, 4);
  const std::int64_t rows[] = {12, 7, 3, 5};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(inout[i].index, rows[i]) << i;
    EXPECT_EQ(inout[i].payload, 10.0 * static_cast<double>(rows[i])) << i;  // the payload travels with its row
  }
}

TEST(CandidateMerge, SearchInPartsEqualsOneSearch) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const std::size_t n = 53;  // parts of 1, 7 (a last part of 4), n - 1, n and more than n rows
  const knn::Matrix train = rows_with_repeats(n, 4, rng), queries = knn::test::random_matrix(11, 4, rng);
  const auto backend = cpu();
  const knn::detail::SearchFn search_rows = [&](const knn::SearchRequest& r) { return knn::search(*backend, r); };
  // Some queries exclude a row, some none (-1).
  std::vector<std::int64_t> exclude(queries.rows);
  for (std::size_t q = 0; q < exclude.size(); ++q) exclude[q] = q % 3 == 0 ? -1 : static_cast<std::int64_t>(rng() % n);
  for (const knn::Metric metric : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
    for (const bool with_exclude : {false, true})
      for (const std::size_t k : {std::size_t{1}, std::size_t{6}, n - 1, n})
        for (const std::size_t part : {std::size_t{1}, std::size_t{7}, n - 1, n, n + 10}) {
          if (with_exclude && k == n) continue;  // one row fewer than the set for those queries
          knn::SearchRequest r;
          r.train = &train;
          r.queries = queries;
          r.k = k;
          r.metric = metric;
          r.exclude = with_exclude ? exclude.data() : nullptr;
          const std::string what = "seed " + std::to_string(seed) + " metric " + knn::to_string(metric) + " k " +
                                   std::to_string(k) + " part " + std::to_string(part) + (with_exclude ? " exclude" : "");
          expect_same(knn::detail::search_in_parts(search_rows, r, part), knn::search(*backend, r), what);
        }
}

TEST(RowKeys, GlobalAndLocalRows) {
  const knn::detail::RowKeys offset{10};
  EXPECT_EQ(offset.global(0), 10);
  EXPECT_EQ(offset.local(12, 5), 2);
  EXPECT_EQ(offset.local(15, 5), -1);  // one past the last local row
  EXPECT_EQ(offset.local(9, 5), -1);
  EXPECT_EQ(offset.local(-1, 5), -1);
  const std::vector<std::int64_t> keys = {2, 3, 8, 13};
  const knn::detail::RowKeys listed{0, keys.data()};
  EXPECT_EQ(listed.global(2), 8);
  EXPECT_EQ(listed.local(13, keys.size()), 3);
  EXPECT_EQ(listed.local(4, keys.size()), -1);
  EXPECT_EQ(listed.local(-1, keys.size()), -1);
}

// In one process a placement's search takes global rows in and gives global rows out, as the
// sharded one does: the rows of a fold, numbered by their keys, with each row's payload.
TEST(Placement, LocalSearchSpeaksGlobalRows) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const knn::Matrix all = rows_with_repeats(30, 3, rng), queries = knn::test::random_matrix(6, 3, rng);
  std::vector<std::size_t> local;
  std::vector<std::int64_t> keys;
  std::vector<double> payload;
  for (std::size_t i = 0; i < all.rows; ++i)
    if (i % 4 != 1) {  // every fourth row is another rank's, or held out
      local.push_back(i);
      keys.push_back(static_cast<std::int64_t>(i));
      payload.push_back(100.0 + static_cast<double>(i));
    }
  const knn::Matrix train = knn::take_rows(all, local);
  std::vector<std::int64_t> exclude_global(queries.rows), exclude_local(queries.rows);
  for (std::size_t q = 0; q < queries.rows; ++q) {
    const std::size_t l = rng() % local.size();
    exclude_global[q] = q == 0 ? -1 : keys[l];
    exclude_local[q] = q == 0 ? -1 : static_cast<std::int64_t>(l);
  }
  const auto backend = cpu();
  knn::SearchRequest r;
  r.train = &train;
  r.queries = queries;
  r.k = 7;
  r.exclude = exclude_local.data();
  const knn::Neighbors want = knn::search(*backend, r);
  r.exclude = exclude_global.data();
  std::vector<double> found;
  const knn::Neighbors got =
      knn::detail::local_placement()->search(*backend, r, knn::detail::RowKeys{0, keys.data()}, payload.data(), found);
  ASSERT_EQ(found.size(), want.index.size()) << "seed " << seed;
  for (std::size_t i = 0; i < want.index.size(); ++i) {
    EXPECT_EQ(got.index[i], keys[static_cast<std::size_t>(want.index[i])]) << "seed " << seed << " at " << i;
    EXPECT_EQ(got.distance[i], want.distance[i]) << "seed " << seed << " at " << i;
    EXPECT_EQ(found[i], 100.0 + static_cast<double>(got.index[i])) << "seed " << seed << " at " << i;
  }
}
