// The library's three models, as the Python estimators hold them: fitted on float32 rows, searched
// and voted without the GIL. Class labels arrive as ids 0..C-1 (the Python layer keeps the labels
// themselves), so the model's classes are those ids in order.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "errors.hpp"
#include "knn/model.hpp"

namespace knn::py {

namespace {

using Ids = pybind11::array_t<std::int64_t, pybind11::array::c_style>;
using Targets = pybind11::array_t<double, pybind11::array::c_style>;

using Notices = std::shared_ptr<std::vector<std::string>>;

// Where a model runs, in the library's spelling; the factory's notices go to `notices`.
BackendOptions backend_options(const std::string& device, const std::string& precision, int threads,
                               const Notices& notices) {
  BackendOptions b;
  b.device = parse_device(device);
  b.precision = parse_precision(precision);
  b.threads = threads;
  b.notice = [notices](const std::string& line) { notices->push_back(line); };
  return b;
}

// A model and the lines its backend factory reported (a GPU the driver lists but cannot use),
// raised as warnings once the GIL is held again.
template <class Model>
struct Held {
  Notices notices;
  Model model;

  Held(std::size_t k, const std::string& weights, const std::string& metric, const std::string& scaling,
       const std::string& device, const std::string& precision, int threads)
      : notices(std::make_shared<std::vector<std::string>>()), model(without_gil(estimator_spelling(), [&] {
          ModelParams p;
          p.k = k;
          p.weights = Weights::parse(weights);
          p.metric = parse_metric(metric);
          p.scaling = parse_scaling(scaling);
          p.backend = backend_options(device, precision, threads, notices);
          return p;
        })) {}
  Held(Notices n, Model m) : notices(std::move(n)), model(std::move(m)) {}

  void warn() {
    std::vector<std::string> lines;
    lines.swap(*notices);
    for (const auto& line : lines)
      if (PyErr_WarnEx(PyExc_RuntimeWarning, line.c_str(), 1) < 0) throw pybind11::error_already_set();
  }
};

// A model from the bytes of a model file (docs/model-format.md), to run where the arguments say.
template <class Model>
std::unique_ptr<Held<Model>> load(const pybind11::bytes& data, const std::string& device, const std::string& precision,
                                  int threads) {
  char* bytes = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &bytes, &size) < 0) throw pybind11::error_already_set();
  auto notices = std::make_shared<std::vector<std::string>>();
  // The backend's options are the caller's parameters; whatever else is wrong is in the bytes.
  BackendOptions backend = without_gil(estimator_spelling(), [&] { return backend_options(device, precision, threads, notices); });
  auto held = without_gil(
      estimator_spelling(),
      [&] { return std::make_unique<Held<Model>>(notices, Model::load(bytes, static_cast<std::size_t>(size), backend)); },
      Raise::value_error);
  held->warn();
  return held;
}

const char* const kInitDoc = "Parameters in the library's spelling (knn/model.hpp); threads 0: every core.";

// The constructor and what every model has: its search, at any k, of given rows or of its own.
template <class Model>
pybind11::class_<Held<Model>> bind_model(pybind11::module_& m, const char* name) {
  using H = Held<Model>;
  pybind11::class_<H> c(m, name);
  c.def(pybind11::init<std::size_t, const std::string&, const std::string&, const std::string&, const std::string&,
                       const std::string&, int>(),
        pybind11::arg("k"), pybind11::arg("weights"), pybind11::arg("metric"), pybind11::arg("scaling"),
        pybind11::arg("device"), pybind11::arg("precision"), pybind11::arg("threads"), kInitDoc);
  c.def(
      "kneighbors",
      [](const H& h, const FloatRows& x, std::size_t k) {
        const MatrixView rows = rows_of(x, "X");
        return neighbors_tuple(without_gil(estimator_spelling(), [&] { return h.model.kneighbors(rows, k); }));
      },
      pybind11::arg("X").noconvert(), pybind11::arg("k"),
      "(distances, indices) of the k nearest training rows of each row of X.");
  c.def(
      "kneighbors_on_device",
      [](const H& h, std::uintptr_t queries, std::size_t rows, std::size_t k, std::uintptr_t index, std::uintptr_t distance) {
        without_gil(estimator_spelling(), [&] {
          h.model.kneighbors_on_device(reinterpret_cast<const float*>(queries), rows, k, reinterpret_cast<std::int64_t*>(index),
                                       reinterpret_cast<double*>(distance));
        });
      },
      pybind11::arg("queries"), pybind11::arg("rows"), pybind11::arg("k"), pybind11::arg("index"), pybind11::arg("distance"),
      "kneighbors of `rows` float32 query rows at a GPU address, into rows x k int64 indices and float64 distances at GPU "
      "addresses (the Python layer checks the arrays; the library checks the addresses).");
  c.def(
      "kneighbors_of_train",
      [](const H& h, std::size_t k) {
        return neighbors_tuple(without_gil(estimator_spelling(), [&] { return h.model.kneighbors_of_train(k); }));
      },
      pybind11::arg("k"), "(distances, indices) of the k nearest other training rows of each training row.");
  c.def(
      "save",
      [](const H& h) {
        const std::vector<std::uint8_t> bytes = without_gil(estimator_spelling(), [&] { return h.model.save(); });
        return pybind11::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      },
      "The fitted model as the bytes of a model file (docs/model-format.md).");
  c.def_static("load", &load<Model>, pybind11::arg("data"), pybind11::arg("device"), pybind11::arg("precision"),
               pybind11::arg("threads"), "A model saved by save(), run on the device given.");
  c.def_property_readonly("train_size", [](const H& h) { return h.model.train_size(); });
  c.def_property_readonly("backend", [](const H& h) { return std::string(h.model.backend().name()); });
  return c;
}

// Fits the model on the rows of X (f(model, rows) calls its fit) without the GIL.
template <class Model, class F>
void fit_rows(Held<Model>& h, const FloatRows& x, F&& f) {
  const MatrixView rows = rows_of(x, "X");
  without_gil(estimator_spelling(), [&] { f(h.model, rows); });
  h.warn();
}

// f(model, rows) gives `width` values per row of X (0: one), without the GIL; as an array.
template <class Model, class F>
auto per_row(const Held<Model>& h, const FloatRows& x, std::size_t width, F&& f) {
  const MatrixView rows = rows_of(x, "X");
  auto values = without_gil(estimator_spelling(), [&] { return f(h.model, rows); });
  std::vector<pybind11::ssize_t> shape{static_cast<pybind11::ssize_t>(rows.rows)};
  if (width) shape.push_back(static_cast<pybind11::ssize_t>(width));
  return owned_array(std::move(values), std::move(shape));
}

}  // namespace

void bind_models(pybind11::module_& m) {
  bind_model<NearestNeighbors>(m, "NearestNeighbors")
      .def(
          "fit",
          [](Held<NearestNeighbors>& h, const FloatRows& x) {
            fit_rows(h, x, [](NearestNeighbors& model, MatrixView rows) { model.fit(rows); });
          },
          pybind11::arg("X").noconvert());

  bind_model<KnnClassifier>(m, "KnnClassifier")
      .def(
          "fit",
          [](Held<KnnClassifier>& h, const FloatRows& x, const Ids& y, std::size_t n_classes) {
            const std::vector<std::int64_t> ids = vector_of<std::int64_t>(y, rows_of(x, "X").rows, "y");
            fit_rows(h, x, [&](KnnClassifier& model, MatrixView rows) { model.fit(rows, ids, n_classes); });
          },
          pybind11::arg("X").noconvert(), pybind11::arg("y").noconvert(), pybind11::arg("n_classes"),
          "Fits on rows X and class ids y (0..n_classes-1): the model's classes are the ids in order.")
      .def(
          "predict_ids",
          [](const Held<KnnClassifier>& h, const FloatRows& x) {
            return per_row(h, x, 0, [](const KnnClassifier& model, MatrixView rows) { return model.predict_ids(rows); });
          },
          pybind11::arg("X").noconvert())
      .def(
          "predict_proba",
          [](const Held<KnnClassifier>& h, const FloatRows& x) {
            return per_row(h, x, h.model.classes().size(),
                           [](const KnnClassifier& model, MatrixView rows) { return model.predict_proba(rows); });
          },
          pybind11::arg("X").noconvert());

  bind_model<KnnRegressor>(m, "KnnRegressor")
      .def(
          "fit",
          [](Held<KnnRegressor>& h, const FloatRows& x, const Targets& y) {
            const std::vector<double> targets = vector_of<double>(y, rows_of(x, "X").rows, "y");
            fit_rows(h, x, [&](KnnRegressor& model, MatrixView rows) { model.fit(rows, targets); });
          },
          pybind11::arg("X").noconvert(), pybind11::arg("y").noconvert())
      .def(
          "predict",
          [](const Held<KnnRegressor>& h, const FloatRows& x) {
            return per_row(h, x, 0, [](const KnnRegressor& model, MatrixView rows) { return model.predict(rows); });
          },
          pybind11::arg("X").noconvert());
}

}  // namespace knn::py
