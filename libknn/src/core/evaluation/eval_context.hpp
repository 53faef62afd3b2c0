#pragma once
// What the runs of an evaluation share, and the steps they are made of. Every step runs the same
// code whether the data set is whole here or sharded over ranks: the Placement does what differs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/evaluation/fold_scores.hpp"
#include "core/placement.hpp"
#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"

namespace knn::detail {

struct EvalContext {
  const Dataset& data;   // sharded: this rank's rows
  const EvalOptions& options;
  const Placement& placement;
  ShardRange range;      // global row of data's first row, and the rows over all ranks
  Targets targets;
  std::shared_ptr<const Backend> backend;
};

// options.cpp
/// The checks that need no search: ks, weights and metrics, the label column, the test file.
void validate_options(const Dataset& data, const EvalOptions& options);
/// Every k at most the training rows of the smallest fold.
void check_k_fits(const EvalOptions& options, std::size_t smallest_train);

// targets.cpp
Targets read_targets(const Dataset& data, const Dataset* test, Task task, const Placement& placement);

// folds.cpp
using Fold = Split;  // global rows
/// The k-fold split of `rows` rows (assign_folds), stratified by `classes` where given.
std::vector<Fold> kfold_folds(std::size_t rows, const std::vector<int>* classes, const FoldSpec& spec);
/// Throws unless every given split has training and test rows, all of them below `rows`.
void check_splits(const std::vector<Split>& splits, std::size_t rows);

// fold_rows.cpp
/// Data rows that are here: indices into data.features, and their global rows.
struct LocalRows {
  std::vector<std::size_t> local;
  std::vector<std::int64_t> global;
};
/// Those of the global `rows` that are here.
LocalRows local_share(const EvalContext& ctx, const std::vector<std::size_t>& rows);
constexpr std::size_t kNoRow = static_cast<std::size_t>(-1);
/// Every row here but global row `skip`.
LocalRows rows_here(const EvalContext& ctx, std::size_t skip = kNoRow);

/// A fold's training rows here, preprocessed and scaled as fitted on them and every other rank's.
struct FittedRows {
  Preprocessor prep;
  Scaler scaler;
  Matrix rows;
  std::shared_ptr<const PreparedTrain> prepared;
  std::vector<std::int64_t> global;  // global row of each
};
FittedRows fit_rows(const EvalContext& ctx, LocalRows rows);
/// The global `rows` of `m` (whose rows are the data rows here), from every rank, in that order.
Matrix gather_rows(const EvalContext& ctx, const Matrix& m, const std::vector<std::size_t>& rows);
/// The held-out rows `raw` (features as loaded, categorical cells indexing ctx.data.levels) as
/// `fit` encodes them before scaling.
Matrix encode_rows(const EvalContext& ctx, const FittedRows& fit, const Matrix& raw);
/// A scaling overflow named at its file, line and column (when the data set came from a file);
/// `prep` says which feature an encoded column is.
Error at_cell(const ScaleOverflow& e, const Dataset& d, std::size_t row, const Preprocessor& prep);
/// The same for global data row `row`: named by the rank that holds it, Error("") on the others.
Error at_data_row(const EvalContext& ctx, const ScaleOverflow& e, std::size_t row, const Preprocessor& prep);

// loo_special.cpp
/// Leave-one-out: the rows (over all ranks) whose leaving changes the preprocessing fitted on
/// all rows (`all`): a category only they hold, a fill value their value enters.
std::vector<bool> loo_changes_prep(const EvalContext& ctx, const Preprocessor& all);

// fold_predictions.cpp
/// Searches `queries` among `fit`'s rows once per metric at the largest k, then predicts every k
/// for every weight function. `scaler`: where set, `queries` are unscaled and are scaled with it
/// (an overflow named by `at`). `exclude`: per query, a global row it may not take.
FoldPredictions predict_fold(const EvalContext& ctx, FittedRows& fit, const Matrix& queries, const Scaler* scaler,
                             const std::vector<std::int64_t>* exclude, const OverflowAt& at);

// The runs: each scores its folds into `scores` and returns how many folds it scored.
std::size_t run_kfold(const EvalContext& ctx, const std::vector<Fold>& folds, FoldScores& scores);  // kfold_run.cpp
std::size_t run_loo(const EvalContext& ctx, FoldScores& scores);                                     // loo_run.cpp
std::size_t run_test_file(const EvalContext& ctx, FoldScores& scores);                               // test_file_run.cpp

}  // namespace knn::detail
