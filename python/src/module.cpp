// _libknn: the library's models and evaluation for the Python package libknn, whose estimators
// validate their input and then call these.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "knn/search.hpp"
#include "knn/version.hpp"

PYBIND11_MODULE(_libknn, m) {
  m.doc() = "libknn's models and evaluation; the Python package libknn wraps them as estimators";
  knn::py::bind_models(m);
  knn::py::bind_evaluate(m);
  m.def("cuda_available", [] { return knn::cuda_available(); }, "True when the library has the CUDA backend and a GPU is usable.");
  m.attr("__version__") = knn::version();
}
