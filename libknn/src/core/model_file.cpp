// Models to and from model files (docs/model-format.md): the record of a fitted model (every
// rank's rows gathered, where sharded), and a model from a record (this rank's share of the rows).
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/placement.hpp"
#include "io/source.hpp"
#include "io/model_format.hpp"
#include "knn/error.hpp"
#include "knn/io.hpp"
#include "knn/model.hpp"
#include "knn/stage_times.hpp"

namespace knn {

const char* to_string(ModelKind kind) {
  switch (kind) {
    case ModelKind::neighbors: return "neighbors";
    case ModelKind::classifier: return "classifier";
    case ModelKind::regressor: return "regressor";
  }
  return "?";
}

std::vector<std::uint8_t> KnnModel::save() const {
  if (!backend_) throw Error("the model is not fitted");
  detail::ModelRecord r;
  r.kind = kind();
  r.params = params_;
  r.params.backend = {};
  r.prep = prep_;
  r.scaler = scaler_;
  r.layout = layout_;
  r.rows = train_.rows;
  r.cols = train_.cols;
  r.values = train_.values.data();
  const std::vector<double>* payload = &payload_;
  // Sharded: every rank's rows and payloads in rank order, which is the order of the rows.
  std::vector<float> rows;
  std::vector<double> payloads;
  if (distributed(params_.backend.comm.get())) {
    rows = placement_->gather(train_.values);
    payloads = placement_->gather(payload_);
    r.rows = total_rows_;
    r.values = rows.data();
    payload = &payloads;
  }
  if (r.kind == ModelKind::classifier)
    for (double id : *payload) r.class_ids.push_back(static_cast<std::uint32_t>(id));
  if (r.kind == ModelKind::regressor) r.targets = *payload;
  save_part(r);
  return detail::encode_model(r);
}

void KnnModel::save(const std::string& path) const {
  const std::vector<std::uint8_t> bytes = save();
  const Communicator* comm = params_.backend.comm.get();
  collective(comm, [&] {
    if (!distributed(comm) || comm->rank() == 0)
      write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  });
}

void KnnModel::save_part(detail::ModelRecord& record) const { (void)record; }
void KnnModel::load_part(const detail::ModelRecord& record) { (void)record; }

void KnnClassifier::save_part(detail::ModelRecord& record) const { record.classes = encoder_.classes(); }
void KnnClassifier::load_part(const detail::ModelRecord& record) { encoder_.fit(record.classes); }

void KnnModel::load_record(const detail::ModelRecord& r, BackendOptions backend) {
  stage_done("model file mapped and checked");
  params_ = r.params;
  params_.backend = std::move(backend);
  placement_ = detail::placement(params_.backend.comm);
  // This rank's share of the rows: an even split in rank order (the whole set in one process).
  std::size_t lo = 0, hi = r.rows;
  if (const Communicator* comm = params_.backend.comm.get(); distributed(comm)) {
    const auto ranks = static_cast<std::size_t>(comm->size()), rank = static_cast<std::size_t>(comm->rank());
    lo = r.rows * rank / ranks;
    hi = r.rows * (rank + 1) / ranks;
  }
  const char* rows = static_cast<const char*>(r.values) + lo * r.cols * sizeof(float);
  const std::size_t count = (hi - lo) * r.cols;
  // Copied once, into a Matrix (on huge pages where large): straight from the floats where they
  // are aligned as floats (a mapped file's always are), else through memcpy.
  Matrix train;
  if (reinterpret_cast<std::uintptr_t>(rows) % alignof(float) == 0) {
    train = Matrix(hi - lo, r.cols, reinterpret_cast<const float*>(rows));
  } else {
    train = Matrix(hi - lo, r.cols);
    if (count) std::memcpy(train.values.data(), rows, count * sizeof(float));
  }
  payload_.clear();
  for (std::size_t i = lo; i < hi && r.kind == ModelKind::classifier; ++i) payload_.push_back(r.class_ids[i]);
  if (r.kind == ModelKind::regressor) payload_.assign(r.targets.begin() + lo, r.targets.begin() + hi);
  offset_ = lo;
  total_rows_ = r.rows;
  prep_ = r.prep;
  scaler_ = r.scaler;
  layout_ = r.layout;
  load_part(r);
  stage_done("model rows copied");
  backend_ = make_backend(params_.backend);
  train_ = std::move(train);
  prepared_ = train_.rows ? backend_->prepare(train_) : nullptr;
}

namespace detail {

// Reads and checks model files (mapped where they are regular files) or bytes, and builds models
// from them: every rank of the model's communicator together, so that a failure on one ends all.
class ModelReader {
 public:
  ModelReader(const std::string* path, const void* data, std::size_t size) : path_(path), data_(data), size_(size) {}

  template <class Model>
  Model load(BackendOptions backend) const {
    Model m;
    read(backend.comm.get(), [&](const ModelRecord& r) {
      if (r.kind != m.kind())
        throw Error::at(name(), 0, 0, std::string("holds a ") + to_string(r.kind) + " model, not a " + to_string(m.kind()) + " model");
      m.load_record(r, std::move(backend));
    });
    return m;
  }

  std::unique_ptr<KnnModel> load_any(BackendOptions backend) const {
    std::unique_ptr<KnnModel> m;
    read(backend.comm.get(), [&](const ModelRecord& r) {
      if (r.kind == ModelKind::classifier) m = std::make_unique<KnnClassifier>();
      else if (r.kind == ModelKind::regressor) m = std::make_unique<KnnRegressor>();
      else m = std::make_unique<NearestNeighbors>();
      m->load_record(r, std::move(backend));
    });
    return m;
  }

 private:
  std::string name() const { return !path_ ? "<buffer>" : *path_ == "-" ? "<stdin>" : *path_; }

  template <class Build>
  void read(const Communicator* comm, Build&& build) const {
    collective(comm, [&] {
      if (!path_) return build(decode_model(static_cast<const std::uint8_t*>(data_), size_, name()));
      const Source file(*path_, Source::Kind::binary);
      build(decode_model(reinterpret_cast<const std::uint8_t*>(file.data()), file.size(), file.name()));
    });
  }

  const std::string* path_;
  const void* data_;
  std::size_t size_;
};

}  // namespace detail

// The loaders of each kind, and of any kind.
NearestNeighbors NearestNeighbors::load(const std::string& path, BackendOptions backend) {
  return detail::ModelReader(&path, nullptr, 0).load<NearestNeighbors>(std::move(backend));
}
NearestNeighbors NearestNeighbors::load(const void* data, std::size_t size, BackendOptions backend) {
  return detail::ModelReader(nullptr, data, size).load<NearestNeighbors>(std::move(backend));
}
KnnClassifier KnnClassifier::load(const std::string& path, BackendOptions backend) {
  return detail::ModelReader(&path, nullptr, 0).load<KnnClassifier>(std::move(backend));
}
KnnClassifier KnnClassifier::load(const void* data, std::size_t size, BackendOptions backend) {
  return detail::ModelReader(nullptr, data, size).load<KnnClassifier>(std::move(backend));
}
KnnRegressor KnnRegressor::load(const std::string& path, BackendOptions backend) {
  return detail::ModelReader(&path, nullptr, 0).load<KnnRegressor>(std::move(backend));
}
KnnRegressor KnnRegressor::load(const void* data, std::size_t size, BackendOptions backend) {
  return detail::ModelReader(nullptr, data, size).load<KnnRegressor>(std::move(backend));
}
std::unique_ptr<KnnModel> load_model(const std::string& path, BackendOptions backend) {
  return detail::ModelReader(&path, nullptr, 0).load_any(std::move(backend));
}
std::unique_ptr<KnnModel> load_model(const void* data, std::size_t size, BackendOptions backend) {
  return detail::ModelReader(nullptr, data, size).load_any(std::move(backend));
}

}  // namespace knn
