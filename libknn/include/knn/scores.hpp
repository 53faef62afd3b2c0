#pragma once
// Scores of predictions, with scikit-learn's definitions.
#include <cstddef>
#include <vector>

namespace knn {

double accuracy(const std::vector<int>& truth, const std::vector<int>& predicted);
/// Mean recall over the classes present in `truth`.
double balanced_accuracy(const std::vector<int>& truth, const std::vector<int>& predicted);
/// Unweighted mean F1 over the classes present in `truth` or `predicted` (0 where undefined).
double f1_macro(const std::vector<int>& truth, const std::vector<int>& predicted);
/// counts[t][p], n_classes x n_classes.
std::vector<std::vector<std::size_t>> confusion_matrix(const std::vector<int>& truth,
                                                       const std::vector<int>& predicted,
                                                       std::size_t n_classes);

double rmse(const std::vector<double>& truth, const std::vector<double>& predicted);
double mae(const std::vector<double>& truth, const std::vector<double>& predicted);
/// 1 - SS_res / SS_tot; with constant truth: 1 if the predictions are exact, else 0.
double r2(const std::vector<double>& truth, const std::vector<double>& predicted);

}  // namespace knn
