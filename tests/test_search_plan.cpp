// The GPU backend's plan (search_plan.cu) on its own: which path a shape takes. It reads the
// shapes of the request only, so the matrices here hold no values, and no GPU is needed.
#include <gtest/gtest.h>

#include <cstddef>

#include "backend/cuda/search_plan.cuh"
#include "knn/knn.hpp"

namespace {

// A plan for n training rows and 10,000 queries of `cols` features at k, TF32 pass (precision
// auto, tensor cores), on a device with 80 GiB free; `wgmma`: Hopper's warpgroup kernels run.
knn::cuda::SearchPlan plan(std::size_t n, std::size_t cols, std::size_t k, bool wgmma, const knn::detail::GpuTuning& tuning = {}) {
  knn::Matrix train;  // the shape only
  train.rows = n;
  train.cols = cols;
  knn::SearchRequest r;
  r.train = &train;
  r.queries = knn::MatrixView(10000, cols, nullptr);
  r.k = k;
  return knn::cuda::plan_search(r, knn::BackendOptions{}, true, wgmma, tuning, nullptr, std::size_t{80} << 30);
}

}  // namespace

// Rows of more than 128 terms take the fused pass by default where its warpgroup kernel runs, for
// k up to 16 (tau from the kernel's own pass over one training row in round(14 / sqrt(k))) and
// 5,000 training rows or more: the shapes bench_knn_gpu --wide-by-rows measured it faster on.
// Elsewhere they keep the written products, unless the tuning asks for the fused pass.
TEST(SearchPlan, WideRowsTakeTheFusedPassWhereItWasMeasuredToPay) {
  const auto fm = plan(60000, 784, 5, true);  // Fashion-MNIST
  EXPECT_TRUE(fm.tf32);
  EXPECT_TRUE(fm.fused);
  EXPECT_TRUE(fm.fp16);
  EXPECT_TRUE(fm.sample_tau);
  EXPECT_EQ(fm.stride, 6);
  EXPECT_EQ(fm.s_pitch, 0) << "no product is written";
  EXPECT_EQ(plan(60000, 784, 1, true).stride, 14);
  EXPECT_EQ(plan(60000, 784, 16, true).stride, 4);
  EXPECT_TRUE(plan(5000, 784, 5, true).fused);
  EXPECT_TRUE(plan(60000, 200, 16, true).fused);
  EXPECT_FALSE(plan(4999, 784, 5, true).fused) << "fewer training rows than measured";
  EXPECT_FALSE(plan(60000, 784, 17, true).fused) << "past the kernel's own sample's pass";
  EXPECT_FALSE(plan(60000, 784, 5, false).fused) << "mma.sync's wide kernel was slower than writing";
  knn::detail::GpuTuning asked;
  asked.fused = 1;
  const auto forced = plan(60000, 784, 5, false, asked);
  EXPECT_TRUE(forced.fused);
  EXPECT_FALSE(forced.sample_tau) << "without the warpgroup kernel the sample's products are written";
  EXPECT_GT(forced.s_pitch, 0);
  asked.fused = 0;
  EXPECT_FALSE(plan(60000, 784, 5, true, asked).fused);
}

// The first round's lists are pruned before they are ranked where the wide warpgroup kernel takes
// them (it alone keeps the candidates' bounds), for k up to 32; the bounds take 8 bytes a place.
TEST(SearchPlan, WideWarpgroupListsArePruned) {
  EXPECT_TRUE(plan(60000, 784, 5, true).prune);
  EXPECT_TRUE(plan(60000, 784, 16, true).prune);
  knn::detail::GpuTuning asked;
  asked.fused = 1;
  EXPECT_TRUE(plan(60000, 784, 32, true, asked).prune);
  EXPECT_FALSE(plan(60000, 784, 33, true, asked).prune) << "a warp holds 32 upper bounds";
  EXPECT_FALSE(plan(60000, 784, 5, false, asked).prune) << "mma.sync's wide kernel keeps no bounds";
  EXPECT_FALSE(plan(1000000, 128, 10, true).prune) << "the narrow warpgroup kernel keeps no bounds";
  asked.fused = 0;
  EXPECT_FALSE(plan(60000, 784, 5, true, asked).prune) << "written products";
  knn::detail::GpuTuning whole;
  whole.prune = false;
  EXPECT_FALSE(plan(60000, 784, 5, true, whole).prune) << "KNN_GPU_PRUNE=0";
}

// Rows of up to 128 terms keep their rule: the fused pass from 10^6 training rows, k <= 10, or
// k <= 1,024 on the warpgroup kernel.
TEST(SearchPlan, NarrowRowsKeepTheirRule) {
  EXPECT_TRUE(plan(1000000, 128, 10, true).fused);
  EXPECT_TRUE(plan(1000000, 128, 1000, true).fused);
  EXPECT_FALSE(plan(1000000, 128, 2048, true).fused);
  EXPECT_FALSE(plan(999999, 128, 10, true).fused);
  EXPECT_TRUE(plan(1000000, 128, 10, false).fused);
  EXPECT_FALSE(plan(1000000, 128, 11, false).fused);
}
