// kNN on the GPU backend against the CPU backend: Fashion-MNIST (from the CSVs that
// scripts/fashion_mnist_csv.py writes), the synthetic 1,000,000 x 128 set, and a scaling table.
// Times are wall-clock medians of whole search calls (host data in, neighbours out), so they
// include the transfers. PyTorch and FAISS run beside it from bench/gpu/torch_knn.py.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "knn/knn.hpp"

namespace {

double median_ms(const std::function<void()>& f, int reps) {
  f();  // warm-up: context, cuBLAS handle, first allocations
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One backend per device and precision, kept as a model keeps its own: the GPU backend holds its
// stream, cuBLAS handle and workspace between searches.
const knn::Backend& backend(knn::Device dev, knn::Precision p) {
  static std::map<std::pair<int, int>, std::shared_ptr<const knn::Backend>> made;
  auto& b = made[{static_cast<int>(dev), static_cast<int>(p)}];
  if (!b) {
    knn::BackendOptions o;
    o.device = dev;
    o.precision = p;
    b = knn::make_backend(o);
  }
  return *b;
}

// One search; with `prepared`, the training rows are already on the device (as after fit()).
knn::Neighbors search(knn::Device dev, knn::Precision p, const knn::Matrix& train, const knn::Matrix& q, std::size_t k,
                      const knn::PreparedTrain* prepared = nullptr) {
  const auto& b = backend(dev, p);
  knn::SearchRequest r;
  r.train = &train;
  r.prepared = prepared;
  r.queries = &q;
  r.k = k;
  return knn::search(b, r);
}

std::shared_ptr<const knn::PreparedTrain> prepare(const knn::Matrix& train) {
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  return knn::make_backend(o)->prepare(train);
}

std::size_t mismatches(const knn::Neighbors& a, const knn::Neighbors& b, std::size_t queries) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < queries * a.k; ++i) bad += a.index[i] != b.index[i] || a.distance[i] != b.distance[i];
  return bad;
}

knn::Matrix uniform(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  knn::Matrix m(rows, cols);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : m.values) v = u(rng);
  return m;
}

// Fashion-MNIST's training and test rows, min-max scaled on the training rows.
struct Scaled {
  knn::Dataset train, test;
  knn::Matrix x, q;
};
Scaled load_scaled(const std::string& train_csv, const std::string& test_csv) {
  Scaled d{knn::load_csv(train_csv, {}), {}, {}, {}};
  d.test = knn::load_query_csv(test_csv, {}, d.train);
  knn::Scaler sc(knn::Scaling::minmax);
  d.x = d.train.features;
  d.q = d.test.features;
  sc.fit(d.x);
  sc.transform(d.x);
  sc.transform(d.q);
  return d;
}

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
  std::printf("\n| Fashion-MNIST 60,000 x 784, 10,000 queries, k = 5 | time (ms) | accuracy | neighbours differing from CPU |\n|---|---|---|---|\n");
  const auto resident = prepare(x);
  for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
    for (const knn::PreparedTrain* prep : {static_cast<const knn::PreparedTrain*>(nullptr), resident.get()}) {
      knn::Neighbors nb;
      std::vector<int> pred(q.rows);
      const double ms = median_ms(
          [&] {
            nb = search(knn::Device::cuda, p, x, q, 5, prep);
            knn::vote_prefixes(nb, y.data(), enc.size(), knn::Weights{}, {5}, pred.data());
          },
          7);
      std::size_t hit = 0;
      for (std::size_t i = 0; i < q.rows; ++i) hit += pred[i] == yt[i];
      std::printf("| libknn GPU %s, search + vote, %s | %.2f | %.4f | %zu |\n", p == knn::Precision::fp32 ? "fp32" : "tf32",
                  prep ? "training rows on the GPU" : "uploading the training rows", ms,
                  static_cast<double>(hit) / static_cast<double>(q.rows), mismatches(nb, cpu, q.rows));
    }
  std::printf("| libknn CPU backend (all cores), search | %.0f | | reference |\n", cpu_ms);
}

void synthetic() {
  std::mt19937_64 rng(1);
  const auto train = uniform(1000000, 128, rng);
  const auto q = uniform(10000, 128, rng);
  knn::Matrix check_q(100, 128);
  std::copy_n(q.values.begin(), check_q.values.size(), check_q.values.begin());
  std::printf("\n| synthetic 1,000,000 x 128, 10,000 queries, training rows on the GPU | time (ms) | of 100 queries checked, neighbours differing from CPU |\n|---|---|---|\n");
  const auto resident = prepare(train);
  for (std::size_t k : {10u, 1000u}) {
    const auto cpu = search(knn::Device::cpu, knn::Precision::fp32, train, check_q, k);
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
      knn::Neighbors nb;
      const double ms = median_ms([&] { nb = search(knn::Device::cuda, p, train, q, k, resident.get()); }, 3);
      std::printf("| k = %zu, %s | %.1f | %zu |\n", k, p == knn::Precision::fp32 ? "fp32" : "tf32", ms, mismatches(nb, cpu, 100));
    }
  }
}

void scaling() {
  std::mt19937_64 rng(2);
  std::printf("\n| n | d | 1,000 queries, k = 10, training rows on the GPU, fp32 (ms) | tf32 (ms) |\n|---|---|---|---|\n");
  for (std::size_t n : {10000u, 100000u, 1000000u, 10000000u})
    for (std::size_t d : {16u, 128u, 1024u}) {
      if (n * d > 300000000u) continue;
      const auto train = uniform(n, d, rng);
      const auto q = uniform(1000, d, rng);
      const auto resident = prepare(train);
      const double f = median_ms([&] { search(knn::Device::cuda, knn::Precision::fp32, train, q, 10, resident.get()); }, 3);
      const double t = median_ms([&] { search(knn::Device::cuda, knn::Precision::tf32, train, q, 10, resident.get()); }, 3);
      std::printf("| %zu | %zu | %.2f | %.2f |\n", n, d, f, t);
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
  for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) search(knn::Device::cuda, p, fm.x, fm.q, 5, resident.get());
  std::mt19937_64 rng(1);
  const auto st = uniform(1000000, 128, rng);
  const auto sq = uniform(10000, 128, rng);
  const auto sres = prepare(st);
  for (std::size_t k : {10u, 1000u})
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32}) {
      std::fprintf(stderr, "stage times, synthetic 1,000,000 x 128, k = %zu, %s:\n", k, p == knn::Precision::fp32 ? "fp32" : "tf32");
      search(knn::Device::cuda, p, st, sq, k, sres.get());
    }
  unsetenv("KNN_GPU_TIMING");
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
    if (argc >= 3) fashion_mnist(argv[1], argv[2]);
    synthetic();
    if (!(argc >= 4 && std::string(argv[3]) == "--no-scaling")) scaling();
  } catch (const knn::Error& e) {
    std::fprintf(stderr, "bench_knn_gpu: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
