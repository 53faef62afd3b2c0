#pragma once
// The sweep's results: the table (CSV or JSON, one row per k, weight function and metric) and
// the best-k line.
#include <string>

#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"
#include "settings.hpp"

namespace knn::sweep {

/// The table in --format.
std::string table_text(const EvalResult& res, const Settings& st, const Dataset& data);

/// "best: k = ..." for the error stream; the std of the best score only where `folds` give
/// several scores (not FoldSpec::pooled()).
std::string best_line(const EvalResult& res, const FoldSpec& folds);

}  // namespace knn::sweep
