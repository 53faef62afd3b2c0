#pragma once
// An evaluation's scores, fold by fold, and their summary per (metric, weights, k).
#include <cstddef>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"

namespace knn::detail {

/// What the rows are scored against: every data row (over all ranks, in order), then every row
/// of the test file.
struct Targets {
  std::vector<int> classes;    // classification: class ids in `encoder`'s order
  std::vector<double> values;  // regression
  LabelEncoder encoder;        // classification: fitted on every rank's labels and the test file's
};

/// One fold's predictions for every combination (metrics outermost, then weights) and every k:
/// per combination, ks x queries, k-major; `classes` for classification, `values` for regression.
struct FoldPredictions {
  std::vector<std::vector<int>> classes;
  std::vector<std::vector<double>> values;
};

/// accuracy, balanced_accuracy, f1_macro | rmse, mae, r2
std::vector<std::string> score_names(Task task);

class FoldScores {
 public:
  FoldScores(const EvalOptions& options, const Targets& targets);
  /// Scores one fold: `held` are the rows of Targets that `predictions` predict, in order.
  void add(const std::vector<std::size_t>& held, const FoldPredictions& predictions);
  /// Mean and population standard deviation over the folds, in EvalResult::rows order.
  std::vector<SweepRow> rows() const;
  /// Classification: per combination, counts[truth][prediction] at the largest k, over the folds.
  const std::vector<std::vector<std::vector<std::size_t>>>& confusion() const { return confusion_; }

 private:
  const EvalOptions& options_;
  const Targets& targets_;
  std::vector<std::vector<std::vector<std::vector<double>>>> scores_;  // [combination][k][score]: one value per fold
  std::vector<std::vector<std::vector<std::size_t>>> confusion_;
};

/// The best row: highest accuracy or lowest RMSE; a tie goes to the smaller k, then to the earlier
/// row.
std::size_t best_row(const std::vector<SweepRow>& rows, Task task);

}  // namespace knn::detail
