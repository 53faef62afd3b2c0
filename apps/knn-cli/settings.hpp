#pragma once
// What every knn-cli subcommand reads from its options.
#include <cxxopts.hpp>

#include <memory>
#include <ostream>
#include <string>

#include "data_notes.hpp"
#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"
#include "knn/model.hpp"

namespace knn::cli {

struct Settings {
  CsvOptions csv;
  ModelParams params;
  Task task = Task::classify;
  bool task_given = false;   // --task was given, not guessed
  bool label_given = false;  // --label was given
  /// Notes on what was decided from the data, printed once the run has passed its checks.
  mutable app::DataNotes notes;
  std::string format;  // csv, json, or empty: the subcommand's default
  std::string output;  // "-": standard output
  /// --model: the model read from the file, whose options the settings above then hold.
  std::shared_ptr<KnnModel> model;
};

/// The shared options' values, checked; notices go to `err`.
Settings read_settings(const cxxopts::ParseResult& r, const std::string& cmd, std::ostream& err);

/// The value of a file option the subcommand `cmd` cannot do without.
const std::string& required(const cxxopts::ParseResult& r, const std::string& name, const std::string& cmd);

/// Standard input (-) can be read by one file option only.
void check_stdin_once(const cxxopts::ParseResult& r);

}  // namespace knn::cli
