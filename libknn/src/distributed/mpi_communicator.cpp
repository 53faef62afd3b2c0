#include "knn/mpi.hpp"

#include <mpi.h>

#include "core/environment.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "distributed/candidate_merge.hpp"
#include "knn/error.hpp"

namespace knn::mpi {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("MPI error in ") + what + ": " + std::string(text, static_cast<std::size_t>(len)));
}

// The reduction: per query, the k best of two sorted lists (`in` and `inout`) into `inout`. The
// list length k comes from the datatype, one list per element.
void merge_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const std::size_t k = static_cast<std::size_t>(bytes) / sizeof(Candidate);
  detail::merge_candidate_lists(static_cast<const Candidate*>(in), static_cast<Candidate*>(inout),
                                static_cast<std::size_t>(*len), k);
}

class World final : public Communicator {
 public:
  World() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    check(MPI_Op_create(&merge_op, 1, &merge_), "MPI_Op_create");
  }
  int rank() const override { return rank_; }
  std::uint64_t bytes_sent() const override { return sent_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string& mine) const override {
    const long long n = static_cast<long long>(mine.size());
    sent_ += sizeof n + mine.size();
    std::vector<long long> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<std::string> all(static_cast<std::size_t>(size_));
    // One broadcast per rank, in pieces that keep every count within an int.
    for (int root = 0; root < size_; ++root) {
      std::string& s = all[static_cast<std::size_t>(root)];
      s = root == rank_ ? mine : std::string(static_cast<std::size_t>(sizes[static_cast<std::size_t>(root)]), '\0');
      for (std::size_t at = 0; at < s.size(); at += kChunk) {
        const int count = static_cast<int>(std::min(kChunk, s.size() - at));
        check(MPI_Bcast(s.data() + at, count, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
      }
    }
    return all;
  }
  void allreduce_min(double* v, std::size_t n) const override { reduce(v, n, MPI_MIN); }
  void allreduce_max(double* v, std::size_t n) const override { reduce(v, n, MPI_MAX); }
  void receive_from_previous(double* v, std::size_t n) const override {
    if (rank_ == 0) return;
    for (std::size_t at = 0; at < n; at += kChunk)
      check(MPI_Recv(v + at, static_cast<int>(std::min(kChunk, n - at)), MPI_DOUBLE, rank_ - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
  }
  void send_to_next(const double* v, std::size_t n) const override {
    if (rank_ + 1 == size_) return;
    sent_ += n * sizeof(double);
    for (std::size_t at = 0; at < n; at += kChunk)
      check(MPI_Send(v + at, static_cast<int>(std::min(kChunk, n - at)), MPI_DOUBLE, rank_ + 1, 7, MPI_COMM_WORLD),
            "MPI_Send");
  }
  void broadcast(double* v, std::size_t n, int root) const override {
    if (rank_ == root) sent_ += n * sizeof(double);
    for (std::size_t at = 0; at < n; at += kChunk)
      check(MPI_Bcast(v + at, static_cast<int>(std::min(kChunk, n - at)), MPI_DOUBLE, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
  void merge_candidates(Candidate* lists, std::size_t queries, std::size_t k) const override {
    if (queries == 0 || k == 0) return;
    sent_ += queries * k * sizeof(Candidate);
    MPI_Datatype list;
    check(MPI_Type_contiguous(static_cast<int>(k * sizeof(Candidate)), MPI_BYTE, &list), "MPI_Type_contiguous");
    check(MPI_Type_commit(&list), "MPI_Type_commit");
    // Batches of queries of at most 256 MiB per call.
    const std::size_t per_call = std::max<std::size_t>(1, (std::size_t{256} << 20) / (k * sizeof(Candidate)));
    for (std::size_t q = 0; q < queries; q += per_call) {
      const int count = static_cast<int>(std::min(per_call, queries - q));
      check(MPI_Allreduce(MPI_IN_PLACE, lists + q * k, count, list, merge_, MPI_COMM_WORLD), "MPI_Allreduce");
    }
    MPI_Type_free(&list);
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 28;
  void reduce(double* v, std::size_t n, MPI_Op op) const {
    sent_ += n * sizeof(double);
    for (std::size_t at = 0; at < n; at += kChunk)
      check(MPI_Allreduce(MPI_IN_PLACE, v + at, static_cast<int>(std::min(kChunk, n - at)), MPI_DOUBLE, op, MPI_COMM_WORLD),
            "MPI_Allreduce");
  }
  int rank_ = 0, size_ = 1;
  MPI_Op merge_ = MPI_OP_NULL;
  mutable std::uint64_t sent_ = 0;
};

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

bool launched() { return detail::mpi_launched(); }

std::shared_ptr<const Communicator> world() {
  static const std::shared_ptr<const Communicator> w = []() -> std::shared_ptr<const Communicator> {
    if (!launched()) return nullptr;
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(finalize_at_exit);
    }
    return std::make_shared<World>();
  }();
  return w;
}

}  // namespace knn::mpi
