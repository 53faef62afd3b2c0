// knn::search_on_device: queries and lists in GPU memory. Its lists must equal the CPU backend's,
// bit for bit, on fresh random data, on every path of the GPU search (the first round, the second
// round's rows written in place, lists ranked by the segmented sort, k above 2,048, several chunks
// and tiles); the lists are poisoned before each search. Pointers that are not the GPU's and query
// values that are not finite are refused before anything is written. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "knn/knn.hpp"
#include "require_gpu.hpp"
#include "test_util.hpp"

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// Device (or managed) memory for `count` values of T, freed at the end of the scope.
template <class T>
class GpuBuffer {
 public:
  explicit GpuBuffer(std::size_t count, bool managed = false) : count_(count) {
    const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
    const cudaError_t e = managed ? cudaMallocManaged(reinterpret_cast<void**>(&p_), bytes) : cudaMalloc(reinterpret_cast<void**>(&p_), bytes);
    if (e != cudaSuccess) throw std::runtime_error(std::string("cudaMalloc: ") + cudaGetErrorString(e));
  }
  ~GpuBuffer() { cudaFree(p_); }
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;
  T* get() const { return p_; }
  std::vector<T> to_host() const {
    std::vector<T> v(count_);
    if (cudaMemcpy(v.data(), p_, count_ * sizeof(T), cudaMemcpyDefault) != cudaSuccess) throw std::runtime_error("cudaMemcpy");
    return v;
  }
  void from_host(const T* v) const {
    if (cudaMemcpy(p_, v, count_ * sizeof(T), cudaMemcpyDefault) != cudaSuccess) throw std::runtime_error("cudaMemcpy");
  }
  // Every byte 0xff: an index of -1 and a distance that is NaN, which no search writes.
  void poison() const {
    if (cudaMemset(p_, 0xff, count_ * sizeof(T)) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
      throw std::runtime_error("cudaMemset");
  }

 private:
  std::size_t count_;
  T* p_ = nullptr;
};

std::shared_ptr<const knn::Backend> gpu(knn::Precision p = knn::Precision::automatic, std::size_t budget = 0) {
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  o.precision = p;
  o.device_memory_budget = budget;
  return knn::make_backend(o);
}

knn::Neighbors on_cpu(const knn::Matrix& train, const knn::Matrix& q, std::size_t k, knn::Metric m) {
  knn::SearchRequest r;
  r.train = &train;
  r.queries = q;
  r.k = k;
  r.metric = m;
  return knn::search(*knn::make_backend({knn::Device::cpu}), r);
}

// search_on_device of q against train (prepared first with `prepare`), its lists read back.
knn::Neighbors on_device(const knn::Backend& b, const knn::Matrix& train, const knn::Matrix& q, std::size_t k, knn::Metric m,
                         bool prepare, bool managed = false) {
  GpuBuffer<float> dq(q.values.size(), managed);
  dq.from_host(q.values.data());
  GpuBuffer<std::int64_t> index(q.rows * k, managed);
  GpuBuffer<double> dist(q.rows * k, managed);
  index.poison();
  dist.poison();
  const auto prepared = prepare ? b.prepare(train) : nullptr;
  knn::DeviceSearchRequest r;
  r.train = &train;
  r.prepared = prepared.get();
  r.queries = dq.get();
  r.rows = q.rows;
  r.k = k;
  r.metric = m;
  r.index = index.get();
  r.distance = dist.get();
  knn::search_on_device(b, r);
  knn::Neighbors nb;
  nb.queries = q.rows;
  nb.k = k;
  nb.index = index.to_host();
  nb.distance = dist.to_host();
  return nb;
}

void expect_identical(const knn::Neighbors& got, const knn::Neighbors& cpu, const std::string& what) {
  ASSERT_EQ(got.index.size(), cpu.index.size()) << what;
  for (std::size_t i = 0; i < cpu.index.size(); ++i) {
    ASSERT_EQ(got.index[i], cpu.index[i]) << what << " at " << i << " (query " << i / cpu.k << ")";
    ASSERT_EQ(got.distance[i], cpu.distance[i]) << what << " at " << i;
  }
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const knn::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// Random rows, a third of them copies (ties), with queries that hit training rows exactly: every
// metric, k on both selection paths, with and without prepared rows, each precision.
TEST(CudaDeviceSearch, ListsEqualTheCpuBackends) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::size_t shapes[][3] = {{1, 1, 1}, {3000, 17, 333}, {6000, 128, 130}, {2500, 300, 2600}};
  for (const auto& s : shapes) {
    auto train = knn::test::random_matrix(s[0], s[1], rng);
    for (std::size_t i = 1; i < train.rows; i += 3) std::copy_n(train.row(i - 1), train.cols, train.row(i));
    auto q = knn::test::random_matrix(s[2], s[1], rng);
    for (std::size_t i = 0; i < std::min(q.rows, train.rows); i += 2) std::copy_n(train.row(i), q.cols, q.row(i));
    for (const auto m : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
      for (const std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{300}, std::size_t{2100}}) {
        if (k > s[0]) continue;
        const auto cpu = on_cpu(train, q, k, m);
        for (const auto p : {knn::Precision::automatic, knn::Precision::fp32, knn::Precision::tf32}) {
          const auto b = gpu(p);
          for (const bool prepare : {true, false}) {
            const std::string what = "n=" + std::to_string(s[0]) + " d=" + std::to_string(s[1]) + " q=" + std::to_string(s[2]) +
                                     " k=" + std::to_string(k) + " " + knn::to_string(m) + " precision " +
                                     std::to_string(static_cast<int>(p)) + (prepare ? " prepared" : "");
            expect_identical(on_device(*b, train, q, k, m, prepare), cpu, what);
          }
        }
        if (m == knn::Metric::l2 && k <= 300) {
          // The fused pass (products and candidates in one kernel), wherever it can run.
          const knn::test::ScopedEnv fused("KNN_GPU_FUSED", "1");
          expect_identical(on_device(*gpu(knn::Precision::tf32), train, q, k, m, true), cpu, "fused, k=" + std::to_string(k));
        }
      }
  }
}

// Thousands of rows tied with the queries: their lists overflow the first round and are redone in
// a second round (its lists written to their queries' rows in place), some ranked by the
// segmented sort; the tied queries are scattered among others. A small memory budget then takes
// the queries in several tiles.
TEST(CudaDeviceSearch, SecondRoundListsAndTilesLandOnTheirQueries) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::size_t d = 40;
  const auto base = knn::test::random_matrix(1, d, rng, 0.0f, 1.0f);
  auto train = knn::test::random_matrix(6000, d, rng, 0.0f, 1.0f);
  for (std::size_t i = 0; i < 3000; ++i) {
    std::copy_n(base.row(0), d, train.row(2 * i));
    if (i % 4) {
      float& v = train(2 * i, rng() % d);
      for (unsigned s = 0; s < 1 + rng() % 3; ++s) v = std::nextafter(v, 2.0f);
    }
  }
  auto q = knn::test::random_matrix(600, d, rng, 0.0f, 1.0f);
  for (std::size_t i = 3; i < q.rows; i += 7) std::copy_n(base.row(0), d, q.row(i));
  for (const auto m : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
    for (const std::size_t k : {std::size_t{5}, std::size_t{700}, std::size_t{2500}}) {
      const auto cpu = on_cpu(train, q, k, m);
      const std::string what = std::string(knn::to_string(m)) + " k=" + std::to_string(k);
      expect_identical(on_device(*gpu(knn::Precision::tf32), train, q, k, m, true), cpu, what);
      // 4 MiB: the training rows (1 MiB) and a few hundred queries' bounds a tile.
      expect_identical(on_device(*gpu(knn::Precision::fp32, 4u << 20), train, q, k, m, false), cpu, what + ", 4 MiB budget");
    }
}

TEST(CudaDeviceSearch, TakesManagedMemory) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(5000, 24, rng);
  const auto q = knn::test::random_matrix(400, 24, rng);
  for (const std::size_t k : {std::size_t{8}, std::size_t{3000}})
    expect_identical(on_device(*gpu(), train, q, k, knn::Metric::l2, true, /*managed=*/true), on_cpu(train, q, k, knn::Metric::l2),
                     "managed, k=" + std::to_string(k));
}

// Host memory, values that are not finite and a budget too small for the training rows: one
// error, and the lists as they were.
TEST(CudaDeviceSearch, RefusesWhatItCannotSearchAndWritesNothing) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(20000, 16, rng);
  auto q = knn::test::random_matrix(50, 16, rng);
  const std::size_t k = 4;
  GpuBuffer<float> dq(q.values.size());
  GpuBuffer<std::int64_t> index(q.rows * k);
  GpuBuffer<double> dist(q.rows * k);
  index.poison();
  dist.poison();
  const auto b = gpu();
  knn::DeviceSearchRequest r;
  r.train = &train;
  r.rows = q.rows;
  r.k = k;
  r.index = index.get();
  r.distance = dist.get();
  const auto untouched = [&](const std::string& what) {
    for (const auto i : index.to_host()) ASSERT_EQ(i, -1) << what;
    for (const auto v : dist.to_host()) ASSERT_TRUE(std::isnan(v)) << what;
  };

  r.queries = q.values.data();
  EXPECT_NE(message_of([&] { knn::search_on_device(*b, r); }).find("parameter queries: host memory"), std::string::npos)
      << message_of([&] { knn::search_on_device(*b, r); });
  untouched("host queries");

  std::vector<std::int64_t> host_index(q.rows * k);
  r.queries = dq.get();
  r.index = host_index.data();
  EXPECT_NE(message_of([&] { knn::search_on_device(*b, r); }).find("parameter index: host memory"), std::string::npos);
  r.index = index.get();

  const std::pair<float, const char*> bad[] = {{std::numeric_limits<float>::quiet_NaN(), "nan"},
                                               {std::numeric_limits<float>::infinity(), "inf"},
                                               {-std::numeric_limits<float>::infinity(), "-inf"}};
  for (const auto& [value, name] : bad) {
    auto poisoned = q;
    poisoned(40, 11) = value;
    poisoned(41, 2) = value;  // a later one is not the one named
    dq.from_host(poisoned.values.data());
    const std::string e = message_of([&] { knn::search_on_device(*b, r); });
    EXPECT_NE(e.find(std::string("parameter queries: row 41, feature 12 is ") + name + ";"), std::string::npos) << e;
    untouched(name);
  }

  dq.from_host(q.values.data());
  r.k = 0;
  EXPECT_NE(message_of([&] { knn::search_on_device(*b, r); }).find("out of range"), std::string::npos);
  r.k = k;
  // 256 KiB cannot hold the training rows (1.2 MiB): a search of host memory takes them in parts,
  // one of device memory says so.
  const std::string parts = message_of([&] { knn::search_on_device(*gpu(knn::Precision::automatic, 256u << 10), r); });
  EXPECT_NE(parts.find("do not fit"), std::string::npos) << parts;
  untouched("budget");

  // And with everything in order, the lists are the CPU's.
  knn::search_on_device(*b, r);
  const auto cpu = on_cpu(train, q, k, knn::Metric::l2);
  EXPECT_EQ(index.to_host(), cpu.index);
  EXPECT_EQ(dist.to_host(), cpu.distance);
}
