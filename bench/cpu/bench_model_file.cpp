// What knn-cli predict spends before its search, with --train against --model: fitting a
// classifier on the training CSV (load_csv, then fit: preprocessing and scaling), or reading the
// model file of that fit (mapped, both checksums verified, the rows copied into the model); with
// the time of the save, the file's size, and reading the same bytes from memory (as unpickling
// would):
//   bench_model_file TRAIN.csv MODEL   prints "fit_s save_s bytes load_file_s load_bytes_s"
// MODEL is written. Each step runs once, in a fresh process as knn-cli does; a script that wants
// a median runs this several times. The file is read right after it was written, from the page
// cache, as a later predict on the same machine reads it.
#include <chrono>
#include <cstdio>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/model.hpp"

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_model_file TRAIN.csv MODEL\n");
    return 2;
  }
  try {
    knn::BackendOptions cpu;
    cpu.device = knn::Device::cpu;
    knn::ModelParams p;
    p.backend = cpu;
    auto t = std::chrono::steady_clock::now();
    knn::KnnClassifier fitted(p);
    fitted.fit(knn::load_csv(argv[1], {}));
    const double fit_s = since(t);
    t = std::chrono::steady_clock::now();
    fitted.save(argv[2]);
    const double save_s = since(t);
    t = std::chrono::steady_clock::now();
    const knn::KnnClassifier from_file = knn::KnnClassifier::load(argv[2], cpu);
    const double load_file_s = since(t);
    const std::vector<std::uint8_t> bytes = fitted.save();
    t = std::chrono::steady_clock::now();
    const knn::KnnClassifier from_bytes = knn::KnnClassifier::load(bytes.data(), bytes.size(), cpu);
    const double load_bytes_s = since(t);
    if (from_file.train_size() != fitted.train_size() || from_bytes.train_size() != fitted.train_size()) return 1;
    std::printf("%.6f %.6f %zu %.6f %.6f\n", fit_s, save_s, bytes.size(), load_file_s, load_bytes_s);
  } catch (const knn::Error& e) {
    std::fprintf(stderr, "bench_model_file: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
