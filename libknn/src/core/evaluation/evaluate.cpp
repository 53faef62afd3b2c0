// knn::evaluate: the options checked, the targets read, the folds planned, and the one run that
// the fold specification names.
#include <algorithm>

#include "core/evaluation/eval_context.hpp"
#include "knn/error.hpp"

namespace knn {

EvalResult evaluate(const Dataset& data, const EvalOptions& opt) {
  detail::validate_options(data, opt);
  const FoldSpec& fs = opt.folds;
  const bool cls = opt.task == Task::classify;
  // Sharded, each rank passes its shard of `data`, and a test file every rank holds whole; folds
  // and targets are planned over all rows, the same on every rank.
  const auto placement = detail::placement(opt.backend.comm);
  detail::EvalContext ctx{data, opt, *placement, placement->range(data),
                          detail::read_targets(data, fs.kind == FoldSpec::Kind::test ? fs.test : nullptr, opt.task, *placement),
                          nullptr};
  const std::size_t n = ctx.range.total;
  // A missing cell with nothing to fill it, or a column with no value to fill from, is found
  // before any fold: on all rows.
  Preprocessor(opt.impute).fit(data, nullptr, detail::prep_gather(*placement));

  std::vector<detail::Fold> folds;
  std::size_t smallest_train = n;
  if (fs.kind == FoldSpec::Kind::kfold) {
    folds = detail::kfold_folds(n, cls ? &ctx.targets.classes : nullptr, fs);
    for (const auto& f : folds) smallest_train = std::min(smallest_train, f.train.size());
  } else if (fs.kind == FoldSpec::Kind::splits) {
    detail::check_splits(fs.splits, n);
    folds = fs.splits;
    for (auto& f : folds) {
      // A fold's training rows are a set, in row order, as k-fold's are: ties go to the smaller row.
      std::sort(f.train.begin(), f.train.end());
      f.train.erase(std::unique(f.train.begin(), f.train.end()), f.train.end());
      smallest_train = std::min(smallest_train, f.train.size());
    }
  } else if (fs.kind == FoldSpec::Kind::loo) {
    if (n < 2) throw Error::parameter("loo", "leave-one-out needs at least 2 rows");
    smallest_train = n - 1;
  }
  detail::check_k_fits(opt, smallest_train);

  ctx.backend = make_backend(opt.backend);
  detail::FoldScores scores(opt, ctx.targets);
  EvalResult res;
  res.task = opt.task;
  res.score_names = detail::score_names(opt.task);
  if (cls) res.classes = ctx.targets.encoder.classes();
  switch (fs.kind) {
    case FoldSpec::Kind::kfold:
    case FoldSpec::Kind::splits: res.folds = detail::run_kfold(ctx, folds, scores); break;
    case FoldSpec::Kind::loo: res.folds = detail::run_loo(ctx, scores); break;
    case FoldSpec::Kind::test: res.folds = detail::run_test_file(ctx, scores); break;
  }
  res.rows = scores.rows();
  res.confusion = scores.confusion();
  res.best = detail::best_row(res.rows, opt.task);
  return res;
}

}  // namespace knn
