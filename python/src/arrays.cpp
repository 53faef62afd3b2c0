#include "arrays.hpp"

namespace knn::py {

MatrixView rows_of(const FloatRows& a, const char* what) {
  if (a.ndim() != 2) throw pybind11::type_error(std::string(what) + " must be a 2-d float32 array");
  return {static_cast<std::size_t>(a.shape(0)), static_cast<std::size_t>(a.shape(1)), a.data()};
}

pybind11::tuple neighbors_tuple(Neighbors&& nb) {
  const auto q = static_cast<pybind11::ssize_t>(nb.queries), k = static_cast<pybind11::ssize_t>(nb.k);
  return pybind11::make_tuple(owned_array(std::move(nb.distance), {q, k}), owned_array(std::move(nb.index), {q, k}));
}

}  // namespace knn::py
