// A test file: its rows scored by a model of every training row (every rank holds the whole file).
#include <numeric>

#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

std::size_t run_test_file(const EvalContext& ctx, FoldScores& scores) {
  const Dataset& test = *ctx.options.folds.test;
  FittedRows fit = fit_rows(ctx, rows_here(ctx));
  std::vector<std::size_t> held(test.size());  // the test rows follow the data rows in Targets
  std::iota(held.begin(), held.end(), ctx.range.total);
  const OverflowAt at = [&](const ScaleOverflow& e) { return at_cell(e, test, e.row, fit.prep); };
  const Matrix queries = fit.prep.transform(test);
  scores.add(held, predict_fold(ctx, fit, queries, &fit.scaler, nullptr, at));
  if (ctx.options.progress) ctx.options.progress(1, 1);
  return 1;
}

}  // namespace knn::detail
