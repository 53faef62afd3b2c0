#pragma once
// The parts of the module _libknn, one function each.
#include <pybind11/pybind11.h>

namespace knn::py {

void bind_models(pybind11::module_& m);    // models.cpp
void bind_evaluate(pybind11::module_& m);  // evaluate.cpp

}  // namespace knn::py
