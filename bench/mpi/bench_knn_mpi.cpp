// Sharded search, timed: synthetic rows (uniform in [0,1), made from each row's global index, so
// every rank count sees the same data set) split over the ranks of mpirun, or one process
// without it. Prints one table row on rank 0: the time to fit (scale, upload), the time of one
// search of all queries (best of the repetitions), the bytes rank 0 handed to MPI per search,
// and a checksum of the neighbour lists, which must not change with the number of ranks.
//   mpirun -np N bench_knn_mpi ROWS DIMS QUERIES K [cpu|cuda] [REPS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "knn/knn.hpp"
#include "knn/mpi.hpp"

namespace {

float value(std::uint64_t row, std::uint64_t col, std::uint64_t salt) {
  std::uint64_t z = (row * 0x9E3779B97F4A7C15ull) ^ (col + salt * 0xBF58476D1CE4E5B9ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / 16777216.0f;
}

knn::Matrix make(std::uint64_t first, std::uint64_t rows, std::uint64_t dims, std::uint64_t salt) {
  knn::Matrix m(rows, dims);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(rows); ++i)
    for (std::uint64_t j = 0; j < dims; ++j) m(static_cast<std::size_t>(i), j) = value(first + static_cast<std::uint64_t>(i), j, salt);
  return m;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s ROWS DIMS QUERIES K [cpu|cuda] [REPS]\n", argv[0]);
    return 2;
  }
  const std::uint64_t rows = std::strtoull(argv[1], nullptr, 10), dims = std::strtoull(argv[2], nullptr, 10);
  const std::uint64_t nq = std::strtoull(argv[3], nullptr, 10), k = std::strtoull(argv[4], nullptr, 10);
  const std::string device = argc > 5 ? argv[5] : "cpu";
  const int reps = argc > 6 ? std::atoi(argv[6]) : 3;
  try {
    const auto comm = knn::mpi::world();
    const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
    const auto barrier = [&] {
      if (comm) comm->allgather("");
    };
    const std::uint64_t lo = rows * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
    const std::uint64_t hi = rows * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
    const knn::Matrix train = make(lo, hi - lo, dims, 1), queries = make(0, nq, dims, 2);

    knn::ModelParams p;
    p.k = static_cast<std::size_t>(k);
    p.scaling = knn::Scaling::none;
    p.backend.device = knn::parse_device(device);
    p.backend.comm = comm;
    struct Model : knn::KnnModel {
      using KnnModel::KnnModel;
      void fit(const knn::Matrix& x) { fit_features(x); }
    } model(p);
    barrier();
    auto t = std::chrono::steady_clock::now();
    model.fit(train);
    barrier();
    const double fit_s = seconds_since(t);
    double best = 1e300;
    std::uint64_t bytes = 0, checksum = 0;
    for (int r = 0; r < std::max(reps, 1); ++r) {
      const std::uint64_t before = comm ? comm->bytes_sent() : 0;
      barrier();
      t = std::chrono::steady_clock::now();
      const knn::Neighbors nb = model.kneighbors(queries);
      barrier();
      best = std::min(best, seconds_since(t));
      bytes = (comm ? comm->bytes_sent() : 0) - before - (comm ? std::uint64_t{16} : 0);  // less the barrier's own bytes
      checksum = 0;
      for (std::size_t i = 0; i < nb.index.size(); ++i) checksum = checksum * 1000003u + static_cast<std::uint64_t>(nb.index[i]);
    }
    if (rank == 0) {
      std::printf("ranks,rows,dims,queries,k,device,fit_s,search_s,bytes_sent_rank0,checksum\n");
      std::printf("%d,%llu,%llu,%llu,%llu,%s,%.4f,%.4f,%llu,%016llx\n", ranks, static_cast<unsigned long long>(rows),
                  static_cast<unsigned long long>(dims), static_cast<unsigned long long>(nq), static_cast<unsigned long long>(k),
                  model.backend().name(), fit_s, best, static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(checksum));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_knn_mpi: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
