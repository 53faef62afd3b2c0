#include "knn/model.hpp"

#include "distributed/distributed.hpp"
#include "knn/error.hpp"
#include "knn/scores.hpp"

namespace knn {

KnnModel::KnnModel(ModelParams params) : params_(std::move(params)), scaler_(params_.scaling) {
  if (params_.k < 1) throw Error::parameter("k", quote(std::to_string(params_.k)) + " is not a whole number >= 1");
}

void KnnModel::fit_features(const Matrix& features) {
  std::size_t rows = features.rows;
  if (sharded()) {
    const ShardRange range = shard_range(*params_.backend.comm, features.rows);
    offset_ = range.offset;
    rows = range.total;
  }
  if (rows == 0) throw Error("cannot fit on zero training rows");
  if (params_.k > rows)
    throw Error::parameter("k", quote(std::to_string(params_.k)) + " is larger than the " + std::to_string(rows) +
                                 " training rows (largest allowed: " + std::to_string(rows) + ")");
  // The backend scales the rows; it becomes the model's once they are scaled, so that a first fit
  // that throws leaves the model unfitted.
  const std::shared_ptr<const Backend> backend = backend_ ? backend_ : make_backend(params_.backend);
  scaler_ = Scaler(params_.scaling);
  std::shared_ptr<const PreparedTrain> prepared;
  if (sharded()) {
    scaler_.fit(features, *params_.backend.comm);
    train_ = features;
    scaler_.transform(train_);
    prepared = train_.rows ? backend->prepare(train_) : nullptr;
  } else {
    train_ = backend->fit_scaler_prepared(scaler_, features, prepared);  // the GPU uploads the rows once
  }
  backend_ = backend;
  prepared_ = std::move(prepared);
}

Neighbors KnnModel::kneighbors(const Matrix& queries, std::vector<double>& payload) const {
  if (!backend_) throw Error("the model is not fitted");
  if (queries.cols != train_.cols)
    throw Error("queries have " + std::to_string(queries.cols) + " features, the model was fitted on " +
                std::to_string(train_.cols));
  SearchRequest req;
  req.train = &train_;
  req.prepared = prepared_.get();
  req.k = params_.k;
  req.metric = params_.metric;
  if (sharded()) {
    Matrix q = queries;
    scaler_.transform(q);
    req.queries = &q;
    return detail::search_sharded(*backend_, req, *params_.backend.comm, offset_, payload_.data(), payload);
  }
  // The search scales the queries: the GPU as it uploads them.
  req.queries = &queries;
  req.scaler = &scaler_;
  return search(*backend_, req);
}

Neighbors KnnModel::kneighbors(const Matrix& queries) const {
  std::vector<double> unused;
  return kneighbors(queries, unused);
}

void KnnClassifier::fit(const Matrix& features, const std::vector<std::string>& labels) {
  if (labels.size() != features.rows)
    throw Error("fit: " + std::to_string(features.rows) + " rows but " + std::to_string(labels.size()) + " labels");
  if (sharded()) {
    encoder_.fit(detail::all_labels(*params_.backend.comm, labels));
    train_class_ = encoder_.encode(labels);
    payload_.assign(train_class_.begin(), train_class_.end());
  } else {
    encoder_.fit(labels);
    train_class_ = encoder_.encode(labels);
  }
  fit_features(features);
}

std::vector<int> KnnClassifier::predict_ids(const Matrix& queries) const {
  std::vector<int> out(queries.rows);
  if (sharded()) {
    std::vector<double> payload;
    const Neighbors nb = kneighbors(queries, payload);
    const std::vector<int> ids(payload.begin(), payload.end());
    backend_->vote(detail::positional(nb), ids.data(), encoder_.size(), params_.weights, {params_.k}, out.data(), nullptr);
    return out;
  }
  const Neighbors nb = kneighbors(queries);
  backend_->vote(nb, train_class_.data(), encoder_.size(), params_.weights, {params_.k}, out.data(), nullptr);
  return out;
}

std::vector<std::string> KnnClassifier::predict(const Matrix& queries) const {
  const auto ids = predict_ids(queries);
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) out.push_back(encoder_.decode(id));
  return out;
}

std::vector<double> KnnClassifier::predict_proba(const Matrix& queries) const {
  std::vector<int> ids(queries.rows);
  std::vector<double> proba(queries.rows * encoder_.size());
  if (sharded()) {
    std::vector<double> payload;
    const Neighbors nb = kneighbors(queries, payload);
    const std::vector<int> cls(payload.begin(), payload.end());
    backend_->vote(detail::positional(nb), cls.data(), encoder_.size(), params_.weights, {params_.k}, ids.data(), proba.data());
    return proba;
  }
  const Neighbors nb = kneighbors(queries);
  backend_->vote(nb, train_class_.data(), encoder_.size(), params_.weights, {params_.k}, ids.data(), proba.data());
  return proba;
}

double KnnClassifier::score(const Matrix& queries, const std::vector<std::string>& labels) const {
  const auto pred = predict(queries);
  if (labels.size() != pred.size()) throw Error("score: labels and queries differ in number");
  std::size_t hit = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) hit += pred[i] == labels[i];
  return pred.empty() ? 0.0 : static_cast<double>(hit) / static_cast<double>(pred.size());
}

void KnnRegressor::fit(const Matrix& features, const std::vector<double>& targets) {
  if (targets.size() != features.rows)
    throw Error("fit: " + std::to_string(features.rows) + " rows but " + std::to_string(targets.size()) + " targets");
  targets_ = targets;
  if (sharded()) payload_ = targets;
  fit_features(features);
}

std::vector<double> KnnRegressor::predict(const Matrix& queries) const {
  std::vector<double> out(queries.rows);
  if (sharded()) {
    std::vector<double> payload;
    const Neighbors nb = kneighbors(queries, payload);
    backend_->average(detail::positional(nb), payload.data(), params_.weights, {params_.k}, out.data());
    return out;
  }
  const Neighbors nb = kneighbors(queries);
  backend_->average(nb, targets_.data(), params_.weights, {params_.k}, out.data());
  return out;
}

double KnnRegressor::score(const Matrix& queries, const std::vector<double>& targets) const {
  return r2(targets, predict(queries));
}

}  // namespace knn
