#pragma once
// Where the rows of a training set are: all in this process, or sharded over the ranks of a
// communicator, each rank holding a contiguous range of the rows in rank order
// (docs/design.md#sharding). The models and the evaluation run one code over either: a Placement holds every step
// whose sharded form differs, and placement() is the one place that picks.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/row_keys.hpp"
#include "knn/communicator.hpp"
#include "knn/dataset.hpp"
#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"

namespace knn::detail {

/// The error that names a query value overflowing once scaled, at its file's cell; on a rank that
/// does not hold the row, Error("") (the rank that holds it names it).
using OverflowAt = std::function<Error(const ScaleOverflow&)>;

class Placement {
 public:
  virtual ~Placement() = default;

  /// This process's `local_rows` within the whole training set (offset and total over all ranks).
  virtual ShardRange range(std::size_t local_rows) const = 0;
  /// The same for a data set as it was loaded (Dataset::row_offset, Dataset::all_rows()).
  virtual ShardRange range(const Dataset& data) const = 0;

  /// Runs `step`; sharded, on every rank together: a knn::Error on any rank ends every rank with
  /// it (knn::collective).
  virtual void collective(const std::function<void()>& step) const = 0;
  /// The label texts a label encoder is fitted on: each of `labels` and of every other rank's, once.
  virtual std::vector<std::string> label_union(const std::vector<std::string>& labels) const = 0;
  /// Every rank's values in rank order (here: `mine`).
  virtual std::vector<int> gather(std::vector<int> mine) const = 0;
  virtual std::vector<double> gather(std::vector<double> mine) const = 0;
  virtual std::vector<float> gather(std::vector<float> mine) const = 0;

  /// Fits `scaler` on the training rows (`local`: this process's; sharded, with every other
  /// rank's) and returns `local` scaled, with `prepared` as the backend keeps them (nullptr where
  /// that gains nothing). Here the backend does both (the GPU from one upload).
  virtual Matrix fit_scaled(const Backend& backend, Scaler& scaler, MatrixView local,
                            std::shared_ptr<const PreparedTrain>& prepared) const = 0;

  /// Puts `queries` (unscaled; `scaler` may be null) into `request`. Here the search scales them
  /// as it reads them (the GPU in device memory), so a value that overflows surfaces as the
  /// search's ScaleOverflow. Sharded, every rank scales its copy into `storage` now: an overflow
  /// ends every rank with the error `at` names, or, where `at` is empty, with the ScaleOverflow.
  virtual void set_queries(SearchRequest& request, MatrixView queries, const Scaler* scaler, Matrix& storage,
                           const OverflowAt& at) const = 0;

  /// The request.k nearest of request's queries among the training rows of every rank
  /// (`request.train`: this process's, scaled, whose global rows `keys` gives), as one search of
  /// the whole set finds them: indices are global rows, and `request.exclude` holds global rows.
  /// `payload` (per local row) travels with each neighbour into `payload_out` (queries x k) where
  /// given. Every rank gets the same result.
  virtual Neighbors search(const Backend& backend, const SearchRequest& request, const RowKeys& keys,
                           const double* payload, std::vector<double>& payload_out) const = 0;

  /// Leave-one-out: the rows whose removal changes a scaler of kind `scaling` fitted on all rows
  /// (`local`: this process's rows, global rows range.offset on), flagged over all range.total rows.
  virtual std::vector<bool> loo_changes_scaler(const Matrix& local, Scaling scaling, const ShardRange& range) const = 0;
};

/// How a Preprocessor fitted on this process's rows combines its statistics with every rank's.
Preprocessor::Gather prep_gather(const Placement& placement);

/// All rows in this process (core/local_placement.cpp).
std::shared_ptr<const Placement> local_placement();
/// Sharded over the ranks of `comm` (distributed/sharded_placement.cpp).
std::shared_ptr<const Placement> sharded_placement(std::shared_ptr<const Communicator> comm);
/// Sharded where `comm` spans more than one rank, else local.
std::shared_ptr<const Placement> placement(const std::shared_ptr<const Communicator>& comm);

}  // namespace knn::detail
