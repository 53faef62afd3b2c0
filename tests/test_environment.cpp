// The GPU backend's tuning switches as environment.cpp reads them: defaults when unset or empty,
// values clamped to their ranges.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "core/environment.hpp"
#include "test_util.hpp"

namespace {

constexpr const char* kSwitches[] = {"KNN_GPU_TIMING", "KNN_GPU_SGEMM", "KNN_GPU_BLAS", "KNN_GPU_FUSED",
                                     "KNN_GPU_FP16",   "KNN_GPU_CHUNKS", "KNN_GPU_VOTE", "KNN_GPU_FUSED_STRIDE",
                                     "KNN_GPU_WGMMA", "KNN_GPU_PRUNE"};

// Clears every switch for one scope, putting back what was set.
struct NoSwitches {
  std::vector<std::unique_ptr<knn::test::ScopedEnv>> kept;
  NoSwitches() {
    for (const char* name : kSwitches) {
      kept.push_back(std::make_unique<knn::test::ScopedEnv>(name, ""));
      ::unsetenv(name);
    }
  }
};

TEST(GpuTuning, UnsetSwitchesGiveTheDefaults) {
  const NoSwitches none;
  const knn::detail::GpuTuning t = knn::detail::gpu_tuning();
  EXPECT_FALSE(t.timing);
  EXPECT_FALSE(t.sgemm);
  EXPECT_EQ(t.blas, -1);
  EXPECT_EQ(t.fused, -1);
  EXPECT_TRUE(t.fp16);
  EXPECT_EQ(t.chunks, 0);
  EXPECT_TRUE(t.vote);
  EXPECT_EQ(t.fused_stride, 0);
  EXPECT_TRUE(t.wgmma);
  EXPECT_TRUE(t.prune);
}

TEST(GpuTuning, FusedStrideIsClampedAndEmptyMeansTheDefault) {
  const NoSwitches none;
  const std::pair<const char*, int> cases[] = {{"12", 12}, {"1", 1}, {"0", 1}, {"-5", 1}, {"5000", 1024}, {"", 0}};
  for (const auto& [text, want] : cases) {
    const knn::test::ScopedEnv env("KNN_GPU_FUSED_STRIDE", text);
    EXPECT_EQ(knn::detail::gpu_tuning().fused_stride, want) << "KNN_GPU_FUSED_STRIDE=" << text;
  }
}

TEST(GpuTuning, SwitchesTakeTheirValues) {
  const NoSwitches none;
  const knn::test::ScopedEnv fused("KNN_GPU_FUSED", "1"), fp16("KNN_GPU_FP16", "0"), chunks("KNN_GPU_CHUNKS", "3"),
      blas("KNN_GPU_BLAS", "0"), vote("KNN_GPU_VOTE", "0"), wgmma("KNN_GPU_WGMMA", "0"),
      prune("KNN_GPU_PRUNE", "0");
  const knn::detail::GpuTuning t = knn::detail::gpu_tuning();
  EXPECT_EQ(t.fused, 1);
  EXPECT_FALSE(t.fp16);
  EXPECT_EQ(t.chunks, 3);
  EXPECT_EQ(t.blas, 0);
  EXPECT_FALSE(t.vote);
  EXPECT_FALSE(t.wgmma);
  EXPECT_FALSE(t.prune);
  const knn::test::ScopedEnv off("KNN_GPU_FUSED", "0");
  EXPECT_EQ(knn::detail::gpu_tuning().fused, 0);
}

}  // namespace
