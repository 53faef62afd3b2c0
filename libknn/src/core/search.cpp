#include "knn/search.hpp"

#include "core/backend_factory.hpp"
#include "core/prepared_backend.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "knn/error.hpp"
#include "knn/stage_times.hpp"
#include "knn/version.hpp"

namespace knn {

Device parse_device(const std::string& text) {
  if (text == "auto") return Device::automatic;
  if (text == "cpu") return Device::cpu;
  if (text == "cuda" || text == "gpu") return Device::cuda;
  throw Error::parameter("device", "unknown device " + quote(text) + " (expected auto, cpu or cuda)");
}

const char* to_string(Device d) {
  switch (d) {
    case Device::automatic: return "auto";
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
  }
  return "?";
}

Precision parse_precision(const std::string& text) {
  if (text == "auto") return Precision::automatic;
  if (text == "fp32") return Precision::fp32;
  if (text == "tf32") return Precision::tf32;
  throw Error::parameter("precision", "unknown precision " + quote(text) + " (expected auto, fp32 or tf32)");
}

// The host's scaler is every backend's default.
Matrix Backend::fit_scaler(Scaler& scaler, MatrixView train) const { return scaler.fit_transform(train); }

Matrix Backend::fit_scaler_prepared(Scaler& scaler, MatrixView train, std::shared_ptr<const PreparedTrain>& prepared) const {
  Matrix scaled = fit_scaler(scaler, train);
  prepared = scaled.rows ? prepare(scaled) : nullptr;
  return scaled;
}

void Backend::scale(const Scaler& scaler, Matrix& m) const { scaler.transform(m); }

void Backend::search_on_device(const DeviceSearchRequest& request) const {
  (void)request;
  throw Error::parameter("device", std::string(name()) +
                                       ": this backend searches host memory; queries and results in GPU memory need the cuda "
                                       "backend (or copy them to host memory and search them there)");
}

bool cuda_available() {
  std::string why;
  detail::NoGpu kind{};
  return detail::make_cuda_backend(BackendOptions{}, why, kind) != nullptr;
}

std::shared_ptr<const Backend> make_backend(const BackendOptions& options) {
  if (auto prepared = detail::take_prepared_backend(options)) {
    stage_done("prepared backend taken");
    return prepared;
  }
  return detail::make_backend_now(options);
}

std::shared_ptr<const Backend> detail::make_backend_now(const BackendOptions& options) {
  if (options.device != Device::cpu) {
    std::string why;
    detail::NoGpu kind{};
    if (auto gpu = detail::make_cuda_backend(options, why, kind)) return gpu;
    if (options.device == Device::cuda) throw Error::parameter("device", "cuda: " + why);
    // A build without the GPU backend, or a machine without a driver, has only the CPU: nothing
    // to report then. A driver without a usable GPU is worth a note.
    if (options.notice && kind == detail::NoGpu::unusable) options.notice(why + "; running on the CPU");
  }
  return std::make_shared<cpu::CpuBackend>(options.threads);
}

namespace {

// k from 1 to the rows a query may take: the training rows, less its own where excluded.
void check_k(std::size_t k, std::size_t train_rows, bool excluded) {
  const std::size_t available = train_rows - (excluded && train_rows > 0 ? 1 : 0);
  if (k < 1 || k > available)
    throw Error::parameter("k", quote(std::to_string(k)) + " is out of range: it must be from 1 to " + std::to_string(available) +
                                    " (the number of training rows" + (excluded ? " less the query's own row)" : ")"));
}

}  // namespace

Neighbors search(const Backend& backend, const SearchRequest& r) {
  if (!r.train) throw Error("search: training rows are required");
  if (!r.queries.data && r.queries.rows > 0) throw Error("search: the queries have no values");
  if (r.train->cols != r.queries.cols)
    throw Error("queries have " + std::to_string(r.queries.cols) + " features, the training rows " +
                std::to_string(r.train->cols));
  check_k(r.k, r.train->rows, r.exclude != nullptr);
  const bool scaling = r.scaler && r.scaler->kind() != Scaling::none;
  if (scaling && backend.scales_queries(*r.scaler, r.queries)) return backend.search(r);
  // Otherwise the queries are scaled here (where there is anything to do) and searched as they are.
  SearchRequest plain = r;
  plain.scaler = nullptr;
  Matrix scaled;
  if (scaling) {
    scaled = Matrix(r.queries);
    backend.scale(*r.scaler, scaled);
    plain.queries = scaled;
  }
  return backend.search(plain);
}

void search_on_device(const Backend& backend, const DeviceSearchRequest& r) {
  if (!r.train) throw Error("search_on_device: training rows are required");
  if (r.rows > 0 && (!r.queries || !r.index || !r.distance))
    throw Error("search_on_device: the queries, index and distance pointers are required (device memory)");
  check_k(r.k, r.train->rows, false);
  backend.search_on_device(r);
}

}  // namespace knn
