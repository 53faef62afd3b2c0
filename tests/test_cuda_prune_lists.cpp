// prune_lists (backend/cuda/prune_lists.cuh) on its own, against the rule computed here on fresh
// random lists: a candidate stays when its lower bound is at most the list's k-th smallest upper
// bound, in its order; lists that overflowed or hold k or fewer stay whole; no place past a list's
// count is written. Ties among the bounds, infinite bounds and lists longer than a warp are drawn
// on purpose. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/prune_lists.cuh"
#include "knn/error.hpp"
#include "knn/knn.hpp"
#include "require_gpu.hpp"
#include "test_util.hpp"

namespace {

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

template <class T>
struct DeviceCopy {
  T* p = nullptr;
  explicit DeviceCopy(const std::vector<T>& v) {
    if (cudaMalloc(&p, v.size() * sizeof(T)) != cudaSuccess) p = nullptr;
    else if (cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) p = nullptr;
  }
  ~DeviceCopy() { cudaFree(p); }
  std::vector<T> back(std::size_t n) const {
    std::vector<T> v(n);
    if (cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) v.clear();
    return v;
  }
};

constexpr std::int64_t kPoison = -7;  // places past a list's count

void check_prune(int k, std::int64_t cap, int slots, std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", k = " + std::to_string(k) + ", cap = " + std::to_string(cap));
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> index(static_cast<std::size_t>(slots * cap), kPoison);
  std::vector<float2> bounds(index.size(), float2{NAN, NAN});
  std::vector<unsigned long long> count(static_cast<std::size_t>(slots));
  std::uniform_int_distribution<int> shape(0, 9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int s = 0; s < slots; ++s) {
    // Lists of every kind: empty, up to k, a warp or less, several warps, full, overflowed.
    const int kind = shape(rng);
    std::int64_t m = kind == 0   ? std::uniform_int_distribution<std::int64_t>(0, k)(rng)
                     : kind <= 3 ? std::uniform_int_distribution<std::int64_t>(k + 1, std::max<std::int64_t>(k + 1, 32))(rng)
                     : kind <= 7 ? std::uniform_int_distribution<std::int64_t>(k + 1, cap)(rng)
                     : kind == 8 ? cap
                                 : cap + std::uniform_int_distribution<std::int64_t>(1, 50)(rng);
    count[static_cast<std::size_t>(s)] = static_cast<unsigned long long>(m);
    // Distances from a few values (ties) or spread; margins from none to wide; a few infinite.
    const bool ties = unit(rng) < 0.3f;
    for (std::int64_t x = 0; x < std::min(m, cap); ++x) {
      const float d = ties ? static_cast<float>(std::uniform_int_distribution<int>(0, 4)(rng)) : 10.0f * unit(rng);
      const float margin = unit(rng) < 0.2f ? 0.0f : unit(rng) * (ties ? 1.0f : 3.0f);
      float lo = d - margin, up = d + margin;
      if (unit(rng) < 0.02f) lo = -INFINITY;
      if (unit(rng) < 0.02f) up = INFINITY;
      const auto at = static_cast<std::size_t>(s * cap + x);
      index[at] = std::uniform_int_distribution<std::int64_t>(0, std::int64_t{1} << 40)(rng);
      bounds[at] = float2{lo, up};
    }
  }
  DeviceCopy<std::int64_t> d_index(index);
  DeviceCopy<float2> d_bounds(bounds);
  DeviceCopy<unsigned long long> d_count(count);
  ASSERT_TRUE(d_index.p && d_bounds.p && d_count.p);
  knn::cuda::prune_lists(d_index.p, d_bounds.p, d_count.p, slots, cap, k, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  const auto got_index = d_index.back(index.size());
  const auto got_count = d_count.back(count.size());
  ASSERT_EQ(got_index.size(), index.size());
  ASSERT_EQ(got_count.size(), count.size());
  int failures = 0, pruned = 0;
  for (int s = 0; s < slots && failures < 5; ++s) {
    const auto m = static_cast<std::int64_t>(count[static_cast<std::size_t>(s)]);
    const std::int64_t held = std::min(m, cap);
    std::vector<std::int64_t> want;
    std::int64_t want_count = m;
    const auto first = index.begin() + s * cap;
    if (m > cap || m <= k) {
      want.assign(first, first + held);
    } else {
      std::vector<float> up;
      for (std::int64_t x = 0; x < m; ++x) up.push_back(bounds[static_cast<std::size_t>(s * cap + x)].y);
      std::nth_element(up.begin(), up.begin() + (k - 1), up.end());
      const float kth = up[static_cast<std::size_t>(k - 1)];
      for (std::int64_t x = 0; x < m; ++x)
        if (bounds[static_cast<std::size_t>(s * cap + x)].x <= kth) want.push_back(first[x]);
      want_count = static_cast<std::int64_t>(want.size());
      // The rule keeps at least the k rows with the smallest upper bounds.
      EXPECT_GE(want_count, k) << "list " << s;
      pruned += static_cast<int>(m - want_count);
    }
    const auto got = static_cast<std::int64_t>(got_count[static_cast<std::size_t>(s)]);
    if (got != want_count) {
      ADD_FAILURE() << "list " << s << " of " << m << ": count " << got << ", want " << want_count, ++failures;
      continue;
    }
    const auto gfirst = got_index.begin() + s * cap;
    if (!std::equal(want.begin(), want.end(), gfirst)) ADD_FAILURE() << "list " << s << " of " << m << ": kept rows differ", ++failures;
    // Places past the list's first count were never written.
    for (std::int64_t x = held; x < cap; ++x)
      if (gfirst[x] != kPoison) {
        ADD_FAILURE() << "list " << s << ": place " << x << " past its " << held << " written", ++failures;
        break;
      }
  }
  EXPECT_GT(pruned, 0) << "no list had a candidate to drop: the draw tests nothing";
}

TEST(CudaPruneLists, KeepsWhatTheRuleKeepsInOrder) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  check_prune(1, 40, 500, seed);
  check_prune(5, 266, 2000, seed + 1);  // Fashion-MNIST's k and places
  check_prune(16, 288, 1000, seed + 2);
  check_prune(32, 320, 1000, seed + 3);
}

TEST(CudaPruneLists, RefusesKOutsideItsRange) {
  for (int k : {0, knn::cuda::kPruneMaxK + 1})
    EXPECT_THROW(knn::cuda::prune_lists(nullptr, nullptr, nullptr, 1, 1, k, nullptr), knn::Error) << "k = " << k;
}

}  // namespace
