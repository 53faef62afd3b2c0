// A training set whose rows are all in this process: each step of a Placement in its plain form.
#include <algorithm>

#include "core/placement.hpp"

namespace knn::detail {

namespace {

class LocalPlacement final : public Placement {
 public:
  ShardRange range(std::size_t local_rows) const override { return {0, local_rows}; }
  ShardRange range(const Dataset& data) const override { return {0, data.size()}; }

  void collective(const std::function<void()>& step) const override { step(); }
  std::vector<std::string> label_union(const std::vector<std::string>& labels) const override { return distinct_labels(labels); }
  std::vector<int> gather(std::vector<int> mine) const override { return mine; }
  std::vector<double> gather(std::vector<double> mine) const override { return mine; }
  std::vector<float> gather(std::vector<float> mine) const override { return mine; }

  Matrix fit_scaled(const Backend& backend, Scaler& scaler, MatrixView local,
                    std::shared_ptr<const PreparedTrain>& prepared) const override {
    return backend.fit_scaler_prepared(scaler, local, prepared);
  }

  void set_queries(SearchRequest& request, MatrixView queries, const Scaler* scaler, Matrix& storage,
                   const OverflowAt& at) const override {
    (void)storage;
    (void)at;
    request.queries = queries;
    request.scaler = scaler;
  }

  Neighbors search(const Backend& backend, const SearchRequest& request, const RowKeys& keys, const double* payload,
                   std::vector<double>& payload_out) const override {
    SearchRequest r = request;
    std::vector<std::int64_t> exclude;
    if (request.exclude) {
      exclude.resize(request.queries.rows);
      for (std::size_t q = 0; q < exclude.size(); ++q) exclude[q] = keys.local(request.exclude[q], request.train->rows);
      r.exclude = exclude.data();
    }
    Neighbors nb = knn::search(backend, r);
    payload_out.resize(payload ? nb.index.size() : 0);
    if (payload)
      for (std::size_t i = 0; i < nb.index.size(); ++i) payload_out[i] = payload[nb.index[i]];
    for (std::int64_t& i : nb.index) i = keys.global(static_cast<std::size_t>(i));
    return nb;
  }

  // Rows holding some column's only minimum or maximum; every other row shares the scaler fitted on
  // all rows. Under standard scaling every row changes it.
  std::vector<bool> loo_changes_scaler(const Matrix& x, Scaling scaling, const ShardRange& range) const override {
    (void)range;
    std::vector<bool> special(x.rows, scaling == Scaling::standard);
    if (scaling != Scaling::minmax || x.rows < 2) return special;
    for (std::size_t j = 0; j < x.cols; ++j) {
      float lo = x(0, j), hi = x(0, j);
      for (std::size_t i = 1; i < x.rows; ++i) {
        lo = std::min(lo, x(i, j));
        hi = std::max(hi, x(i, j));
      }
      std::size_t nlo = 0, nhi = 0, ilo = 0, ihi = 0;
      for (std::size_t i = 0; i < x.rows; ++i) {
        if (x(i, j) == lo) nlo++, ilo = i;
        if (x(i, j) == hi) nhi++, ihi = i;
      }
      if (nlo == 1) special[ilo] = true;
      if (nhi == 1) special[ihi] = true;
    }
    return special;
  }
};

}  // namespace

std::shared_ptr<const Placement> local_placement() {
  static const std::shared_ptr<const Placement> here = std::make_shared<LocalPlacement>();
  return here;
}

}  // namespace knn::detail
