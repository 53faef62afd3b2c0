// A training set sharded over the ranks of a communicator: each step of a Placement reduces,
// gathers or merges over the ranks, so that every rank gets the answer of one process holding
// every row (docs/design.md#reproducibility).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/placement.hpp"
#include "distributed/gather.hpp"
#include "distributed/sharded_search.hpp"

namespace knn::detail {

namespace {

class ShardedPlacement final : public Placement {
 public:
  explicit ShardedPlacement(std::shared_ptr<const Communicator> comm) : comm_(std::move(comm)) {}

  ShardRange range(std::size_t local_rows) const override { return shard_range(*comm_, local_rows); }
  ShardRange range(const Dataset& data) const override { return {data.row_offset, data.all_rows()}; }

  void collective(const std::function<void()>& step) const override { knn::collective(comm_.get(), step); }
  std::vector<std::string> label_union(const std::vector<std::string>& labels) const override { return all_labels(*comm_, labels); }
  std::vector<int> gather(std::vector<int> mine) const override { return gather_all(*comm_, mine); }
  std::vector<double> gather(std::vector<double> mine) const override { return gather_all(*comm_, mine); }
  std::vector<float> gather(std::vector<float> mine) const override { return gather_all(*comm_, mine); }

  // On the host: the scaler's parameters come from every rank's rows (Scaler::fit over comm).
  Matrix fit_scaled(const Backend& backend, Scaler& scaler, MatrixView local,
                    std::shared_ptr<const PreparedTrain>& prepared) const override {
    scaler.fit(local, *comm_);
    Matrix scaled(local);
    scaler.transform(scaled);
    prepared = scaled.rows ? backend.prepare(scaled) : nullptr;
    return scaled;
  }

  void set_queries(SearchRequest& request, MatrixView queries, const Scaler* scaler, Matrix& storage,
                   const OverflowAt& at) const override {
    request.scaler = nullptr;
    if (!scaler) {
      request.queries = queries;
      return;
    }
    storage = Matrix(queries);
    request.queries = storage;
    if (!at) return scaler->transform(storage);  // every rank holds the same queries and fails alike
    collective([&] {
      try {
        scaler->transform(storage);
      } catch (const ScaleOverflow& e) {
        throw at(e);
      }
    });
  }

  Neighbors search(const Backend& backend, const SearchRequest& request, const RowKeys& keys, const double* payload,
                   std::vector<double>& payload_out) const override {
    return search_sharded(backend, request, *comm_, keys, payload, payload_out);
  }

  // The minima and maxima, and how many rows hold them, are reduced over the ranks.
  std::vector<bool> loo_changes_scaler(const Matrix& x, Scaling scaling, const ShardRange& range) const override {
    std::vector<bool> special(range.total, scaling == Scaling::standard);
    if (scaling != Scaling::minmax || range.total < 2) return special;
    const std::size_t d = x.cols;
    std::vector<double> lo(d, std::numeric_limits<double>::infinity()), hi(d, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        lo[j] = std::min(lo[j], static_cast<double>(x(i, j)));
        hi[j] = std::max(hi[j], static_cast<double>(x(i, j)));
      }
    comm_->allreduce_min(lo.data(), d);
    comm_->allreduce_max(hi.data(), d);
    // Per column: rows at the minimum, rows at the maximum, and (when one) which.
    std::vector<std::uint64_t> mine(4 * d, 0);
    for (std::size_t i = 0; i < x.rows; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        if (x(i, j) == lo[j]) ++mine[4 * j], mine[4 * j + 1] = range.offset + i;
        if (x(i, j) == hi[j]) ++mine[4 * j + 2], mine[4 * j + 3] = range.offset + i;
      }
    const auto every = gather_all(*comm_, mine);
    for (std::size_t j = 0; j < d; ++j)
      for (int side = 0; side < 2; ++side) {
        std::uint64_t count = 0, row = 0;
        for (std::size_t r = 0; r < every.size(); r += 4 * d) {
          count += every[r + 4 * j + 2 * side];
          if (every[r + 4 * j + 2 * side]) row = every[r + 4 * j + 2 * side + 1];
        }
        if (count == 1) special[row] = true;
      }
    return special;
  }

 private:
  std::shared_ptr<const Communicator> comm_;
};

}  // namespace

std::shared_ptr<const Placement> sharded_placement(std::shared_ptr<const Communicator> comm) {
  return std::make_shared<ShardedPlacement>(std::move(comm));
}

}  // namespace knn::detail
