#include "core/evaluation/fold_scores.hpp"

#include <cmath>

#include "knn/scores.hpp"

namespace knn::detail {

namespace {

Score summarize(const std::vector<double>& v) {
  Score s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size()));
  return s;
}

// Predictions at the ki-th k of a fold of m rows.
template <class T>
std::vector<T> at_k(const std::vector<T>& predictions, std::size_t ki, std::size_t m) {
  const auto first = predictions.begin() + static_cast<std::ptrdiff_t>(ki * m);
  return {first, first + static_cast<std::ptrdiff_t>(m)};
}

// The targets of the given rows.
template <class T>
std::vector<T> of_rows(const std::vector<T>& all, const std::vector<std::size_t>& rows) {
  std::vector<T> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = all[rows[i]];
  return out;
}

}  // namespace

std::vector<std::string> score_names(Task task) {
  return task == Task::classify ? std::vector<std::string>{"accuracy", "balanced_accuracy", "f1_macro"}
                                : std::vector<std::string>{"rmse", "mae", "r2"};
}

FoldScores::FoldScores(const EvalOptions& options, const Targets& targets) : options_(options), targets_(targets) {
  const std::size_t combos = options.metrics.size() * options.weights.size(), nk = options.ks.size();
  const std::vector<std::vector<double>> per_k(score_names(options.task).size());
  scores_.assign(combos, std::vector<std::vector<std::vector<double>>>(nk, per_k));
  const std::size_t nc = targets.encoder.size();
  if (options.task == Task::classify)
    confusion_.assign(combos, std::vector<std::vector<std::size_t>>(nc, std::vector<std::size_t>(nc, 0)));
}

void FoldScores::add(const std::vector<std::size_t>& held, const FoldPredictions& predictions) {
  const std::size_t m = held.size(), nk = options_.ks.size();
  const bool cls = options_.task == Task::classify;
  const std::vector<int> tc = cls ? of_rows(targets_.classes, held) : std::vector<int>{};
  const std::vector<double> ty = cls ? std::vector<double>{} : of_rows(targets_.values, held);
  for (std::size_t combo = 0; combo < scores_.size(); ++combo)
    for (std::size_t ki = 0; ki < nk; ++ki) {
      auto& s = scores_[combo][ki];
      if (cls) {
        const std::vector<int> p = at_k(predictions.classes[combo], ki, m);
        s[0].push_back(accuracy(tc, p));
        s[1].push_back(balanced_accuracy(tc, p));
        s[2].push_back(f1_macro(tc, p));
        if (ki + 1 == nk) {
          auto& cm = confusion_[combo];
          for (std::size_t i = 0; i < m; ++i) ++cm[static_cast<std::size_t>(tc[i])][static_cast<std::size_t>(p[i])];
        }
      } else {
        const std::vector<double> p = at_k(predictions.values[combo], ki, m);
        s[0].push_back(rmse(ty, p));
        s[1].push_back(mae(ty, p));
        s[2].push_back(r2(ty, p));
      }
    }
}

std::vector<SweepRow> FoldScores::rows() const {
  std::vector<SweepRow> rows;
  const std::size_t nw = options_.weights.size();
  for (std::size_t mi = 0; mi < options_.metrics.size(); ++mi)
    for (std::size_t wi = 0; wi < nw; ++wi)
      for (std::size_t ki = 0; ki < options_.ks.size(); ++ki) {
        SweepRow row;
        row.k = options_.ks[ki];
        row.metric = options_.metrics[mi];
        row.weights = options_.weights[wi];
        for (const auto& v : scores_[mi * nw + wi][ki]) row.scores.push_back(summarize(v));
        rows.push_back(std::move(row));
      }
  return rows;
}

std::size_t best_row(const std::vector<SweepRow>& rows, Task task) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double a = rows[i].scores[0].mean, b = rows[best].scores[0].mean;
    const bool better = task == Task::classify ? a > b : a < b;
    if (better || (a == b && rows[i].k < rows[best].k)) best = i;
  }
  return best;
}

}  // namespace knn::detail
