#pragma once
// KnnClassifier, KnnRegressor and NearestNeighbors: preprocess and scale (fitted on the training rows),
// search, then vote or average with the chosen weights.
#include <cstddef>
#include <cstdint>
#include <functional>
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

/// The models a model file can hold (docs/model-format.md).
enum class ModelKind { neighbors, classifier, regressor };
const char* to_string(ModelKind kind);  // "neighbors" | "classifier" | "regressor"

namespace detail {
class Placement;
struct ModelRecord;
class ModelReader;
}  // namespace detail

/// Shared part of both models: the preprocessing, the scaler, the scaled training rows and the
/// backend. A model fitted on a Matrix takes its columns as numeric features; fitted on a
/// Dataset it fits the preprocessing on its rows, and queries given as a Dataset (or as rows
/// that encode() made) are preprocessed alike.
class KnnModel {
 public:
  explicit KnnModel(ModelParams params = {});
  virtual ~KnnModel() = default;
  KnnModel(const KnnModel&) = default;
  KnnModel(KnnModel&&) = default;
  KnnModel& operator=(const KnnModel&) = default;
  KnnModel& operator=(KnnModel&&) = default;

  virtual ModelKind kind() const { return ModelKind::neighbors; }
  const ModelParams& params() const { return params_; }
  /// Sets k for the searches that follow, without fitting again: from 1 to the training rows
  /// (every rank's). Throws for another k, naming parameter k.
  void set_k(std::size_t k);
  /// Runs the fitted model on another backend from now on: the GPU takes the training rows into
  /// its memory. `backend` must have the model's communicator. A program can so read a model file
  /// on the CPU backend while the GPU starts (prepare_backend) and move it there once its query
  /// file is read. Throws where the model is not fitted, or as make_backend does.
  void set_backend(BackendOptions backend);
  const Preprocessor& preprocessor() const { return prep_; }
  const Scaler& scaler() const { return scaler_; }
  /// The query rows of a data set as the model searches them before scaling: imputed and
  /// one-hot encoded by the fitted preprocessing. Throws for a missing cell it cannot fill,
  /// named at the file's line and column.
  Matrix encode(const Dataset& queries, PrepReport* report = nullptr) const;
  /// The same without a copy where the preprocessing keeps the rows as they are (numeric
  /// features, no cell missing): a view of queries.features, else of `storage`, encoded.
  MatrixView encode(const Dataset& queries, Matrix& storage, PrepReport* report = nullptr) const;
  MatrixView encode(Dataset&& queries, Matrix& storage, PrepReport* report = nullptr) const = delete;  // the view would dangle
  const Backend& backend() const { return *backend_; }
  /// Training rows held here (sharded: this rank's share).
  std::size_t train_size() const { return train_.rows; }
  /// The data set the model was fitted on, without its rows: its columns, their roles and
  /// types, and the CsvOptions it was read with, which is what load_query_csv() reads a query
  /// file against. Where training rows were dropped for a missing value, file_rows holds the
  /// file's data row of every training row (all ranks'), in the order kneighbors() numbers them.
  /// A model fitted on a Matrix has no columns here.
  const Dataset& layout() const;
  /// Neighbours of the (unscaled) query rows among the training rows, in docs/design.md#neighbour-order.
  /// With a communicator of several ranks (params().backend.comm), each rank fits on its shard
  /// of the rows and this returns global row indices, the same on every rank.
  Neighbors kneighbors(MatrixView queries) const;
  Neighbors kneighbors(const Dataset& queries) const {
    Matrix storage;
    return kneighbors(encode(queries, storage));
  }
  /// The same for k nearest (1..training rows) in place of params().k.
  Neighbors kneighbors(MatrixView queries, std::size_t k) const;
  /// The k nearest of every training row (global row order) among the other training rows: a
  /// row is never its own neighbour, as in leave-one-out; k from 1 to the training rows less one.
  Neighbors kneighbors_of_train(std::size_t k) const;
  /// The k nearest (1..training rows) of `rows` query rows in GPU memory (train width floats
  /// each, row-major, as encode() gives them), written to GPU memory: rows x k indices and
  /// distances, laid out as Neighbors' (knn::search_on_device). Only for a model on the cuda
  /// backend that does not scale (scaling none) and is not sharded; else, and as
  /// search_on_device does, throws knn::Error naming the parameter.
  void kneighbors_on_device(const float* queries, std::size_t rows, std::size_t k, std::int64_t* index, double* distance) const;

  /// Model files (docs/model-format.md): the fitted model as the bytes of a model file, to keep
  /// in memory (pickling) or write anywhere. With a communicator of several ranks every rank
  /// calls it and gets the bytes of the whole model (every rank's rows gathered in order): the
  /// bytes one process fitted on all rows would give. Throws when the model is not fitted.
  std::vector<std::uint8_t> save() const;
  /// Writes the model file to `path` whole or not at all (write_file_atomic); with several ranks,
  /// every rank calls it and rank 0 writes.
  void save(const std::string& path) const;

 protected:
  void fit_features(MatrixView features);
  /// Fits the preprocessing on the data set's rows (every rank's), then the model on them encoded.
  void fit_dataset(const Dataset& data);
  /// Fits the model on rows that `prep` (fitted) made; it becomes the model's preprocessing.
  void fit_encoded(MatrixView features, Preprocessor& prep);
  /// Runs `fit` (a fit of the rows) with `payload` as the rows' payload; where it throws, the
  /// model keeps the payload of its previous fit, which its rows still match.
  void fit_with_payload(std::vector<double> payload, const std::function<void()>& fit);
  /// The k nearest, and per neighbour the payload_ of its row (from whichever rank holds it).
  Neighbors kneighbors(MatrixView queries, std::size_t k, std::vector<double>& payload) const;
  /// A model file's record of the model, and the model from one (core/model_file.cpp); the
  /// subclasses add and take their own part (a classifier's classes).
  virtual void save_part(detail::ModelRecord& record) const;
  virtual void load_part(const detail::ModelRecord& record);
  void load_record(const detail::ModelRecord& record, BackendOptions backend);
  friend class detail::ModelReader;
  ModelParams params_;
  std::shared_ptr<const detail::Placement> placement_;  // the rows here, or sharded over params_.backend.comm
  std::size_t offset_ = 0;                              // global index of the first local row
  std::size_t total_rows_ = 0;                          // training rows over all ranks
  std::vector<double> payload_;                         // per local row: the class id or target
  Preprocessor prep_;
  Scaler scaler_;
  Matrix train_;  // scaled
  std::shared_ptr<const Dataset> layout_;  // fitted on a data set: its columns (layout())
  std::shared_ptr<const Backend> backend_;
  std::shared_ptr<const PreparedTrain> prepared_;
};

/// Neighbours only: the scaler and the training rows, no labels (knn-cli neighbors).
class NearestNeighbors : public KnnModel {
 public:
  using KnnModel::KnnModel;
  void fit(MatrixView features) { fit_features(features); }
  void fit(const Dataset& data) { fit_dataset(data); }
  /// Reads a model file (docs/model-format.md) saved by a NearestNeighbors: from `path` (mapped,
  /// both checksums verified; "-" reads standard input), or from `size` bytes at `data`. The
  /// loaded model answers as the saved one did, bit for bit; `backend` chooses where it runs.
  /// With a communicator of several ranks, every rank reads the file and keeps its share of the
  /// rows. Throws knn::Error naming the file (or "<buffer>") for a file that is truncated,
  /// corrupted (a checksum), not a model file, of a newer format version, or of another model.
  static NearestNeighbors load(const std::string& path, BackendOptions backend = {});
  static NearestNeighbors load(const void* data, std::size_t size, BackendOptions backend = {});
};

class KnnClassifier : public KnnModel {
 public:
  using KnnModel::KnnModel;
  ModelKind kind() const override { return ModelKind::classifier; }
  /// A model file saved by a KnnClassifier; as NearestNeighbors::load.
  static KnnClassifier load(const std::string& path, BackendOptions backend = {});
  static KnnClassifier load(const void* data, std::size_t size, BackendOptions backend = {});
  void fit(MatrixView features, const std::vector<std::string>& labels);
  /// The same with labels given as class ids, each from 0 to n_classes - 1; classes() are their
  /// texts "0" .. "n_classes-1". Where every id occurs this is fit() on those texts, bit for bit,
  /// without reading a text per row.
  void fit(MatrixView features, const std::vector<std::int64_t>& ids, std::size_t n_classes);
  /// Fits on the data set's features and labels.
  void fit(const Dataset& data);
  std::vector<std::string> predict(MatrixView queries) const;
  std::vector<std::string> predict(const Dataset& queries) const {
    Matrix storage;
    return predict(encode(queries, storage));
  }
  std::vector<int> predict_ids(MatrixView queries) const;  // ids into classes()
  /// queries x classes().size(), row-major: each class's share of the (weighted) vote.
  std::vector<double> predict_proba(MatrixView queries) const;
  /// Accuracy against the given labels.
  double score(MatrixView queries, const std::vector<std::string>& labels) const;
  const std::vector<std::string>& classes() const { return encoder_.classes(); }
  const LabelEncoder& encoder() const { return encoder_; }

 protected:
  void save_part(detail::ModelRecord& record) const override;
  void load_part(const detail::ModelRecord& record) override;

 private:
  /// fit_with_payload with the classes of `encoder` and each row's class id; where `fit` throws,
  /// the classes of the previous fit stay too.
  template <class Id>
  void fit_classes(LabelEncoder encoder, const std::vector<Id>& ids, const std::function<void()>& fit);
  // The vote at k over the neighbours of `queries`: class ids, and shares where proba is given.
  void vote(MatrixView queries, int* ids, double* proba) const;
  LabelEncoder encoder_;
};

class KnnRegressor : public KnnModel {
 public:
  using KnnModel::KnnModel;
  ModelKind kind() const override { return ModelKind::regressor; }
  /// A model file saved by a KnnRegressor; as NearestNeighbors::load.
  static KnnRegressor load(const std::string& path, BackendOptions backend = {});
  static KnnRegressor load(const void* data, std::size_t size, BackendOptions backend = {});
  void fit(MatrixView features, const std::vector<double>& targets);
  /// Fits on the data set's features and its label column read as numbers.
  void fit(const Dataset& data);
  std::vector<double> predict(MatrixView queries) const;
  std::vector<double> predict(const Dataset& queries) const {
    Matrix storage;
    return predict(encode(queries, storage));
  }
  /// Coefficient of determination R^2 against the given targets.
  double score(MatrixView queries, const std::vector<double>& targets) const;
};

/// Reads a model file of any kind: a KnnClassifier, KnnRegressor or NearestNeighbors as it was
/// saved (kind() tells which); otherwise as NearestNeighbors::load.
std::unique_ptr<KnnModel> load_model(const std::string& path, BackendOptions backend = {});
std::unique_ptr<KnnModel> load_model(const void* data, std::size_t size, BackendOptions backend = {});

}  // namespace knn
