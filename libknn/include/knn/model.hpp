#pragma once
// KnnClassifier, KnnRegressor and NearestNeighbors: scale (fitted on the training rows), search, then vote or
// average with the chosen weights.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/matrix.hpp"
#include "knn/metric.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"
#include "knn/weights.hpp"

namespace knn {

struct ModelParams {
  std::size_t k = 5;
  Weights weights;
  Metric metric = Metric::l2;
  Scaling scaling = Scaling::minmax;
  BackendOptions backend;
};

namespace detail {
class Placement;
}

/// Shared part of both models: the scaler, the scaled training rows and the backend.
class KnnModel {
 public:
  explicit KnnModel(ModelParams params = {});
  const ModelParams& params() const { return params_; }
  const Scaler& scaler() const { return scaler_; }
  const Backend& backend() const { return *backend_; }
  std::size_t train_size() const { return train_.rows; }
  /// Neighbours of the (unscaled) query rows among the training rows, in docs/design.md#neighbour-order.
  /// With a communicator of several ranks (params().backend.comm), each rank fits on its shard
  /// of the rows and this returns global row indices, the same on every rank.
  Neighbors kneighbors(const Matrix& queries) const;

 protected:
  void fit_features(const Matrix& features);
  /// The neighbours, and per neighbour the payload_ of its row (from whichever rank holds it).
  Neighbors kneighbors(const Matrix& queries, std::vector<double>& payload) const;
  ModelParams params_;
  std::shared_ptr<const detail::Placement> placement_;  // the rows here, or sharded over params_.backend.comm
  std::size_t offset_ = 0;                              // global index of the first local row
  std::vector<double> payload_;                         // per local row: the class id or target
  Scaler scaler_;
  Matrix train_;  // scaled
  std::shared_ptr<const Backend> backend_;
  std::shared_ptr<const PreparedTrain> prepared_;
};

/// Neighbours only: the scaler and the training rows, no labels (knn-cli neighbors).
class NearestNeighbors : public KnnModel {
 public:
  using KnnModel::KnnModel;
  void fit(const Matrix& features) { fit_features(features); }
};

class KnnClassifier : public KnnModel {
 public:
  using KnnModel::KnnModel;
  void fit(const Matrix& features, const std::vector<std::string>& labels);
  std::vector<std::string> predict(const Matrix& queries) const;
  std::vector<int> predict_ids(const Matrix& queries) const;  // ids into classes()
  /// queries x classes().size(), row-major: each class's share of the (weighted) vote.
  std::vector<double> predict_proba(const Matrix& queries) const;
  /// Accuracy against the given labels.
  double score(const Matrix& queries, const std::vector<std::string>& labels) const;
  const std::vector<std::string>& classes() const { return encoder_.classes(); }
  const LabelEncoder& encoder() const { return encoder_; }

 private:
  // The vote at k over the neighbours of `queries`: class ids, and shares where proba is given.
  void vote(const Matrix& queries, int* ids, double* proba) const;
  LabelEncoder encoder_;
};

class KnnRegressor : public KnnModel {
 public:
  using KnnModel::KnnModel;
  void fit(const Matrix& features, const std::vector<double>& targets);
  std::vector<double> predict(const Matrix& queries) const;
  /// Coefficient of determination R^2 against the given targets.
  double score(const Matrix& queries, const std::vector<double>& targets) const;
};

}  // namespace knn
