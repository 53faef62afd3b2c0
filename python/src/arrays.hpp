#pragma once
// numpy arrays in and out. Rows come in as C-contiguous float32 arrays (the Python layer converts
// other dtypes and layouts once, and passes such arrays as they are); results go out as arrays
// that own the library's vectors, with no copy.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "knn/matrix.hpp"
#include "knn/search.hpp"

namespace knn::py {

using FloatRows = pybind11::array_t<float, pybind11::array::c_style>;

/// A 2-d array's rows as the library reads them, in place (no copy): valid while `a` lives, which
/// the call holding it guarantees. Throws TypeError unless `a` is 2-d; `what` names the argument.
MatrixView rows_of(const FloatRows& a, const char* what);

/// A 1-d array the same length as the rows, as a vector.
template <class T>
std::vector<T> vector_of(const pybind11::array_t<T, pybind11::array::c_style>& a, std::size_t rows, const char* what) {
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != rows)
    throw pybind11::value_error(std::string(what) + " must be 1-d with one value per row");
  return std::vector<T>(a.data(), a.data() + rows);
}

/// An array of the given shape that owns `v`.
template <class T>
pybind11::array_t<T> owned_array(std::vector<T>&& v, std::vector<pybind11::ssize_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  pybind11::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return pybind11::array_t<T>(std::move(shape), heap->data(), owner);
}

/// (distances, indices), each queries x k, as scikit-learn's kneighbors returns them.
pybind11::tuple neighbors_tuple(Neighbors&& nb);

}  // namespace knn::py
