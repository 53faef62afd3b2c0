#pragma once
// Cross-validated scores, for one k or swept over many k in one pass (docs/design.md#evaluation):
// the k_max nearest neighbours are selected once per fold and every smaller k is a prefix.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/metric.hpp"
#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"
#include "knn/weights.hpp"

namespace knn {

enum class Task { classify, regress };
Task parse_task(const std::string& text);  // "classify" | "regress"
const char* to_string(Task t);

/// For a task guessed, not given: the labels are class labels unless they look like a regression
/// target (numbers with more than 20 distinct values, or a number that is not whole); then this
/// throws an Error naming the file and column that suggests the task parameter (and the label
/// parameter where `label_given` is false). Sharded, over every rank's labels.
void check_class_labels(const Dataset& data, bool label_given, const Communicator* comm = nullptr);

/// Default seed of the fold assignment, so that runs repeat exactly.
constexpr std::uint64_t default_fold_seed = 42;

/// Fold of every row, 0..folds-1. Classification: stratified (each class's rows shuffled with the
/// seed, then dealt to the folds in turn, continuing from class to class). Regression: the rows
/// shuffled with the seed, then dealt in turn. Documented so a script can reproduce it; the
/// shuffle is Fisher-Yates over a splitmix64 stream (see fold_shuffle).
std::vector<int> assign_folds(std::size_t rows, const std::vector<int>* classes, int folds,
                              std::uint64_t seed);

/// One split of the rows (0-based, over the whole data set): a model fitted on `train` scores `test`.
struct Split {
  std::vector<std::size_t> train, test;
};

struct FoldSpec {
  /// kfold: assign_folds' folds. loo: leave-one-out. test: a test file. splits: the given splits,
  /// each scored as a fold (another program's folds, or splits that are not a partition).
  enum class Kind { kfold, loo, test, splits };
  Kind kind = Kind::kfold;
  int folds = 5;
  std::uint64_t seed = default_fold_seed;
  const Dataset* test = nullptr;  // Kind::test: rows scored against a model fitted on all data
  std::vector<Split> splits;      // Kind::splits: at least one, each with training and test rows
  /// Leave-one-out and a test file give one score, pooled over the rows held out: its std is 0
  /// for want of a spread, not because the folds agreed.
  bool pooled() const { return kind == Kind::loo || kind == Kind::test; }
};

struct EvalOptions {
  Task task = Task::classify;
  std::vector<std::size_t> ks{5};      // ascending, distinct, >= 1
  std::vector<Weights> weights{Weights{}};
  std::vector<Metric> metrics{Metric::l2};
  Scaling scaling = Scaling::minmax;
  /// How missing feature cells are filled; every fold fits its own fill values, categories and
  /// scaler on its training rows only.
  Impute impute = Impute::none;
  FoldSpec folds;
  BackendOptions backend;
  /// Called after each fold with (folds done, folds in all); for progress lines.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct Score {
  double mean = 0.0;
  double std = 0.0;  // population standard deviation over folds
};

/// One k under one weight function and metric.
struct SweepRow {
  std::size_t k = 0;
  Weights weights;
  Metric metric = Metric::l2;
  std::vector<Score> scores;  // in EvalResult::score_names order
};

struct EvalResult {
  Task task = Task::classify;
  std::size_t folds = 0;
  std::vector<std::string> score_names;  // accuracy, balanced_accuracy, f1_macro | rmse, mae, r2
  std::vector<SweepRow> rows;            // metrics outermost, then weights, then k
  std::vector<std::string> classes;      // classification: class labels in id order
  /// Classification, one row per (weights, metric) in rows order: counts[t][p] summed over folds,
  /// at the largest k of the list.
  std::vector<std::vector<std::vector<std::size_t>>> confusion;
  std::size_t best = 0;  // index into rows: highest accuracy or lowest RMSE, ties to the smaller k
};

/// Validates the options against the data (k no larger than any fold's training rows, the test
/// file's columns) and runs the folds.
EvalResult evaluate(const Dataset& data, const EvalOptions& options);

}  // namespace knn
