#pragma once
// The options that say how to read the CSV files: --label, --ignore, --no-header, --skip-lines, --delimiter.
#include <cxxopts.hpp>

#include "knn/dataset.hpp"

namespace knn::app {

/// Adds them to the "input" group, after the app's own file option. Their help speaks of the
/// command at hand: `second_file`, the file read beside the data whose columns --ignore and --id
/// may name (null: none), and `id_use`, what the command does with the --id column.
void add_csv_options(cxxopts::Options& options, const char* second_file, const char* id_use);

/// Their values, checked.
CsvOptions csv_options(const cxxopts::ParseResult& r);

}  // namespace knn::app
