#pragma once
// knn-cli's subcommands. Each reads its files, computes, and returns the text of its result; the
// caller writes it (rank 0 only) to --output. fit writes its model file itself.
#include <cxxopts.hpp>

#include <ostream>
#include <string>

#include "settings.hpp"

namespace knn::cli {

/// Fits a classifier or regressor on --train and writes it to the model file -o (knn-cli
/// predict|neighbors --model); returns nothing to print, and says on `err` what it wrote.
std::string fit(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err);

/// One prediction per query row (CSV, or JSON), with --proba the class probabilities.
std::string predict(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err);

/// Scores of one model by k-fold cross-validation, leave-one-out or a test file: a readable
/// summary, or CSV or JSON.
std::string evaluate(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err);

/// What the tools make of a CSV file: columns, types, missing cells, classes, features.
std::string inspect(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err);

/// The k nearest training rows of every query row, with their distances.
std::string neighbors(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err);

}  // namespace knn::cli
