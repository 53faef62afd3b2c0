#pragma once
// --save-folds: the fold of every data row.
#include <string>

#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"

namespace knn::sweep {

/// "row,fold" CSV, rows 0-based over the whole file, folds as knn::evaluate assigns them.
std::string folds_csv(const Dataset& data, const EvalOptions& eo);

}  // namespace knn::sweep
