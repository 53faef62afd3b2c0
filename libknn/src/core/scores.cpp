#include "knn/scores.hpp"

#include <cmath>

#include "knn/error.hpp"

namespace knn {

namespace {
template <class T>
void check_sizes(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size() || a.empty()) throw Error("scores need equally many true and predicted values, at least one");
}
std::size_t classes_of(const std::vector<int>& t, const std::vector<int>& p) {
  int m = -1;
  for (int v : t) m = std::max(m, v);
  for (int v : p) m = std::max(m, v);
  return static_cast<std::size_t>(m + 1);
}
}  // namespace

double accuracy(const std::vector<int>& truth, const std::vector<int>& predicted) {
  check_sizes(truth, predicted);
  std::size_t hit = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) hit += truth[i] == predicted[i];
  return static_cast<double>(hit) / static_cast<double>(truth.size());
}

std::vector<std::vector<std::size_t>> confusion_matrix(const std::vector<int>& truth,
                                                       const std::vector<int>& predicted,
                                                       std::size_t n_classes) {
  std::vector<std::vector<std::size_t>> m(n_classes, std::vector<std::size_t>(n_classes, 0));
  for (std::size_t i = 0; i < truth.size(); ++i)
    ++m[static_cast<std::size_t>(truth[i])][static_cast<std::size_t>(predicted[i])];
  return m;
}

double balanced_accuracy(const std::vector<int>& truth, const std::vector<int>& predicted) {
  check_sizes(truth, predicted);
  const auto m = confusion_matrix(truth, predicted, classes_of(truth, predicted));
  double sum = 0.0;
  std::size_t present = 0;
  for (std::size_t c = 0; c < m.size(); ++c) {
    std::size_t row = 0;
    for (std::size_t v : m[c]) row += v;
    if (row == 0) continue;
    sum += static_cast<double>(m[c][c]) / static_cast<double>(row);
    ++present;
  }
  return sum / static_cast<double>(present);
}

double f1_macro(const std::vector<int>& truth, const std::vector<int>& predicted) {
  check_sizes(truth, predicted);
  const auto m = confusion_matrix(truth, predicted, classes_of(truth, predicted));
  double sum = 0.0;
  std::size_t labels = 0;
  for (std::size_t c = 0; c < m.size(); ++c) {
    std::size_t row = 0, col = 0;
    for (std::size_t j = 0; j < m.size(); ++j) {
      row += m[c][j];
      col += m[j][c];
    }
    if (row == 0 && col == 0) continue;
    ++labels;
    // F1 = 2 tp / (2 tp + fp + fn); 0 when there is no true positive.
    const double tp = static_cast<double>(m[c][c]);
    sum += tp == 0.0 ? 0.0 : 2.0 * tp / static_cast<double>(row + col);
  }
  return sum / static_cast<double>(labels);
}

double rmse(const std::vector<double>& truth, const std::vector<double>& predicted) {
  check_sizes(truth, predicted);
  double s = 0.0;
  for (std::size_t i = 0; i < truth.size(); ++i) s += (truth[i] - predicted[i]) * (truth[i] - predicted[i]);
  return std::sqrt(s / static_cast<double>(truth.size()));
}

double mae(const std::vector<double>& truth, const std::vector<double>& predicted) {
  check_sizes(truth, predicted);
  double s = 0.0;
  for (std::size_t i = 0; i < truth.size(); ++i) s += std::fabs(truth[i] - predicted[i]);
  return s / static_cast<double>(truth.size());
}

double r2(const std::vector<double>& truth, const std::vector<double>& predicted) {
  check_sizes(truth, predicted);
  double mean = 0.0;
  for (double v : truth) mean += v;
  mean /= static_cast<double>(truth.size());
  double res = 0.0, tot = 0.0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    res += (truth[i] - predicted[i]) * (truth[i] - predicted[i]);
    tot += (truth[i] - mean) * (truth[i] - mean);
  }
  if (tot == 0.0) return res == 0.0 ? 1.0 : 0.0;
  return 1.0 - res / tot;
}

}  // namespace knn
