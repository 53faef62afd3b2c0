// k-fold cross-validation: each fold's held-out rows scored by a model of the other folds' rows.
#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

std::size_t run_kfold(const EvalContext& ctx, const std::vector<Fold>& folds, FoldScores& scores) {
  for (std::size_t fi = 0; fi < folds.size(); ++fi) {
    const Fold& f = folds[fi];
    FittedRows fit = fit_rows(ctx, local_share(ctx, f.train));
    // The held-out rows of every rank, in global order, are the queries.
    const Matrix queries = encode_rows(ctx, fit, gather_rows(ctx, ctx.data.features, f.test));
    const OverflowAt at = [&](const ScaleOverflow& e) { return at_data_row(ctx, e, f.test[e.row], fit.prep); };
    scores.add(f.test, predict_fold(ctx, fit, queries, &fit.scaler, nullptr, at));
    if (ctx.options.progress) ctx.options.progress(fi + 1, folds.size());
  }
  return folds.size();
}

}  // namespace knn::detail
