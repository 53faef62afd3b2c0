#pragma once
// What k-sweep reads from its options.
#include <cxxopts.hpp>

#include <ostream>
#include <string>

#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"
#include "plot.hpp"

namespace knn::sweep {

struct Settings {
  std::string data_path;
  CsvOptions csv;
  EvalOptions eval;
  std::string format = "csv";
  std::string output = "-";
  std::string plot;  // empty: no plot
  ImageType image = ImageType::svg;
  std::string gnuplot;
  std::string save_folds;  // empty: none
  std::string test_path;
  bool task_given = false;   // --task was given, not guessed
  bool label_given = false;  // --label was given
};

/// The options' values, checked, and every output file checked before any work; notices go to
/// `err`.
Settings read_settings(const cxxopts::ParseResult& r, std::ostream& err);

}  // namespace knn::sweep
