#include "errors.hpp"

#include <Python.h>

#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"

namespace knn::py {

const Spelling& estimator_spelling() {
  static const Spelling s{{"k", "n_neighbors"}, {"threads", "n_jobs"}, {"queries", "X"}};
  return s;
}

const Spelling& sweep_spelling() {
  static const Spelling s{{"ks", "k"}, {"k", "k"}, {"folds", "cv"}, {"splits", "cv"}, {"threads", "n_jobs"}};
  return s;
}

void raise(const Error& e, const Spelling& spelling, Raise as) {
  const auto spell = [&](std::string_view name) {
    const auto it = spelling.find(name);
    return it == spelling.end() ? std::string(name) : it->second;
  };
  const auto subject = [&](std::string_view name) { return "parameter " + spell(name); };
  const bool bad_value = as == Raise::value_error || !e.parameter_name().empty() ||
                         dynamic_cast<const ScaleOverflow*>(&e) || dynamic_cast<const MissingValue*>(&e);
  PyErr_SetString(bad_value ? PyExc_ValueError : PyExc_RuntimeError, e.message(spell, subject).c_str());
  throw pybind11::error_already_set();
}

}  // namespace knn::py
