#pragma once
// KnnClassifier, KnnRegressor and NearestNeighbors: preprocess and scale (fitted on the training rows),
// search, then vote or average with the chosen weights.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/matrix.hpp"
#include "knn/metric.hpp"
#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"
#include "knn/weights.hpp"

namespace knn {

struct ModelParams {
  std::size_t k = 5;
  Weights weights;
  Metric metric = Metric::l2;
  Scaling scaling = Scaling::minmax;
  /// How missing feature cells of a data set are filled (fit(const Dataset&)).
  Impute impute = Impute::none;
  BackendOptions backend;
};

namespace detail {
class Placement;
}

/// Shared part of both models: the preprocessing, the scaler, the scaled training rows and the
/// backend. A model fitted on a Matrix takes its columns as numeric features; fitted on a
/// Dataset it fits the preprocessing on its rows, and queries given as a Dataset (or as rows
/// that encode() made) are preprocessed alike.
class KnnModel {
 public:
  explicit KnnModel(ModelParams params = {});
  const ModelParams& params() const { return params_; }
  const Preprocessor& preprocessor() const { return prep_; }
  const Scaler& scaler() const { return scaler_; }
  /// The query rows of a data set as the model searches them before scaling: imputed and
  /// one-hot encoded by the fitted preprocessing. Throws for a missing cell it cannot fill,
  /// named at the file's line and column.
  Matrix encode(const Dataset& queries, PrepReport* report = nullptr) const;
  const Backend& backend() const { return *backend_; }
  std::size_t train_size() const { return train_.rows; }
  /// Neighbours of the (unscaled) query rows among the training rows, in docs/design.md#neighbour-order.
  /// With a communicator of several ranks (params().backend.comm), each rank fits on its shard
  /// of the rows and this returns global row indices, the same on every rank.
  Neighbors kneighbors(const Matrix& queries) const;
  Neighbors kneighbors(const Dataset& queries) const { return kneighbors(encode(queries)); }
  /// The same for k nearest (1..training rows) in place of params().k.
  Neighbors kneighbors(const Matrix& queries, std::size_t k) const;
  /// The k nearest of every training row (global row order) among the other training rows: a
  /// row is never its own neighbour, as in leave-one-out; k from 1 to the training rows less one.
  Neighbors kneighbors_of_train(std::size_t k) const;

 protected:
  void fit_features(const Matrix& features);
  /// Fits the preprocessing on the data set's rows (every rank's), then the model on them encoded.
  void fit_dataset(const Dataset& data);
  /// Fits the model on rows that `prep` (fitted) made; it becomes the model's preprocessing.
  void fit_encoded(const Matrix& features, Preprocessor& prep);
  /// The k nearest, and per neighbour the payload_ of its row (from whichever rank holds it).
  Neighbors kneighbors(const Matrix& queries, std::size_t k, std::vector<double>& payload) const;
  ModelParams params_;
  std::shared_ptr<const detail::Placement> placement_;  // the rows here, or sharded over params_.backend.comm
  std::size_t offset_ = 0;                              // global index of the first local row
  std::vector<double> payload_;                         // per local row: the class id or target
  Preprocessor prep_;
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
  void fit(const Dataset& data) { fit_dataset(data); }
};

class KnnClassifier : public KnnModel {
 public:
  using KnnModel::KnnModel;
  void fit(const Matrix& features, const std::vector<std::string>& labels);
  /// Fits on the data set's features and labels.
  void fit(const Dataset& data);
  std::vector<std::string> predict(const Matrix& queries) const;
  std::vector<std::string> predict(const Dataset& queries) const { return predict(encode(queries)); }
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
  /// Fits on the data set's features and its label column read as numbers.
  void fit(const Dataset& data);
  std::vector<double> predict(const Matrix& queries) const;
  std::vector<double> predict(const Dataset& queries) const { return predict(encode(queries)); }
  /// Coefficient of determination R^2 against the given targets.
  double score(const Matrix& queries, const std::vector<double>& targets) const;
};

}  // namespace knn
