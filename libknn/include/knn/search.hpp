#pragma once
// k nearest neighbours: for each query, the k training rows of smallest distance, ordered by
// (distance, training row index) ascending.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/matrix.hpp"
#include "knn/metric.hpp"
#include "knn/scaler.hpp"
#include "knn/weights.hpp"

namespace knn {

struct Neighbors {
  std::size_t queries = 0;
  std::size_t k = 0;
  std::vector<std::int64_t> index;  // queries x k, row-major: 0-based training rows
  std::vector<double> distance;     // queries x k: the metric value (Euclidean, not squared)

  const std::int64_t* index_row(std::size_t q) const { return index.data() + q * k; }
  const double* distance_row(std::size_t q) const { return distance.data() + q * k; }
};

enum class Device { automatic, cpu, cuda };
Device parse_device(const std::string& text);  // "auto" | "cpu" | "cuda"
const char* to_string(Device d);

/// Training rows kept where a backend searches them (on the GPU: in device memory), made by
/// Backend::prepare. The Matrix it was made from must outlive it and stay unchanged.
class PreparedTrain {
 public:
  virtual ~PreparedTrain() = default;
};

struct SearchRequest {
  const Matrix* train = nullptr;
  /// Optional: `train` as prepared by the same backend, so repeated searches skip the upload.
  const PreparedTrain* prepared = nullptr;
  /// The query rows, read in place (a Matrix converts to a view of itself).
  MatrixView queries;
  std::size_t k = 1;
  Metric metric = Metric::l2;
  /// Optional, one per query: a training row that query may not take as neighbour (-1: none).
  /// Leave-one-out passes each row's own index.
  const std::int64_t* exclude = nullptr;
  /// Optional: a fitted scaler that `queries` are given unscaled to (`train` is scaled already).
  /// The search takes scaler->transform(queries) in their place, bit for bit, and throws its
  /// ScaleOverflow (lowest row, then lowest column) with no result. The GPU scales the queries in
  /// device memory as they arrive; knn::search() scales them on the host for a backend that does
  /// not (Backend::scales_queries).
  const Scaler* scaler = nullptr;
};

/// A search whose queries and results stay in GPU memory, for a program that keeps its data there
/// (CUDA, CuPy, PyTorch): `queries`, `index` and `distance` point to device memory of the backend's
/// GPU (cudaMalloc, cudaMallocManaged, a tensor's data). The neighbours and distances are
/// search()'s on the same rows, bit for bit; the call returns once they are written.
struct DeviceSearchRequest {
  const Matrix* train = nullptr;
  /// Optional, as in SearchRequest: `train` as prepared by the same backend, so that the training
  /// rows are on the GPU already.
  const PreparedTrain* prepared = nullptr;
  /// Device memory: rows x train->cols finite floats, row-major.
  const float* queries = nullptr;
  std::size_t rows = 0;
  std::size_t k = 1;
  Metric metric = Metric::l2;
  /// Device memory for rows x k values each, laid out as Neighbors::index and Neighbors::distance.
  std::int64_t* index = nullptr;
  double* distance = nullptr;
};

/// Where the work runs. Every backend returns the same neighbours and distances, bit for bit, and
/// the same class predictions; vote shares and weighted means agree within 1e-9 relative.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  /// Runs a request that knn::search() has validated. A request with a scaler reaches it only
  /// where scales_queries() is true for it.
  virtual Neighbors search(const SearchRequest& request) const = 0;
  /// Whether search() applies SearchRequest::scaler itself, for these queries; the default: no.
  virtual bool scales_queries(const Scaler& scaler, MatrixView queries) const {
    (void)scaler;
    (void)queries;
    return false;
  }
  /// Keeps `train` ready for searches (the GPU uploads it once); nullptr where that gains nothing.
  virtual std::shared_ptr<const PreparedTrain> prepare(const Matrix& train) const {
    (void)train;
    return nullptr;
  }
  /// Class votes for every k in `ks`: the arguments, results and layout of vote_prefixes
  /// (knn/vote.hpp), which is the default; `proba` may be nullptr.
  virtual void vote(const Neighbors& nb, const int* train_class, std::size_t n_classes, const Weights& weights,
                    const std::vector<std::size_t>& ks, int* out, double* proba) const;
  /// Weighted means for every k in `ks`: as average_prefixes (knn/vote.hpp), the default.
  virtual void average(const Neighbors& nb, const double* train_target, const Weights& weights,
                       const std::vector<std::size_t>& ks, double* out) const;
  /// Fits `scaler` (of any kind) on `train` and returns the scaled rows: scaler.fit_transform's
  /// parameters and values, bit for bit, and its ScaleOverflow; the default runs that on the host.
  virtual Matrix fit_scaler(Scaler& scaler, MatrixView train) const;
  /// fit_scaler, then prepare() of the scaled rows into `prepared` (nullptr where that gains
  /// nothing). The GPU does both from one upload of `train`: it scales the rows in device memory
  /// and keeps them there. The default calls the two.
  virtual Matrix fit_scaler_prepared(Scaler& scaler, MatrixView train, std::shared_ptr<const PreparedTrain>& prepared) const;
  /// Scales `m` in place with a fitted scaler: scaler.transform's values and errors, bit for bit,
  /// with `m` unchanged when it throws; the default runs that on the host.
  virtual void scale(const Scaler& scaler, Matrix& m) const;
  /// Gets ready to search, so that the first search does not pay for it: the GPU creates its
  /// context and streams and loads its kernels (hundreds of milliseconds); the default does nothing.
  virtual void warm_up() const {}
  /// Runs a DeviceSearchRequest that knn::search_on_device() has validated. The default, for a
  /// backend that searches host memory, throws knn::Error.
  virtual void search_on_device(const DeviceSearchRequest& request) const;
};

/// Arithmetic of the GPU's candidate pass. Every choice reports the exact neighbours and distances:
/// tf32 only widens the margin within which candidates are re-ranked. `automatic` takes the one
/// that was faster for the shape (docs/exactness.md, "Which pass"); fp32 and tf32 force one.
enum class Precision { automatic, fp32, tf32 };
Precision parse_precision(const std::string& text);  // "auto" | "fp32" | "tf32"

struct BackendOptions {
  Device device = Device::automatic;
  int threads = 0;  // CPU threads; 0: all cores
  Precision precision = Precision::automatic;
  /// GPU: bytes of device memory the search may use for its data and workspace, training rows
  /// included; 0: 80% of what is free. Queries are tiled to fit, and training rows that do not
  /// fit are searched in parts whose nearest are merged (the same answer); a budget too small
  /// for one training row and one query is an error.
  std::size_t device_memory_budget = 0;
  /// Called with one line when Device::automatic falls back to the CPU (no GPU, or none built).
  std::function<void(const std::string&)> notice;
  /// Optional: the ranks that share the training set, each fitted on its own shard of the rows
  /// (knn/communicator.hpp). Models and evaluation then reduce and merge over all ranks, and
  /// every rank gets the answer one process would give on the whole set.
  std::shared_ptr<const Communicator> comm;
};

/// The CPU backend always exists. Device::cuda throws knn::Error when no GPU is usable or the
/// library was built without CUDA; Device::automatic then falls back to the CPU.
std::shared_ptr<const Backend> make_backend(const BackendOptions& options = {});

/// Starts make_backend(options) and the backend's warm_up() on a thread of its own and returns at
/// once, so that a program can read its input meanwhile: for the GPU that is loading the plugin
/// and the CUDA runtime and creating the context. The next make_backend()
/// with the same device, threads, precision, memory budget and communicator takes that backend,
/// waiting for it if need be, and its errors are thrown there. Device::cpu starts nothing.
void prepare_backend(const BackendOptions& options);

/// Validates the request (k from 1 to the number of candidate rows, matching dimensions) and runs
/// it on a backend.
Neighbors search(const Backend& backend, const SearchRequest& request);

/// Validates the request as search() does (pointers given, k in range) and runs it on a backend
/// that searches GPU memory: the cuda backend. Another backend, a query value that is not finite
/// (row and feature named), training rows that do not fit beside one query on the GPU, and a GPU
/// out of memory throw knn::Error. A value that is not finite is found before the search starts,
/// so `index` and `distance` are untouched then; after another error they hold no result.
void search_on_device(const Backend& backend, const DeviceSearchRequest& request);

/// True when this build has the CUDA backend and a GPU can be used.
bool cuda_available();

}  // namespace knn
