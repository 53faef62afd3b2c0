// Leave-one-out: every row scored by a model of all the other rows, and never its own neighbour.
#include <numeric>

#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

std::size_t run_loo(const EvalContext& ctx, FoldScores& scores) {
  const EvalOptions& opt = ctx.options;
  const std::size_t n = ctx.range.total, nk = opt.ks.size(), combos = opt.metrics.size() * opt.weights.size();
  // Pooled: all n held-out predictions are scored together (a fold of one row has no RMSE or R^2
  // of its own), so the reported standard deviation is 0.
  FoldPredictions pooled;
  pooled.classes.assign(combos, std::vector<int>(nk * n));
  pooled.values.assign(combos, std::vector<double>(nk * n));
  const auto place = [&](const FoldPredictions& p, const std::vector<std::size_t>& rows) {
    for (std::size_t c = 0; c < combos; ++c)
      for (std::size_t ki = 0; ki < nk; ++ki)
        for (std::size_t i = 0; i < rows.size(); ++i) {
          if (opt.task == Task::classify) pooled.classes[c][ki * n + rows[i]] = p.classes[c][ki * rows.size() + i];
          else pooled.values[c][ki * n + rows[i]] = p.values[c][ki * rows.size() + i];
        }
  };
  // A row that holds a column's only minimum or maximum changes the scaler when it leaves; every
  // other row shares the scaler fitted on all rows, and one search of all rows serves them.
  // Likewise a row whose leaving changes the preprocessing (a category only it has, a fill value).
  Preprocessor all_rows(opt.impute);
  all_rows.fit(ctx.data, nullptr, prep_gather(ctx.placement));
  const bool as_is = all_rows.plain() && !ctx.data.has_missing();
  std::vector<bool> special =
      ctx.placement.loo_changes_scaler(as_is ? ctx.data.features : all_rows.transform(ctx.data), opt.scaling, ctx.range);
  if (!as_is) {
    const std::vector<bool> prep = loo_changes_prep(ctx, all_rows);
    for (std::size_t i = 0; i < n; ++i) special[i] = special[i] || prep[i];
  }
  std::vector<std::size_t> shared_rows;
  for (std::size_t i = 0; i < n; ++i)
    if (!special[i]) shared_rows.push_back(i);
  std::size_t done = 0;
  if (!shared_rows.empty()) {
    // Every row trains; the shared rows, scaled, are the queries, each excluding itself.
    FittedRows fit = fit_rows(ctx, rows_here(ctx));
    const Matrix queries = gather_rows(ctx, fit.rows, shared_rows);
    const std::vector<std::int64_t> exclude(shared_rows.begin(), shared_rows.end());
    place(predict_fold(ctx, fit, queries, nullptr, &exclude, nullptr), shared_rows);
    done += shared_rows.size();
    if (opt.progress) opt.progress(done, n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!special[i]) continue;
    // The other rows train, with a scaler of their own; row i (from the rank that holds it) is the query.
    FittedRows fit = fit_rows(ctx, rows_here(ctx, i));
    const Matrix query = encode_rows(ctx, fit, gather_rows(ctx, ctx.data.features, {i}));
    const OverflowAt at = [&](const ScaleOverflow& e) { return at_data_row(ctx, e, i, fit.prep); };
    place(predict_fold(ctx, fit, query, &fit.scaler, nullptr, at), {i});
    if (opt.progress) opt.progress(++done, n);
  }
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  scores.add(all, pooled);
  return n;
}

}  // namespace knn::detail
