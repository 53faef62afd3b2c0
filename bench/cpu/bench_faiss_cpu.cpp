// Baseline for bench_knn_cpu: FAISS's exact IndexFlatL2 on the same min-max scaled Fashion-MNIST
// rows, k nearest + a uniform majority vote (ties to the smaller class, as scikit-learn does).
// Run with OPENBLAS_CORETYPE=SkylakeX (see BENCHMARKS.md) and OMP_NUM_THREADS = the cores.
#include <faiss/IndexFlat.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "knn/knn.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_faiss_cpu TRAIN.csv TEST.csv [k=5] [repeats=1]\n");
    return 2;
  }
  const int k = argc > 3 ? std::atoi(argv[3]) : 5;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 1;
  const knn::Dataset train = knn::load_csv(argv[1], {});
  const knn::Dataset test = knn::load_query_csv(argv[2], {}, train);
  knn::Scaler sc(knn::Scaling::minmax);
  knn::Matrix x = train.features, q = test.features;
  sc.fit(x);
  sc.transform(x);
  sc.transform(q);
  knn::LabelEncoder enc;
  enc.fit(train.labels);
  const auto y = enc.encode(train.labels), yt = enc.encode(test.labels);
  const auto d = static_cast<faiss::Index::idx_t>(x.cols);
  double best = 1e30, acc = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    faiss::IndexFlatL2 index(d);
    index.add(static_cast<faiss::Index::idx_t>(x.rows), x.values.data());
    std::vector<float> dist(q.rows * k);
    std::vector<faiss::Index::idx_t> idx(q.rows * k);
    index.search(static_cast<faiss::Index::idx_t>(q.rows), q.values.data(), k, dist.data(), idx.data());
    std::size_t hit = 0;
    for (std::size_t i = 0; i < q.rows; ++i) {
      std::vector<int> votes(enc.size());
      for (int j = 0; j < k; ++j) votes[static_cast<std::size_t>(y[static_cast<std::size_t>(idx[i * k + j])])]++;
      std::size_t bestc = 0;
      for (std::size_t c = 1; c < votes.size(); ++c)
        if (votes[c] > votes[bestc]) bestc = c;
      hit += static_cast<int>(bestc) == yt[i];
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    acc = static_cast<double>(hit) / static_cast<double>(q.rows);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("faiss IndexFlatL2 k=%d: search + vote %.3f s (best of %d), accuracy %.4f, peak resident %.2f GB\n", k,
              best, reps, acc, static_cast<double>(u.ru_maxrss) / 1e6);
  return 0;
}
