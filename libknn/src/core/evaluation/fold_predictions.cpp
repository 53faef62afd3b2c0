// One fold's predictions: one search per metric at the largest k, every smaller k a prefix of
// its lists (docs/design.md#evaluation).
#include "core/evaluation/eval_context.hpp"
#include "distributed/candidate_merge.hpp"

namespace knn::detail {

FoldPredictions predict_fold(const EvalContext& ctx, FittedRows& fit, const Matrix& queries, const Scaler* scaler,
                             const std::vector<std::int64_t>* exclude, const OverflowAt& at) {
  const EvalOptions& opt = ctx.options;
  const bool cls = opt.task == Task::classify;
  const std::size_t nk = opt.ks.size(), nw = opt.weights.size();
  // Each training row's class id or target travels with it through the search (from whichever
  // rank holds it), and the votes read them by position.
  std::vector<double> payload(fit.global.size());
  for (std::size_t i = 0; i < payload.size(); ++i) {
    const auto g = static_cast<std::size_t>(fit.global[i]);
    payload[i] = cls ? ctx.targets.classes[g] : ctx.targets.values[g];
  }
  FoldPredictions out;
  out.classes.assign(opt.metrics.size() * nw, {});
  out.values.assign(opt.metrics.size() * nw, {});
  SearchRequest req;
  req.train = &fit.rows;
  req.k = opt.ks.back();
  req.exclude = exclude ? exclude->data() : nullptr;
  Matrix scaled;
  ctx.placement.set_queries(req, queries, scaler, scaled, at);
  if (!fit.prepared && fit.rows.rows) fit.prepared = ctx.backend->prepare(fit.rows);
  req.prepared = fit.prepared.get();
  try {
    for (std::size_t mi = 0; mi < opt.metrics.size(); ++mi) {
      req.metric = opt.metrics[mi];
      std::vector<double> found;
      const Neighbors nb =
          positional(ctx.placement.search(*ctx.backend, req, RowKeys{0, fit.global.data()}, payload.data(), found));
      std::vector<int> found_classes;
      if (cls) found_classes.assign(found.begin(), found.end());
      for (std::size_t wi = 0; wi < nw; ++wi) {
        const std::size_t combo = mi * nw + wi;
        if (cls) {
          out.classes[combo].resize(nk * queries.rows);
          ctx.backend->vote(nb, found_classes.data(), ctx.targets.encoder.size(), opt.weights[wi], opt.ks,
                            out.classes[combo].data(), nullptr);
        } else {
          out.values[combo].resize(nk * queries.rows);
          ctx.backend->average(nb, found.data(), opt.weights[wi], opt.ks, out.values[combo].data());
        }
      }
    }
  } catch (const ScaleOverflow& e) {
    // Unsharded, the search scales the queries and a value that overflows surfaces here (sharded,
    // set_queries scaled them and named the cell).
    if (!at) throw;
    throw at(e);
  }
  return out;
}

}  // namespace knn::detail
