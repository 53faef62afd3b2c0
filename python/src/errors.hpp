#pragma once
// The library's errors as Python exceptions: a bad value (a parameter, a value that overflows once
// scaled) is a ValueError, any other knn::Error (a failing GPU) a RuntimeError, each with the
// library's one line, its parameter names spelled as the Python API spells them.
#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <utility>

#include "knn/error.hpp"

namespace knn::py {

/// Library parameter name -> the Python name that sets it; names not listed are spelled as they are.
using Spelling = std::map<std::string, std::string, std::less<>>;

/// The spelling of the estimators (k is n_neighbors) and of k_sweep (ks is k, folds are cv).
const Spelling& estimator_spelling();
const Spelling& sweep_spelling();

/// Which Python exception a knn::Error becomes: by what it says (a bad value: ValueError, else
/// RuntimeError), or ValueError whatever it says (the bytes of a model given to load).
enum class Raise { by_error, value_error };

/// Raises the Python exception for `e`.
[[noreturn]] void raise(const Error& e, const Spelling& spelling, Raise as = Raise::by_error);

/// Runs `f` without the GIL (it must not touch Python objects) and turns a knn::Error into the
/// Python exception.
template <class F>
auto without_gil(const Spelling& spelling, F&& f, Raise as = Raise::by_error) -> decltype(f()) {
  try {
    pybind11::gil_scoped_release release;
    return std::forward<F>(f)();
  } catch (const Error& e) {
    raise(e, spelling, as);
  }
}

}  // namespace knn::py
