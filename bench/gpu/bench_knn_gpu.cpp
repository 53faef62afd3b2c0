// kNN on the GPU backend against the CPU backend: Fashion-MNIST (from the CSVs that
// scripts/fashion_mnist_csv.py writes), the synthetic 1,000,000 x 128 set, k above 2,048, repeated rows, and a scaling table.
// Times are wall-clock medians of whole search calls (host data in, neighbours out), so they
// include the transfers (--targets also times searches of GPU memory); beside them, the peak
// device memory of each row (DevicePeak says what it holds). PyTorch and FAISS run beside it from
// bench/gpu/torch_knn.py.
//
//   bench_knn_gpu [TRAIN_CSV TEST_CSV [--no-scaling | --fm-only | --core | --stages]]
//     --core: Fashion-MNIST, the synthetic 10^6 x 128 set and k above 2,048 only
//     --targets [TEXT]: the four searches of the tensor-core targets only, precision auto
//       (targets()); with TEXT, only those whose name holds it (say "k = 10")
//   bench_knn_gpu --large-k   (only the tables of k above 2,048 and of repeated rows)
//   bench_knn_gpu --precision-choice   (only the table of both precisions on data hard for tf32)
//   bench_knn_gpu --fused-by-k   (only the table of the default, written and fused paths from k = 16 to 2,048)
//   bench_knn_gpu TRAIN_CSV TEST_CSV --wide-by-rows   (the same paths on Fashion-MNIST's first N training rows)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "knn/knn.hpp"

namespace {

// With warm_up, one call first (context, cuBLAS handle, first allocations) that is not timed.
double median_ms(const std::function<void()>& f, int reps, bool warm_up = true) {
  if (warm_up) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::shared_ptr<const knn::Backend> make(knn::Device dev, knn::Precision p) {
  knn::BackendOptions o;
  o.device = dev;
  o.precision = p;
  return knn::make_backend(o);
}

// One backend per device and precision, kept as a model keeps its own: the GPU backend holds its
// stream, cuBLAS handle and workspace between searches. (The tables' GPU rows make their own:
// gpu_row.)
const knn::Backend& backend(knn::Device dev, knn::Precision p) {
  static std::map<std::pair<int, int>, std::shared_ptr<const knn::Backend>> made;
  auto& b = made[{static_cast<int>(dev), static_cast<int>(p)}];
  if (!b) b = make(dev, p);
  return *b;
}

// One search; with `prepared`, the training rows are already on the device (as after fit()).
knn::Neighbors search(const knn::Backend& b, const knn::Matrix& train, const knn::Matrix& q, std::size_t k,
                      const knn::PreparedTrain* prepared = nullptr) {
  knn::SearchRequest r;
  r.train = &train;
  r.prepared = prepared;
  r.queries = q;
  r.k = k;
  return knn::search(b, r);
}
knn::Neighbors search(knn::Device dev, knn::Precision p, const knn::Matrix& train, const knn::Matrix& q, std::size_t k,
                      const knn::PreparedTrain* prepared = nullptr) {
  return search(backend(dev, p), train, q, k, prepared);
}

std::shared_ptr<const knn::PreparedTrain> prepare(const knn::Matrix& train) {
  return make(knn::Device::cuda, knn::Precision::fp32)->prepare(train);
}

// The most device memory in use (cudaMemGetInfo: total less free, for the whole device) from its
// making to mib(), less what was in use at its making. A thread samples it every 0.1 ms, so that
// memory a search frees before it returns (training rows uploaded for that search alone) counts
// too; the backend's own buffers only grow and stay until it is destroyed, so the sample at the
// end holds them whatever the sampling missed. Memory that other processes take meanwhile would
// count: nothing else runs on the benchmark machine.
class DevicePeak {
 public:
  DevicePeak() {
    if (cudaGetDevice(&device_) != cudaSuccess || !used(base_)) throw knn::Error("cudaMemGetInfo failed");
    peak_ = base_;
    sampler_ = std::thread([this] {
      cudaSetDevice(device_);
      std::size_t u = 0;
      while (!stop_.load()) {
        if (used(u)) peak_ = std::max(peak_, u);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
  }
  ~DevicePeak() { finish(); }
  DevicePeak(const DevicePeak&) = delete;
  DevicePeak& operator=(const DevicePeak&) = delete;
  double mib() {
    finish();
    return static_cast<double>(peak_ - base_) / (1024.0 * 1024.0);
  }

 private:
  static bool used(std::size_t& out) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return false;
    out = total_bytes - free_bytes;
    return true;
  }
  // peak_ is the sampler's alone until it is joined.
  void finish() {
    if (!sampler_.joinable()) return;
    stop_ = true;
    sampler_.join();
    std::size_t u = 0;
    if (used(u)) peak_ = std::max(peak_, u);
  }
  int device_ = 0;
  std::size_t base_ = 0, peak_ = 0;
  std::atomic<bool> stop_{false};
  std::thread sampler_;
};

struct GpuRow {
  double ms;   // median time of a call
  double mib;  // peak device memory
};

// A table row's figures on a GPU backend made for the row, so that buffers kept by another row's
// backend neither count nor serve it: the peak device memory (DevicePeak) of uploading the training
// rows (with `resident`, as fit() does) and of the first call of `run`, then the median time of
// `reps` more calls. The peak holds the training rows and their norms, the backend's stream,
// cuBLAS handle and workspace, and the search's buffers (the backend keeps them between searches):
// per tile of queries one float per query and training row, the queries, the candidates and the
// results. Tiles are sized from 80% of the free memory, so a GPU with more memory takes larger
// tiles and shows a larger peak (`--gpu-memory` caps it). Not included: the CUDA context, made
// before, and page-locked host buffers, which are host memory.
GpuRow gpu_row(knn::Precision p, const knn::Matrix& train, bool resident, int reps,
               const std::function<void(const knn::Backend&, const knn::PreparedTrain*)>& run) {
  const auto b = make(knn::Device::cuda, p);
  GpuRow row{};
  std::shared_ptr<const knn::PreparedTrain> prepared;
  {
    DevicePeak peak;
    if (resident) prepared = b->prepare(train);
    run(*b, prepared.get());
    row.mib = peak.mib();
  }
  row.ms = median_ms([&] { run(*b, prepared.get()); }, reps, /*warm_up=*/false);
  return row;
}

// CUDA loads kernels when they are first launched, into device memory: a small search in each
// precision, before any row is measured, keeps that out of the first row's peak (cuBLAS may still
// load a kernel for a shape it has not seen).
void load_kernels() {
  std::mt19937_64 rng(3);
  knn::Matrix x(4096, 64), q(256, 64);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : x.values) v = u(rng);
  for (auto& v : q.values) v = u(rng);
  for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
    const auto b = make(knn::Device::cuda, p);
    search(*b, x, q, 5);
    search(*b, x, q, 300, b->prepare(x).get());  // k > 256 takes other kernels
  }
}

// The first `rows` rows of m: the queries a table checks against the CPU backend.
knn::Matrix first_rows(const knn::Matrix& m, std::size_t rows) {
  knn::Matrix head(rows, m.cols);
  std::copy_n(m.values.begin(), head.values.size(), head.values.begin());
  return head;
}

std::size_t mismatches(const knn::Neighbors& a, const knn::Neighbors& b, std::size_t queries) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < queries * a.k; ++i) bad += a.index[i] != b.index[i] || a.distance[i] != b.distance[i];
  return bad;
}

// Uniform values in [0, 1), made in parallel (one generator takes several seconds for the billion
// values of the largest scaling rows): blocks of 2^20 values, each from a generator of its own
// seeded from `rng`, so the values do not depend on the thread count.
knn::Matrix uniform(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  knn::Matrix m(rows, cols);
  const std::uint64_t seed = rng();
  const std::size_t block = std::size_t{1} << 20, size = m.values.size();
  const auto blocks = static_cast<std::ptrdiff_t>((size + block - 1) / block);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t i = 0; i < blocks; ++i) {
    std::mt19937_64 g(seed + static_cast<std::uint64_t>(i));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    const std::size_t b = static_cast<std::size_t>(i) * block, e = std::min(size, b + block);
    for (std::size_t j = b; j < e; ++j) m.values[j] = u(g);
  }
  return m;
}

// Fashion-MNIST's training and test rows, min-max scaled on the training rows.
struct Scaled {
  knn::Dataset train, test;
  knn::Matrix x, q;
  knn::Scaler scaler;  // fitted on the training rows
};
Scaled load_scaled(const std::string& train_csv, const std::string& test_csv) {
  Scaled d{knn::load_csv(train_csv, {}), {}, {}, {}, knn::Scaler(knn::Scaling::minmax)};
  d.test = knn::load_query_csv(test_csv, {}, d.train);
  d.x = d.train.features;
  d.q = d.test.features;
  d.scaler.fit(d.x);
  d.scaler.transform(d.x);
  d.scaler.transform(d.q);
  return d;
}

// The GPU rows of a table: fp32 (products from split operands on TF32 tensor cores), fp32 with
// the float32 FMA product (KNN_GPU_SGEMM=1, read when a backend is made), fp32 with cuBLAS's
// products from the first search (KNN_GPU_BLAS=1; by default a backend opens cuBLAS only once
// its products have cost more than loading it), tf32 (the default path) and with cuBLAS's, tf32
// with the products written (KNN_GPU_FUSED=0), tf32 with products and candidates in one kernel
// (KNN_GPU_FUSED=1: l2 with up to 128 product terms) and that kernel on TF32 operands instead of
// its default FP16 ones (KNN_GPU_FP16=0: with more than 128 features, the written products on
// TF32 operands, since the wide fused kernel takes FP16 operands only).
struct Variant {
  knn::Precision p;
  const char* env;  // set to "0" or "1" for the row, or null
  const char* value;
  const char* name;
};
constexpr Variant kVariants[] = {{knn::Precision::fp32, nullptr, nullptr, "fp32"},
                                 {knn::Precision::fp32, "KNN_GPU_SGEMM", "1", "fp32, float32 FMA product (KNN_GPU_SGEMM=1)"},
                                 {knn::Precision::fp32, "KNN_GPU_BLAS", "1", "fp32, cuBLAS's products (KNN_GPU_BLAS=1)"},
                                 {knn::Precision::tf32, nullptr, nullptr, "tf32"},
                                 {knn::Precision::tf32, "KNN_GPU_BLAS", "1", "tf32, cuBLAS's products (KNN_GPU_BLAS=1)"},
                                 {knn::Precision::tf32, "KNN_GPU_FUSED", "0", "tf32, products written (KNN_GPU_FUSED=0)"},
                                 {knn::Precision::tf32, "KNN_GPU_FUSED", "1", "tf32, products and candidates fused (KNN_GPU_FUSED=1)"},
                                 {knn::Precision::tf32, "KNN_GPU_FP16", "0", "tf32, fused pass on TF32 operands (KNN_GPU_FP16=0)"}};
class EnvScope {
 public:
  explicit EnvScope(const Variant& v) : name_(v.env) {
    if (name_) setenv(name_, v.value, 1);
  }
  ~EnvScope() {
    if (name_) unsetenv(name_);
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  const char* name_;
};

void fashion_mnist(const std::string& train_csv, const std::string& test_csv) {
  const Scaled fm = load_scaled(train_csv, test_csv);
  const auto &train = fm.train, &test = fm.test;
  const knn::Matrix &x = fm.x, &q = fm.q;
  knn::LabelEncoder enc;
  enc.fit(train.labels);
  const auto y = enc.encode(train.labels), yt = enc.encode(test.labels);
  const auto cpu_t0 = std::chrono::steady_clock::now();
  const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, x, q, 5);
  const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_t0).count();
  std::printf("\n| Fashion-MNIST 60,000 x 784, 10,000 queries, k = 5 | time (ms) | accuracy | neighbours differing from CPU | peak device memory (MiB) |\n|---|---|---|---|---|\n");
  for (const Variant& v : kVariants)
    for (bool resident : {false, true}) {
      if (v.env && std::string(v.env) == "KNN_GPU_FUSED" && std::string(v.value) == "1") continue;  // the tf32 row's default
      const EnvScope env(v);
      knn::Neighbors nb;
      std::vector<int> pred(q.rows);
      const GpuRow r = gpu_row(v.p, x, resident, 7, [&](const knn::Backend& b, const knn::PreparedTrain* prep) {
        nb = search(b, x, q, 5, prep);
        knn::vote_prefixes(nb, y.data(), enc.size(), knn::Weights{}, {5}, pred.data());
      });
      std::size_t hit = 0;
      for (std::size_t i = 0; i < q.rows; ++i) hit += pred[i] == yt[i];
      std::printf("| libknn GPU %s, search + vote, %s | %.2f | %.4f | %zu | %.0f |\n", v.name,
                  resident ? "training rows on the GPU" : "uploading the training rows", r.ms,
                  static_cast<double>(hit) / static_cast<double>(q.rows), mismatches(nb, cpu, q.rows), r.mib);
    }
  std::printf("| libknn CPU backend (all cores), search | %.0f | | reference | |\n", cpu_ms);

  // Queries given unscaled, as a model's predict() has them: scaled by the backend in a pass of
  // their own (uploaded, scaled, downloaded), then searched (uploaded again); or scaled by the
  // search in device memory as they arrive (SearchRequest::scaler).
  std::printf("\n| Fashion-MNIST, 10,000 queries given unscaled, k = 5, training rows on the GPU | fp32 (ms) | tf32 (ms) | neighbours differing from CPU |\n|---|---|---|---|\n");
  for (const bool in_search : {false, true}) {
    double ms[2] = {0.0, 0.0};
    std::size_t differing = 0;
    for (const knn::Precision p : {knn::Precision::fp32, knn::Precision::tf32}) {
      knn::Neighbors nb;
      const GpuRow r = gpu_row(p, x, true, 7, [&](const knn::Backend& b, const knn::PreparedTrain* prep) {
        knn::SearchRequest req;
        req.train = &x;
        req.prepared = prep;
        req.k = 5;
        knn::Matrix scaled;
        if (in_search) {
          req.queries = test.features;
          req.scaler = &fm.scaler;
        } else {
          scaled = test.features;
          b.scale(fm.scaler, scaled);
          req.queries = scaled;
        }
        nb = knn::search(b, req);
      });
      ms[p == knn::Precision::tf32] = r.ms;
      differing += mismatches(nb, cpu, q.rows);
    }
    std::printf("| %s | %.2f | %.2f | %zu |\n",
                in_search ? "scaled by the search as they arrive (SearchRequest::scaler)" : "scaled by Backend::scale, then searched", ms[0],
                ms[1], differing);
  }
}

void synthetic() {
  std::mt19937_64 rng(1);
  const auto train = uniform(1000000, 128, rng);
  const auto q = uniform(10000, 128, rng);
  const knn::Matrix check_q = first_rows(q, 100);
  std::printf("\n| synthetic 1,000,000 x 128, 10,000 queries, training rows on the GPU | time (ms) | of 100 queries checked, neighbours differing from CPU | peak device memory (MiB) |\n|---|---|---|---|\n");
  for (std::size_t k : {10u, 1000u}) {
    const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, train, check_q, k);
    for (const Variant& v : kVariants) {
      const EnvScope env(v);
      knn::Neighbors nb;
      const GpuRow r = gpu_row(v.p, train, true, 3,
                               [&](const knn::Backend& b, const knn::PreparedTrain* prep) { nb = search(b, train, q, k, prep); });
      std::printf("| k = %zu, %s | %.1f | %zu | %.0f |\n", k, v.name, r.ms, mismatches(nb, cpu, 100), r.mib);
    }
  }
}

// k above the two-pass path's limit (2,048): tau is each query's k-th upper bound from
// knn::prim::radix_select_kth, which takes a block a query from 1,024 queries up and splits the
// rows of fewer queries into chunks. Every candidate list is longer than a block ranks in shared
// memory, so the lists are ranked on the host: the times include that.
void large_k() {
  std::mt19937_64 rng(4);
  const auto train = uniform(100000, 64, rng);
  std::printf("\n| synthetic 100,000 x 64, training rows on the GPU | time (ms) | of 20 queries checked, neighbours differing from CPU | peak device memory (MiB) |\n|---|---|---|---|\n");
  const std::size_t shapes[][2] = {{2000, 4096}, {200, 4096}, {200, 16384}};
  for (const auto& s : shapes) {
    const auto q = uniform(s[0], 64, rng);
    const knn::Matrix check_q = first_rows(q, 20);
    const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, train, check_q, s[1]);
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
      knn::Neighbors nb;
      const GpuRow r = gpu_row(p, train, true, 3, [&](const knn::Backend& b, const knn::PreparedTrain* prep) { nb = search(b, train, q, s[1], prep); });
      std::printf("| %zu queries, k = %zu, %s | %.1f | %zu | %.0f |\n", s[0], s[1], p == knn::Precision::fp32 ? "fp32" : "tf32", r.ms,
                  mismatches(nb, cpu, 20), r.mib);
    }
  }
}

// Tabular data with many repeated rows: every query's list holds 5,000 rows tied at its k-th,
// more than a block ranks in shared memory, so the lists are ranked by the segmented sort.
void duplicates() {
  std::mt19937_64 rng(5);
  const auto distinct = uniform(40, 32, rng);
  knn::Matrix train(200000, 32), q(1000, 32);
  for (std::size_t i = 0; i < train.rows; ++i) std::copy_n(distinct.row(i % distinct.rows), 32, train.row(i));
  for (std::size_t i = 0; i < q.rows; ++i) std::copy_n(distinct.row((i * 7) % distinct.rows), 32, q.row(i));
  const knn::Matrix check_q = first_rows(q, 20);
  std::printf("\n| 200,000 x 32 training rows: 40 distinct rows, 5,000 copies each; 1,000 queries at them | time (ms) | of 20 queries checked, neighbours differing from CPU |\n|---|---|---|\n");
  for (std::size_t k : {10u, 100u}) {
    const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, train, check_q, k);
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
      knn::Neighbors nb;
      const GpuRow r = gpu_row(p, train, true, 3, [&](const knn::Backend& b, const knn::PreparedTrain* prep) { nb = search(b, train, q, k, prep); });
      std::printf("| k = %zu, %s | %.1f | %zu |\n", k, p == knn::Precision::fp32 ? "fp32" : "tf32", r.ms, mismatches(nb, cpu, 20));
    }
  }
}

// Which precision is faster depends on the data as well as the shape: the tf32 pass's margin is
// about 2^-9 of |q|^2 + |t|^2, the split pass's about 2^-22, so data whose neighbours lie close
// compared with the rows' norms (tight clusters, few features, a large offset) gives the tf32 pass
// more candidates to rank exactly. One table of both precisions on such data, training rows on
// the GPU, against the CPU on 20 queries.
void precision_choice() {
  std::mt19937_64 rng(6);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  struct Set {
    const char* name;
    knn::Matrix train, q;
  };
  std::vector<Set> sets;
  sets.push_back({"uniform 10^6 x 128", uniform(1000000, 128, rng), uniform(10000, 128, rng)});
  for (const std::size_t d : {4, 8, 16, 32})
    sets.push_back({d == 4 ? "uniform 10^6 x 4" : d == 8 ? "uniform 10^6 x 8" : d == 16 ? "uniform 10^6 x 16" : "uniform 10^6 x 32",
                    uniform(1000000, d, rng), uniform(10000, d, rng)});
  {  // 200 centres in [0, 1)^64, 1,000 rows each at a spread of 10^-3; queries near the centres
    const knn::Matrix centres = uniform(200, 64, rng);
    knn::Matrix x(200000, 64), q(10000, 64);
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t j = 0; j < 64; ++j) x(i, j) = centres(i % 200, j) + 1e-3f * noise(rng);
    for (std::size_t i = 0; i < q.rows; ++i)
      for (std::size_t j = 0; j < 64; ++j) q(i, j) = centres((i * 7) % 200, j) + 1e-3f * noise(rng);
    sets.push_back({"200 tight clusters, 200,000 x 64", std::move(x), std::move(q)});
  }
  {  // unscaled: an offset of 100 on values of spread 1
    knn::Matrix x = uniform(200000, 32, rng), q = uniform(10000, 32, rng);
    for (float& v : x.values) v += 100.0f;
    for (float& v : q.values) v += 100.0f;
    sets.push_back({"offset 100, 200,000 x 32", std::move(x), std::move(q)});
  }
  std::printf("\n| data, 10,000 queries | k | fp32 (ms) | tf32 (ms) | tf32 / fp32 | of 20 queries checked, neighbours differing from CPU (fp32 / tf32) |\n|---|---|---|---|---|---|\n");
  for (const Set& set : sets)
    for (std::size_t k : {10u, 100u}) {
      const knn::Matrix check_q = first_rows(set.q, 20);
      const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, set.train, check_q, k);
      double ms[2] = {0, 0};
      std::size_t bad[2] = {0, 0};
      for (const knn::Precision p : {knn::Precision::fp32, knn::Precision::tf32}) {
        const int i = p == knn::Precision::tf32;
        const GpuRow r = gpu_row(p, set.train, true, 3, [&](const knn::Backend& b, const knn::PreparedTrain* prep) { search(b, set.train, set.q, k, prep); });
        ms[i] = r.ms;
        const auto b = make(knn::Device::cuda, p);
        bad[i] = mismatches(search(*b, set.train, check_q, k), cpu, check_q.rows);
      }
      std::printf("| %s | %zu | %.1f | %.1f | %.2f | %zu / %zu |\n", set.name, k, ms[0], ms[1], ms[1] / ms[0], bad[0], bad[1]);
    }
}

// Shapes up to 8 GiB of training rows run (10^6 x 1,024 is 3.8 GiB, 10^7 x 128 is 4.8 GiB):
// 10^7 x 1,024 would be 38 GiB, more than the backend keeps on a GPU (prepare() declines more
// than a quarter of the free memory), so it would time uploads in parts rather than this table's
// "training rows on the GPU", and hold 38 GiB of host memory besides.
constexpr std::size_t kScalingMaxBytes = std::size_t{8} << 30;

void scaling() {
  std::mt19937_64 rng(2);
  std::printf("\n| n | d | 1,000 queries, k = 10, training rows on the GPU, fp32 (ms) | tf32 (ms) | tf32 products written, KNN_GPU_FUSED=0 (ms) | tf32 fused, KNN_GPU_FUSED=1 (ms) | fused on TF32 operands, KNN_GPU_FP16=0 (ms) | peak device memory, fp32 / tf32 / fused (MiB) |\n|---|---|---|---|---|---|---|---|\n");
  for (std::size_t n : {10000u, 100000u, 1000000u, 10000000u})
    for (std::size_t d : {16u, 64u, 128u, 1024u}) {
      const std::size_t bytes = n * d * sizeof(float);
      if (bytes > kScalingMaxBytes) {
        std::printf("| %zu | %zu | (not run: %.0f GiB of training rows) | | | | | |\n", n, d, static_cast<double>(bytes) / (1u << 30));
        continue;
      }
      const auto train = uniform(n, d, rng);
      const auto q = uniform(1000, d, rng);
      const auto row = [&](knn::Precision p) {
        return gpu_row(p, train, true, 3,
                       [&](const knn::Backend& b, const knn::PreparedTrain* prep) { search(b, train, q, 10, prep); });
      };
      const GpuRow f = row(knn::Precision::fp32), t = row(knn::Precision::tf32);
      setenv("KNN_GPU_FUSED", "0", 1);
      const GpuRow o = row(knn::Precision::tf32);
      setenv("KNN_GPU_FUSED", "1", 1);
      const GpuRow w = row(knn::Precision::tf32);
      setenv("KNN_GPU_FP16", "0", 1);
      const GpuRow h = row(knn::Precision::tf32);
      unsetenv("KNN_GPU_FP16");
      unsetenv("KNN_GPU_FUSED");
      std::printf("| %zu | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f / %.0f / %.0f |\n", n, d, f.ms, t.ms, o.ms, w.ms, h.ms, f.mib, t.mib,
                  w.mib);
    }
}

}  // namespace

// Each configuration once more with KNN_GPU_TIMING set: the backend prints its stages' device
// times to stderr (the stages then run one after another, so their sum exceeds the times above).
void stages(const std::string& train_csv, const std::string& test_csv) {
  setenv("KNN_GPU_TIMING", "1", 1);
  std::fprintf(stderr, "\nstage times, Fashion-MNIST, k = 5 (fp32, then tf32), training rows on the GPU:\n");
  const Scaled fm = load_scaled(train_csv, test_csv);
  const auto resident = prepare(fm.x);
  // Each precision three times: the first calls also load kernels and allocate the backend's buffers
  // (two page-locked staging buffers, taken in turn).
  for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
    for (int call = 0; call < 3; ++call) search(knn::Device::cuda, p, fm.x, fm.q, 5, resident.get());
  std::mt19937_64 rng(1);
  const auto st = uniform(1000000, 128, rng);
  const auto sq = uniform(10000, 128, rng);
  const auto sres = prepare(st);
  for (std::size_t k : {10u, 1000u})
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
      std::fprintf(stderr, "stage times, synthetic 1,000,000 x 128, k = %zu, %s:\n", k, p == knn::Precision::fp32 ? "fp32" : "tf32");
      search(knn::Device::cuda, p, st, sq, k, sres.get());
    }
  // (k = 10 in TF32 takes the fused pass by default, k = 1,000 the written products.)
  std::fprintf(stderr, "stage times, synthetic 1,000,000 x 128, k = 10, tf32, products written (KNN_GPU_FUSED=0):\n");
  // The switches are read when a backend is made: each of these rows makes its own.
  setenv("KNN_GPU_FUSED", "0", 1);
  search(*make(knn::Device::cuda, knn::Precision::tf32), st, sq, 10, sres.get());
  unsetenv("KNN_GPU_FUSED");
  std::fprintf(stderr, "stage times, synthetic 1,000,000 x 128, k = 10, tf32, fused pass on TF32 operands (KNN_GPU_FP16=0):\n");
  setenv("KNN_GPU_FP16", "0", 1);
  search(*make(knn::Device::cuda, knn::Precision::tf32), st, sq, 10, sres.get());
  unsetenv("KNN_GPU_FP16");
  // k = 1,000 through the fused pass (not the default there), on both kinds of operands.
  setenv("KNN_GPU_FUSED", "1", 1);
  for (const char* fp16 : {"1", "0"}) {
    std::fprintf(stderr, "stage times, synthetic 1,000,000 x 128, k = 1000, tf32, fused (KNN_GPU_FUSED=1, KNN_GPU_FP16=%s):\n", fp16);
    setenv("KNN_GPU_FP16", fp16, 1);
    search(*make(knn::Device::cuda, knn::Precision::tf32), st, sq, 1000, sres.get());
  }
  unsetenv("KNN_GPU_FP16");
  unsetenv("KNN_GPU_FUSED");
  // k above 2,048: the large-k table's first row.
  const auto lt = uniform(100000, 64, rng);
  const auto lq = uniform(2000, 64, rng);
  const auto lres = prepare(lt);
  for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
    std::fprintf(stderr, "stage times, synthetic 100,000 x 64, 2,000 queries, k = 4096, %s:\n", p == knn::Precision::fp32 ? "fp32" : "tf32");
    search(knn::Device::cuda, p, lt, lq, 4096, lres.get());
  }
  unsetenv("KNN_GPU_TIMING");
}

// Device memory for `count` values of T (cudaMalloc), freed with it.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(count, 1) * sizeof(T)) != cudaSuccess)
      throw knn::Error("cudaMalloc failed");
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  void upload(const T* from) const {
    if (cudaMemcpy(p_, from, count_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) throw knn::Error("cudaMemcpy failed");
  }
  // The first `count` values.
  std::vector<T> download(std::size_t count) const {
    std::vector<T> v(std::min(count, count_));
    if (cudaMemcpy(v.data(), p_, v.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) throw knn::Error("cudaMemcpy failed");
    return v;
  }

 private:
  std::size_t count_;
  T* p_ = nullptr;
};

// A search as FAISS's bfKnn is timed, on a backend of default options made for it (precision
// auto, training rows prepared): queries uploaded and lists allocated before, the lists left on
// the GPU (knn::search_on_device). The median of 5 calls after the first, and the first 20
// queries' lists.
struct OnGpu {
  double ms;
  knn::Neighbors first;
};
OnGpu search_on_gpu(const knn::Matrix& train, const knn::Matrix& q, std::size_t k) {
  DeviceBuffer<float> dq(q.values.size());
  DeviceBuffer<std::int64_t> index(q.rows * k);
  DeviceBuffer<double> dist(q.rows * k);
  dq.upload(q.values.data());
  OnGpu out;
  out.ms = gpu_row(knn::Precision::automatic, train, true, 5, [&](const knn::Backend& b, const knn::PreparedTrain* prep) {
             knn::DeviceSearchRequest d;
             d.train = &train;
             d.prepared = prep;
             d.queries = dq.get();
             d.rows = q.rows;
             d.k = k;
             d.index = index.get();
             d.distance = dist.get();
             knn::search_on_device(b, d);
           }).ms;
  out.first.k = k;
  out.first.index = index.download(20 * k);
  out.first.distance = dist.download(20 * k);
  return out;
}

// The searches the exactness-at-tensor-core-speed targets name, each on a backend of default
// options (precision auto) made for it, training rows on the GPU: Fashion-MNIST k = 5, 10^6 x 128
// at k = 10 and 1,000, and 100,000 x 64 with 2,000 queries at k = 4,096, each timed twice: from
// host memory to host memory (knn::search), and with queries and lists in GPU memory
// (knn::search_on_device), as FAISS's bfKnn is timed. Median of 5 calls after the first; run it
// in several processes to see how much a row moves between runs. With
// KNN_GPU_BLAS=1 the products are cuBLAS's from the first call.
void targets(const std::string& train_csv, const std::string& test_csv, const std::string& only) {
  const Scaled fm = load_scaled(train_csv, test_csv);
  std::mt19937_64 rng(1);
  const auto st = uniform(1000000, 128, rng);
  const auto sq = uniform(10000, 128, rng);
  std::mt19937_64 rng4(4);
  const auto lt = uniform(100000, 64, rng4);
  const auto lq = uniform(2000, 64, rng4);
  struct Row {
    const char* name;
    const knn::Matrix& train;
    const knn::Matrix& q;
    std::size_t k;
  };
  const Row rows[] = {{"Fashion-MNIST 60,000 x 784, 10,000 queries, k = 5", fm.x, fm.q, 5},
                      {"synthetic 10^6 x 128, 10,000 queries, k = 10", st, sq, 10},
                      {"synthetic 10^6 x 128, 10,000 queries, k = 1,000", st, sq, 1000},
                      {"synthetic 100,000 x 64, 2,000 queries, k = 4,096", lt, lq, 4096}};
  const char* blas = std::getenv("KNN_GPU_BLAS");
  std::printf("\n| search, precision auto, training rows on the GPU%s | host in, lists out (ms) | queries and lists on the GPU (ms) | "
              "of 20 queries checked, neighbours differing from CPU (host, GPU) |\n|---|---|---|---|\n",
              blas && *blas == '1' ? ", cuBLAS's products (KNN_GPU_BLAS=1)" : "");
  for (const Row& r : rows) {
    if (std::string(r.name).find(only) == std::string::npos) continue;
    knn::Neighbors nb;
    const GpuRow g = gpu_row(knn::Precision::automatic, r.train, true, 5,
                             [&](const knn::Backend& b, const knn::PreparedTrain* prep) { nb = search(b, r.train, r.q, r.k, prep); });
    const OnGpu on_gpu = search_on_gpu(r.train, r.q, r.k);
    const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, r.train, first_rows(r.q, 20), r.k);
    std::printf("| %s | %.2f | %.2f | %zu, %zu |\n", r.name, g.ms, on_gpu.ms, mismatches(nb, cpu, 20), mismatches(on_gpu.first, cpu, 20));
  }
}

// The header of a table of the three paths a search of GPU memory may take: the default, the
// written products (KNN_GPU_FUSED=0) and the fused pass (=1); `what` names its rows.
void print_paths_header(const char* what) {
  std::printf("\n| %s | default (ms) | written products, KNN_GPU_FUSED=0 (ms) | fused, KNN_GPU_FUSED=1 (ms) "
              "| of 20 queries checked, neighbours differing from CPU (default) |\n|---|---|---|---|---|\n",
              what);
}

// A row of that table: `train` and `q` at k, each path timed as FAISS is (search_on_gpu), and the
// default's first 20 lists against the CPU backend.
void print_paths_row(const std::string& row, const knn::Matrix& train, const knn::Matrix& q, std::size_t k) {
  constexpr Variant paths[] = {{knn::Precision::automatic, nullptr, nullptr, "default"},
                               {knn::Precision::automatic, "KNN_GPU_FUSED", "0", "written"},
                               {knn::Precision::automatic, "KNN_GPU_FUSED", "1", "fused"}};
  double ms[3] = {0, 0, 0};
  knn::Neighbors first;
  for (int v = 0; v < 3; ++v) {
    const EnvScope env(paths[v]);
    OnGpu g = search_on_gpu(train, q, k);
    ms[v] = g.ms;
    if (v == 0) first = std::move(g.first);
  }
  const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, train, first_rows(q, 20), k);
  std::printf("| %s | %.2f | %.2f | %.2f | %zu |\n", row.c_str(), ms[0], ms[1], ms[2], mismatches(first, cpu, 20));
}

// 10^6 x 128 with 10,000 queries in GPU memory from k = 16 to 2,048, on the three paths, so that
// the k from which the fused pass is the default (kGuessedTauK) can be checked.
void fused_by_k() {
  std::mt19937_64 rng(1);
  const auto train = uniform(1000000, 128, rng);
  const auto q = uniform(10000, 128, rng);
  print_paths_header("10^6 x 128, 10,000 queries in GPU memory");
  for (std::size_t k : {16u, 32u, 48u, 64u, 128u, 192u, 256u, 512u, 1000u, 1024u, 2048u}) print_paths_row("k = " + std::to_string(k), train, q, k);
}

// Fashion-MNIST's 784 features with the first N training rows, 10,000 queries in GPU memory, at
// k = 1, 5 and 16, on the three paths, so that the training rows from which the fused pass for
// wide rows is the default (kWideFusedDefaultRows) can be checked.
void wide_by_rows(const std::string& train_csv, const std::string& test_csv) {
  const Scaled fm = load_scaled(train_csv, test_csv);
  print_paths_header("Fashion-MNIST, first N training rows, 10,000 queries in GPU memory");
  for (std::size_t rows : {5000u, 15000u, 30000u, 60000u}) {
    const knn::Matrix train = first_rows(fm.x, std::min(rows, fm.x.rows));
    for (std::size_t k : {1u, 5u, 16u})
      print_paths_row("N = " + std::to_string(train.rows) + ", k = " + std::to_string(k), train, fm.q, k);
  }
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each table row as soon as it is measured
  try {
    if (!knn::cuda_available()) {
      std::fprintf(stderr, "bench_knn_gpu: no usable GPU\n");
      return 2;
    }
    if (argc >= 4 && std::string(argv[3]) == "--stages") {
      stages(argv[1], argv[2]);
      return 0;
    }
    load_kernels();
    if (argc >= 2 && std::string(argv[1]) == "--fused-by-k") {
      fused_by_k();
      return 0;
    }
    if (argc >= 2 && std::string(argv[1]) == "--precision-choice") {
      precision_choice();
      return 0;
    }
    if (argc >= 2 && std::string(argv[1]) == "--large-k") {
      large_k();
      duplicates();
      return 0;
    }
    if (argc >= 4 && std::string(argv[3]) == "--wide-by-rows") {
      wide_by_rows(argv[1], argv[2]);
      return 0;
    }
    if (argc >= 4 && std::string(argv[3]) == "--targets") {
      targets(argv[1], argv[2], argc >= 5 ? argv[4] : "");
      return 0;
    }
    if (argc >= 3) fashion_mnist(argv[1], argv[2]);
    if (argc >= 4 && std::string(argv[3]) == "--fm-only") return 0;
    if (argc >= 4 && std::string(argv[3]) == "--core") {  // the tables a change to the search is measured on
      synthetic();
      large_k();
      return 0;
    }
    synthetic();
    large_k();
    duplicates();
    if (!(argc >= 4 && std::string(argv[3]) == "--no-scaling")) scaling();
    std::printf("\npeak device memory: the most in use on the device (cudaMemGetInfo, sampled every 0.1 ms) while a backend made\n"
                "for the row uploaded the training rows and ran its first search, less what was in use before: the training rows,\n"
                "the search's buffers (the backend keeps them), cuBLAS's handle and workspace; not the CUDA context.\n");
  } catch (const knn::Error& e) {
    std::fprintf(stderr, "bench_knn_gpu: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
