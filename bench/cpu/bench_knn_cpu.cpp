// End-to-end CPU benchmark on Fashion-MNIST CSVs: load, scale, search + predict, accuracy and peak
// memory, printed as a table. The baselines (FAISS, scikit-learn) run from bench/cpu/baselines.py.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "knn/knn.hpp"

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
double peak_rss_gb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1e6;  // KiB -> GB (approx.)
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_knn_cpu TRAIN.csv TEST.csv [k=5] [repeats=1]\n");
    return 2;
  }
  const std::size_t k = argc > 3 ? std::stoul(argv[3]) : 5;
  const int reps = argc > 4 ? std::stoi(argv[4]) : 1;
  try {
    auto t0 = std::chrono::steady_clock::now();
    const knn::Dataset train = knn::load_csv(argv[1], {});
    const double t_load_train = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const knn::Dataset test = knn::load_query_csv(argv[2], {}, train);
    const double t_load_test = seconds_since(t0);

    knn::ModelParams p;
    p.k = k;
    p.backend.device = knn::Device::cpu;
    knn::KnnClassifier model(p);
    t0 = std::chrono::steady_clock::now();
    model.fit(train.features, train.labels);
    knn::Matrix q = test.features;
    model.scaler().transform(q);
    const double t_scale = seconds_since(t0);

    // Search and prediction on scaled data: what the baselines' figures measure.
    knn::ModelParams p2 = p;
    p2.scaling = knn::Scaling::none;
    knn::KnnClassifier scaled(p2);
    knn::Matrix xs = train.features;
    model.scaler().transform(xs);
    scaled.fit(xs, train.labels);
    double best = 1e30;
    std::vector<std::string> pred;
    for (int r = 0; r < reps; ++r) {
      t0 = std::chrono::steady_clock::now();
      pred = scaled.predict(q);
      best = std::min(best, seconds_since(t0));
    }
    std::size_t hit = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) hit += pred[i] == test.labels[i];
    const double acc = static_cast<double>(hit) / static_cast<double>(pred.size());
    std::printf("| step | seconds |\n|---|---|\n");
    std::printf("| load %s (%zu x %zu) | %.3f |\n", argv[1], train.size(), train.dims(), t_load_train);
    std::printf("| load %s (%zu rows) | %.3f |\n", argv[2], test.size(), t_load_test);
    std::printf("| fit + scale queries (min-max) | %.3f |\n", t_scale);
    std::printf("| search + predict, k = %zu (best of %d) | %.3f |\n", k, reps, best);
    std::printf("\naccuracy %.4f, peak resident memory %.2f GB\n", acc, peak_rss_gb());
  } catch (const knn::Error& e) {
    std::fprintf(stderr, "bench_knn_cpu: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
