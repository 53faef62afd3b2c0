// Leave-one-out shares one model among the rows whose leaving would not change it: here, the rows
// that would change the preprocessing fitted on all rows, each then fitted on its own.
#include <cmath>

#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

std::vector<bool> loo_changes_prep(const EvalContext& ctx, const Preprocessor& all) {
  const Dataset& data = ctx.data;
  const std::size_t d = data.dims(), n = data.size();
  const Preprocessor::Gather gather = prep_gather(ctx.placement);
  // Missing cells per feature and rows per category, over every rank.
  std::vector<long long> missing(d, 0);
  std::vector<std::vector<long long>> per_level(d);
  for (std::size_t f = 0; f < d; ++f)
    if (all.features()[f].type == ColumnType::categorical) per_level[f].assign(data.levels[f].size(), 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < d; ++f) {
      const float v = data.features(i, f);
      if (std::isnan(v)) ++missing[f];
      else if (!per_level[f].empty()) ++per_level[f][static_cast<std::size_t>(v)];
    }
  const auto total = [&](std::vector<long long>& mine) {
    if (mine.empty()) return;
    const std::vector<long long> every = gather.counts(mine);
    std::fill(mine.begin(), mine.end(), 0);
    for (std::size_t i = 0; i < every.size(); ++i) mine[i % mine.size()] += every[i];
  };
  total(missing);
  for (auto& c : per_level) total(c);

  std::vector<int> mine(n, 0);
  const bool imputes = all.impute() != Impute::none;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < d && !mine[i]; ++f) {
      const float v = data.features(i, f);
      if (std::isnan(v)) continue;  // its own fill comes from the other rows either way
      const FeaturePrep& fp = all.features()[f];
      if (fp.type == ColumnType::numeric) {
        // Its value enters the mean, median or most frequent value that fills the other rows.
        mine[i] = imputes && missing[f] > 0;
        continue;
      }
      const auto level = static_cast<std::size_t>(v);
      // A category only this row holds leaves with it; the most frequent category may change.
      const bool fills = imputes && missing[f] > 0 && fp.fill_category >= 0 &&
                         fp.categories[static_cast<std::size_t>(fp.fill_category)] == data.levels[f][level];
      mine[i] = per_level[f][level] == 1 || fills;
    }
  const std::vector<int> every = ctx.placement.gather(mine);
  return std::vector<bool>(every.begin(), every.end());
}

}  // namespace knn::detail
