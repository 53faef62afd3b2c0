#include "core/placement.hpp"

namespace knn::detail {

std::shared_ptr<const Placement> placement(const std::shared_ptr<const Communicator>& comm) {
  return distributed(comm.get()) ? sharded_placement(comm) : local_placement();
}

}  // namespace knn::detail

namespace knn::detail {

}  // namespace knn::detail

namespace knn {

void check_fillable(const Dataset& data, Impute impute, const std::shared_ptr<const Communicator>& comm) {
  const auto where = detail::placement(comm);
  Preprocessor(impute).fit(data, nullptr, detail::prep_gather(*where));
}

}  // namespace knn

namespace knn::detail {

Preprocessor::Gather prep_gather(const Placement& placement) {
  Preprocessor::Gather g;
  g.floats = [&placement](std::vector<float> v) { return placement.gather(std::move(v)); };
  // Counts travel as doubles, exact far beyond any count of rows.
  g.counts = [&placement](std::vector<long long> v) {
    const std::vector<double> all = placement.gather(std::vector<double>(v.begin(), v.end()));
    return std::vector<long long>(all.begin(), all.end());
  };
  g.collective = [&placement](const std::function<void()>& step) { placement.collective(step); };
  return g;
}

}  // namespace knn::detail
