#pragma once
// Sharded training sets (docs/design.md#sharding): the ranks of a communicator each hold a contiguous
// range of the training rows, in rank order. Each finds the k nearest of its own rows for every
// query; the candidate lists are merged by (distance, global training index), so ties resolve
// exactly as in one process, and the messages grow with queries x k, not with the training rows.
//
// The interface names no MPI type: knn/mpi.hpp gives the MPI implementation (when the library is
// built with KNN_ENABLE_MPI), and a build without MPI keeps every other feature.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace knn {

/// One neighbour candidate on its way through a merge: the defined distance, the global training
/// row, and a value that travels with it (the row's class id or regression target).
struct Candidate {
  double distance;
  std::int64_t index;
  double payload;
};

/// The collective operations that sharding needs. Every rank must make the same calls in the
/// same order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every rank's bytes, in rank order, on every rank.
  virtual std::vector<std::string> allgather(const std::string& mine) const = 0;
  /// Element-wise minimum / maximum over the ranks, on every rank.
  virtual void allreduce_min(double* values, std::size_t n) const = 0;
  virtual void allreduce_max(double* values, std::size_t n) const = 0;
  /// A sequential pass over the ranks: rank r > 0 receives what rank r - 1 sent.
  virtual void receive_from_previous(double* values, std::size_t n) const = 0;
  virtual void send_to_next(const double* values, std::size_t n) const = 0;
  virtual void broadcast(double* values, std::size_t n, int root) const = 0;
  /// `lists` holds `queries` lists of `k` candidates, each sorted by (distance, index); pads are
  /// (+inf, INT64_MAX). Afterwards every rank holds, per query, the k best of all ranks' lists.
  virtual void merge_candidates(Candidate* lists, std::size_t queries, std::size_t k) const = 0;
  /// Bytes this rank has handed to collective and point-to-point calls so far (for benchmarks).
  virtual std::uint64_t bytes_sent() const { return 0; }
};

/// True when `comm` spans more than one rank (a null or one-rank communicator runs as usual).
inline bool distributed(const Communicator* comm) { return comm && comm->size() > 1; }

/// Runs `step` on every rank. When it throws knn::Error on any rank, every rank throws the error
/// of the lowest such rank with a non-empty message, so no rank is left waiting in a later
/// collective call (a rank that knows only that something failed throws Error("")).
void collective(const Communicator* comm, const std::function<void()>& step);

/// Every rank's texts (e.g. labels of its shard) concatenated in rank order, on every rank.
std::vector<std::string> gather_labels(const Communicator& comm, const std::vector<std::string>& labels);

/// This rank's rows within the whole training set.
struct ShardRange {
  std::size_t offset = 0;  // global index of the first local row
  std::size_t total = 0;   // rows over all ranks
};
ShardRange shard_range(const Communicator& comm, std::size_t local_rows);

}  // namespace knn
