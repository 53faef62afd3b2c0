#pragma once
// What the tools decided from the data without being told: columns left out for an empty header
// (row names), a header row that looks like data, columns of numbers read as categories for a
// few texts, rows dropped for a missing value, query categories the training rows lack; and
// what the data makes of a validation: classes of one row, which held out cannot be right. These
// notes are collected while a run works and printed once it has passed its checks, so that a run
// that fails prints its error line alone.
#include <ostream>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/evaluation.hpp"
#include "knn/preprocess.hpp"

namespace knn::app {

class DataNotes {
 public:
  /// `rows_out`: the tool's output has a row per query, which --id can label (knn-cli predict,
  /// neighbors, and fit for them), so that a note on row names may point at --id.
  explicit DataNotes(bool rows_out = true) : rows_out_(rows_out) {}
  /// The training (or data) file's notes: unnamed columns left out, guesses(), rows dropped.
  void training(const Dataset& data);
  /// What the reading guessed that may be wrong: a header row of numbers (a file without one),
  /// a column of numbers read as categories for a few texts.
  void guesses(const Dataset& data);
  /// A query or test file's: unnamed columns left out, cells of unknown categories, cells filled.
  void query(const Dataset& data, const PrepReport& report);
  /// Classification validated within `data` (k folds or leave-one-out): classes of a single row.
  /// Held out, such a row has no row of its class to learn from, so it always counts as wrong.
  /// Left out for sharded data, whose labels a rank sees only in part.
  void single_row_classes(const Dataset& data, const FoldSpec& folds, Task task);
  /// Prints "note: ..." lines to `err`, once.
  void print(std::ostream& err);

 private:
  std::vector<std::string> lines_;
  bool rows_out_;
};

/// Whether column c holds row names: no name in the header, nor any column before it (R's
/// write.csv writes one such column, pandas one per index level). An unnamed column elsewhere is
/// something else: a header row cut short, a trailing comma.
bool row_names_column(const Dataset& d, std::size_t c);

/// "N rows with a missing label" where the features' missing cells are imputed (only a label then
/// drops a row), "... with a missing value" otherwise: the rows Dataset::dropped_rows counts.
std::string dropped_rows_text(const Dataset& data);

/// The task check of an app: where --task was not given, the labels must look like classes.
void check_guessed_task(const Dataset& train, bool task_given, bool label_given, const Communicator* comm);

}  // namespace knn::app
