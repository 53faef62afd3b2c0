// A fold's rows on this process: its training rows fitted, its held-out rows gathered from every
// rank, and a query value that overflows named at its row.
#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

LocalRows local_share(const EvalContext& ctx, const std::vector<std::size_t>& rows) {
  const std::size_t lo = ctx.range.offset, hi = lo + ctx.data.size();
  LocalRows r;
  for (std::size_t g : rows)
    if (g >= lo && g < hi) r.local.push_back(g - lo), r.global.push_back(static_cast<std::int64_t>(g));
  return r;
}

LocalRows rows_here(const EvalContext& ctx, std::size_t skip) {
  LocalRows r;
  for (std::size_t i = 0; i < ctx.data.size(); ++i)
    if (ctx.range.offset + i != skip) {
      r.local.push_back(i);
      r.global.push_back(static_cast<std::int64_t>(ctx.range.offset + i));
    }
  return r;
}

FittedRows fit_rows(const EvalContext& ctx, LocalRows rows) {
  Preprocessor prep(ctx.options.impute);
  prep.fit(ctx.data, &rows.local, prep_gather(ctx.placement));
  FittedRows fit{prep, Scaler(ctx.options.scaling, prep.plain() ? std::vector<bool>{} : prep.one_hot_columns()), {},
                 nullptr, std::move(rows.global)};
  const bool every = rows.local.size() == ctx.data.size();  // the data's own matrix, not a copy
  const bool as_is = prep.plain() && !ctx.data.has_missing();
  const Matrix some = every && as_is ? Matrix{} : as_is ? take_rows(ctx.data.features, rows.local)
                                                        : prep.transform(ctx.data, nullptr, &rows.local);
  fit.rows = ctx.placement.fit_scaled(*ctx.backend, fit.scaler, every && as_is ? ctx.data.features : some, fit.prepared);
  return fit;
}

Matrix encode_rows(const EvalContext& ctx, const FittedRows& fit, const Matrix& raw) {
  return fit.prep.transform(raw, ctx.data.levels);
}

Matrix gather_rows(const EvalContext& ctx, const Matrix& m, const std::vector<std::size_t>& rows) {
  Matrix out;
  out.values = ctx.placement.gather(take_rows(m, local_share(ctx, rows).local).values);
  out.rows = rows.size();
  out.cols = m.cols;
  return out;
}

Error at_cell(const ScaleOverflow& e, const Dataset& d, std::size_t row, const Preprocessor& prep) {
  const std::size_t line = row < d.lines.size() ? d.lines[row] : 0;
  const std::size_t f = prep.feature_of(e.col);
  const std::size_t col = f < d.feature_columns.size() ? d.feature_columns[f] + 1 : 0;
  return e.at(d.source, line, col);
}

Error at_data_row(const EvalContext& ctx, const ScaleOverflow& e, std::size_t row, const Preprocessor& prep) {
  const bool here = row >= ctx.range.offset && row < ctx.range.offset + ctx.data.size();
  return here ? at_cell(e, ctx.data, row - ctx.range.offset, prep) : Error("");
}

}  // namespace knn::detail
