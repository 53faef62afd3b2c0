// Time of loading a training CSV and a query CSV as `knn-cli predict --train T --query Q` does
// (load_csv, then load_query_csv against it, default options, all cores), in seconds:
//   bench_csv_load TRAIN QUERY   prints "train_s query_s"
// One load of each per run: knn-cli loads once, in a fresh process, so a script that wants a
// median runs this several times rather than repeating inside one process, where the second
// load would find the first one's memory already mapped. (bench_csv_memory times load_csv alone,
// each file as a training file; bench_knn_cpu goes on to search.)
#include <chrono>
#include <cstdio>

#include "knn/dataset.hpp"
#include "knn/error.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_csv_load TRAIN.csv QUERY.csv\n");
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const knn::Dataset train = knn::load_csv(argv[1], {});
    const auto t1 = std::chrono::steady_clock::now();
    const knn::Dataset query = knn::load_query_csv(argv[2], {}, train);
    const auto t2 = std::chrono::steady_clock::now();
    std::printf("%.6f %.6f\n", std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  } catch (const knn::Error& e) {
    std::fprintf(stderr, "bench_csv_load: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
