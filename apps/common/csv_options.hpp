#pragma once
// The options that say how to read the CSV files: --label, --ignore, --no-header, --delimiter.
#include <cxxopts.hpp>

#include "knn/dataset.hpp"

namespace knn::app {

/// Adds them to the "input" group, after the app's own file option.
void add_csv_options(cxxopts::Options& options);

/// Their values, checked.
CsvOptions csv_options(const cxxopts::ParseResult& r);

}  // namespace knn::app
