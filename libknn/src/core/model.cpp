#include "knn/model.hpp"

#include <algorithm>

#include "core/placement.hpp"
#include "core/prepared_backend.hpp"
#include "distributed/candidate_merge.hpp"
#include "knn/communicator.hpp"
#include "knn/error.hpp"
#include "knn/scores.hpp"
#include "knn/stage_times.hpp"

namespace knn {

namespace {

// k from 1 to the training rows (`rows`; 0 where they are not known yet).
void check_k(std::size_t k, std::size_t rows) {
  if (k < 1) throw Error::parameter("k", quote(std::to_string(k)) + " is not a whole number >= 1");
  if (rows && k > rows)
    throw Error::parameter("k", quote(std::to_string(k)) + " is larger than the " + std::to_string(rows) +
                                 " training rows (largest allowed: " + std::to_string(rows) + ")");
}

// The file row of every training row of `data` (every rank's, in rank order), or none where each
// row is the file's row of its index.
std::vector<std::size_t> training_file_rows(const Dataset& data, const detail::Placement& placement, const Communicator* comm) {
  const std::vector<int> dropped = placement.gather(std::vector<int>{!data.file_rows.empty() || data.dropped_rows > 0});
  if (std::find(dropped.begin(), dropped.end(), 1) == dropped.end()) return {};
  std::vector<std::size_t> rows = all_file_rows(data, comm);
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] != i) return rows;
  return {};
}

}  // namespace

KnnModel::KnnModel(ModelParams params)
    : params_(std::move(params)), placement_(detail::placement(params_.backend.comm)), scaler_(params_.scaling) {
  check_k(params_.k, 0);
}

void KnnModel::set_k(std::size_t k) {
  check_k(k, total_rows_);
  params_.k = k;
}

void KnnModel::set_backend(BackendOptions backend) {
  if (!backend_) throw Error("the model is not fitted");
  if (backend.comm != params_.backend.comm) throw Error("set_backend: the backend must have the model's communicator");
  std::shared_ptr<const Backend> made;
  std::shared_ptr<const PreparedTrain> prepared;
  // On every rank together: a rank whose GPU fails ends them all.
  collective(params_.backend.comm.get(), [&] {
    made = make_backend(backend);
    stage_done("backend taken for the model");
    prepared = train_.rows ? made->prepare(train_) : nullptr;
    stage_done("model rows kept by the backend");
  });
  params_.backend = std::move(backend);
  backend_ = std::move(made);
  prepared_ = std::move(prepared);
}

const Dataset& KnnModel::layout() const {
  static const Dataset none;
  return layout_ ? *layout_ : none;
}

void KnnModel::fit_features(MatrixView features) {
  Preprocessor numeric = Preprocessor::numeric(features.cols);
  fit_encoded(features, numeric);
  layout_ = nullptr;
}

void KnnModel::fit_dataset(const Dataset& data) {
  Preprocessor prep(params_.impute);
  prep.fit(data, nullptr, detail::prep_gather(*placement_));
  auto layout = std::make_shared<Dataset>(data.layout());
  layout->file_rows = training_file_rows(data, *placement_, params_.backend.comm.get());
  if (prep.keeps(data)) {
    fit_encoded(data.features, prep);
  } else {
    const Matrix encoded = prep.transform(data);
    stage_done("training rows encoded");
    fit_encoded(encoded, prep);
  }
  layout_ = std::move(layout);
}

Matrix KnnModel::encode(const Dataset& queries, PrepReport* report) const {
  if (!backend_) throw Error("the model is not fitted");
  return prep_.transform(queries, report);
}

MatrixView KnnModel::encode(const Dataset& queries, Matrix& storage, PrepReport* report) const {
  if (!backend_) throw Error("the model is not fitted");
  if (prep_.keeps(queries)) return queries.features;  // nothing imputed, no category unknown
  storage = prep_.transform(queries, report);
  return storage;
}

void KnnModel::fit_encoded(MatrixView features, Preprocessor& prep) {
  const ShardRange range = placement_->range(features.rows);
  offset_ = range.offset;
  const std::size_t rows = range.total;
  if (rows == 0) throw Error("cannot fit on zero training rows");
  check_k(params_.k, rows);
  // The backend scales the rows; it becomes the model's once they are scaled, so that a first fit
  // that throws leaves the model unfitted.
  Scaler scaler(params_.scaling, prep.plain() ? std::vector<bool>{} : prep.one_hot_columns());
  std::shared_ptr<const PreparedTrain> prepared;
  std::shared_ptr<const Backend> backend = backend_;
  Matrix scaled;
  if (!backend && !distributed(params_.backend.comm.get()) && detail::prepared_backend_starting(params_.backend)) {
    // The GPU is still starting (knn-cli starts it while it reads the files): the host's cores
    // scale the rows meanwhile, with the arithmetic every backend shares, and the GPU then takes
    // the scaled rows, instead of scaling them itself and copying them back.
    stage_done("fit begun (labels and columns checked)");
    scaled = scaler.fit_transform(features);
    stage_done("training rows scaled on the host while the GPU starts");
    backend = make_backend(params_.backend);
    stage_done("backend taken for the fit");
    prepared = backend->prepare(scaled);
  } else {
    if (!backend) backend = make_backend(params_.backend);
    stage_done("backend taken for the fit");
    scaled = placement_->fit_scaled(*backend, scaler, features, prepared);  // the GPU uploads the rows once
  }
  train_ = std::move(scaled);
  stage_done("training rows scaled and kept by the backend");
  scaler_ = std::move(scaler);
  prep_ = std::move(prep);
  total_rows_ = rows;
  backend_ = backend;
  prepared_ = std::move(prepared);
}

Neighbors KnnModel::kneighbors(MatrixView queries, std::size_t k, std::vector<double>& payload) const {
  if (!backend_) throw Error("the model is not fitted");
  if (queries.cols != train_.cols)
    throw Error("queries have " + std::to_string(queries.cols) + " features, the model was fitted on " +
                std::to_string(train_.cols));
  SearchRequest req;
  req.train = &train_;
  req.prepared = prepared_.get();
  req.k = k;
  req.metric = params_.metric;
  Matrix scaled;
  placement_->set_queries(req, queries, &scaler_, scaled, nullptr);
  Neighbors nb = placement_->search(*backend_, req, detail::RowKeys{offset_}, payload_.empty() ? nullptr : payload_.data(), payload);
  stage_done("searched");
  return nb;
}

Neighbors KnnModel::kneighbors(MatrixView queries) const { return kneighbors(queries, params_.k); }

Neighbors KnnModel::kneighbors(MatrixView queries, std::size_t k) const {
  std::vector<double> unused;
  return kneighbors(queries, k, unused);
}

Neighbors KnnModel::kneighbors_of_train(std::size_t k) const {
  if (!backend_) throw Error("the model is not fitted");
  // The queries are every rank's scaled training rows, in global order; each excludes itself.
  Matrix all;
  all.values = placement_->gather(train_.values);
  all.cols = train_.cols;
  all.rows = total_rows_;
  std::vector<std::int64_t> self(all.rows);
  for (std::size_t i = 0; i < self.size(); ++i) self[i] = static_cast<std::int64_t>(i);
  SearchRequest req;
  req.train = &train_;
  req.prepared = prepared_.get();
  req.k = k;
  req.metric = params_.metric;
  req.exclude = self.data();
  Matrix storage;
  placement_->set_queries(req, all, nullptr, storage, nullptr);
  std::vector<double> unused;
  return placement_->search(*backend_, req, detail::RowKeys{offset_}, nullptr, unused);
}

void KnnModel::fit_with_payload(std::vector<double> payload, const std::function<void()>& fit) {
  payload_.swap(payload);
  try {
    fit();
  } catch (...) {
    payload_.swap(payload);
    throw;
  }
}

template <class Id>
void KnnClassifier::fit_classes(LabelEncoder encoder, const std::vector<Id>& ids, const std::function<void()>& fit) {
  std::swap(encoder_, encoder);
  try {
    fit_with_payload(std::vector<double>(ids.begin(), ids.end()), fit);
  } catch (...) {
    std::swap(encoder_, encoder);
    throw;
  }
}

void KnnClassifier::fit(MatrixView features, const std::vector<std::string>& labels) {
  if (labels.size() != features.rows)
    throw Error("fit: " + std::to_string(features.rows) + " rows but " + std::to_string(labels.size()) + " labels");
  LabelEncoder encoder;
  encoder.fit(placement_->label_union(labels));
  fit_classes(encoder, encoder.encode(labels), [&] { fit_features(features); });
}

void KnnClassifier::fit(MatrixView features, const std::vector<std::int64_t>& ids, std::size_t n_classes) {
  // Checked on every rank together, so that a bad id on one rank ends them all.
  collective(params_.backend.comm.get(), [&] {
    if (n_classes == 0) throw Error::parameter("n_classes", "0: a classifier needs at least one class");
    if (ids.size() != features.rows)
      throw Error("fit: " + std::to_string(features.rows) + " rows but " + std::to_string(ids.size()) + " class ids");
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || static_cast<std::uint64_t>(ids[i]) >= n_classes)
        throw Error("fit: class id " + std::to_string(ids[i]) + " of row " + std::to_string(i) + " is not from 0 to " +
                    std::to_string(n_classes - 1));
  });
  LabelEncoder encoder;
  encoder.fit_ids(n_classes);
  fit_classes(encoder, ids, [&] { fit_features(features); });
}

void KnnClassifier::fit(const Dataset& data) {
  if (!data.has_labels()) throw Error(data.source + ": no label column to fit a classifier on");
  LabelEncoder encoder;
  encoder.fit(placement_->label_union(data.labels));
  fit_classes(encoder, encoder.encode(data.labels), [&] { fit_dataset(data); });
}

void KnnClassifier::vote(MatrixView queries, int* ids, double* proba) const {
  std::vector<double> found;
  Neighbors nb = kneighbors(queries, params_.k, found);
  // Each neighbour's class id came with it: the vote reads them by position.
  const std::vector<int> cls(found.begin(), found.end());
  backend_->vote(detail::positional(std::move(nb)), cls.data(), encoder_.size(), params_.weights, {params_.k}, ids, proba);
  stage_done("voted");
}

std::vector<int> KnnClassifier::predict_ids(MatrixView queries) const {
  std::vector<int> out(queries.rows);
  vote(queries, out.data(), nullptr);
  return out;
}

std::vector<std::string> KnnClassifier::predict(MatrixView queries) const {
  const auto ids = predict_ids(queries);
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) out.push_back(encoder_.decode(id));
  return out;
}

std::vector<double> KnnClassifier::predict_proba(MatrixView queries) const {
  std::vector<int> ids(queries.rows);
  std::vector<double> proba(queries.rows * encoder_.size());
  vote(queries, ids.data(), proba.data());
  return proba;
}

double KnnClassifier::score(MatrixView queries, const std::vector<std::string>& labels) const {
  const auto pred = predict(queries);
  if (labels.size() != pred.size()) throw Error("score: labels and queries differ in number");
  std::size_t hit = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) hit += pred[i] == labels[i];
  return pred.empty() ? 0.0 : static_cast<double>(hit) / static_cast<double>(pred.size());
}

void KnnRegressor::fit(MatrixView features, const std::vector<double>& targets) {
  if (targets.size() != features.rows)
    throw Error("fit: " + std::to_string(features.rows) + " rows but " + std::to_string(targets.size()) + " targets");
  fit_with_payload(targets, [&] { fit_features(features); });
}

void KnnRegressor::fit(const Dataset& data) {
  if (!data.has_labels()) throw Error(data.source + ": no target column to fit a regressor on");
  fit_with_payload(numeric_targets(data), [&] { fit_dataset(data); });
}

std::vector<double> KnnRegressor::predict(MatrixView queries) const {
  std::vector<double> out(queries.rows);
  std::vector<double> found;
  Neighbors nb = kneighbors(queries, params_.k, found);
  // Each neighbour's target came with it: the mean reads them by position.
  backend_->average(detail::positional(std::move(nb)), found.data(), params_.weights, {params_.k}, out.data());
  return out;
}

double KnnRegressor::score(MatrixView queries, const std::vector<double>& targets) const {
  return r2(targets, predict(queries));
}

}  // namespace knn
