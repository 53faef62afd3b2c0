// KnnModel::kneighbors_on_device: a fitted model's search of queries in GPU memory, for callers
// whose rows already live there (CuPy arrays, PyTorch tensors). The model's scaling and sharding
// run on host rows, so such a model refuses rather than search unscaled or partial rows.
#include <string>

#include "knn/error.hpp"
#include "knn/model.hpp"

namespace knn {

void KnnModel::kneighbors_on_device(const float* queries, std::size_t rows, std::size_t k, std::int64_t* index,
                                    double* distance) const {
  if (!backend_) throw Error("the model is not fitted");
  if (params_.scaling != Scaling::none)
    throw Error::parameter("scaling", std::string("queries in GPU memory are searched as they are, and this model scales its rows (") +
                                          to_string(params_.scaling) + "); fit it with scaling none, scaling the rows beforehand");
  if (total_rows_ != train_.rows)
    throw Error::parameter("comm", "this model is sharded over several ranks; queries in GPU memory are searched by one process's model");
  DeviceSearchRequest r;
  r.train = &train_;
  r.prepared = prepared_.get();
  r.queries = queries;
  r.rows = rows;
  r.k = k;
  r.metric = params_.metric;
  r.index = index;
  r.distance = distance;
  search_on_device(*backend_, r);
}

}  // namespace knn
