#include "data_notes.hpp"

#include <algorithm>
#include <map>

#include "knn/error.hpp"

namespace knn::app {

namespace {

std::string unnamed(const Dataset& d) {
  std::string cols;
  for (std::size_t c : d.unnamed_columns) cols += (cols.empty() ? "" : ", ") + std::to_string(c + 1);
  const bool one = d.unnamed_columns.size() == 1;
  // Options take 0-based indices, these notes count from 1: the hint names the option's index.
  return std::string(one ? "column " : "columns ") + cols + " of " + d.source + (one ? " has" : " have") +
         " no name in the header (row names, as R's write.csv and pandas write them): left out of the features" +
         (one ? "; --id " + std::to_string(d.unnamed_columns.front()) + " carries them to the output" : "");
}

}  // namespace

void DataNotes::training(const Dataset& data) {
  if (!data.unnamed_columns.empty()) lines_.push_back(unnamed(data));
  if (data.dropped_rows)
    lines_.push_back("dropped " + std::to_string(data.dropped_rows) + (data.dropped_rows == 1 ? " row" : " rows") + " of " +
                     data.source + " with a missing value (--drop-missing); " + std::to_string(data.all_rows()) + " remain");
}

void DataNotes::query(const Dataset& data, const PrepReport& report) {
  if (!data.unnamed_columns.empty()) lines_.push_back(unnamed(data));
  if (report.unknown_categories)
    lines_.push_back(std::to_string(report.unknown_categories) + (report.unknown_categories == 1 ? " cell" : " cells") + " of " +
                     data.source + (report.unknown_categories == 1 ? " holds" : " hold") + " a category the training rows lack: encoded as all zeros");
  if (report.imputed)
    lines_.push_back(std::to_string(report.imputed) + (report.imputed == 1 ? " missing cell" : " missing cells") + " of " +
                     data.source + " filled as fitted on the training rows (--impute)");
}

void DataNotes::single_row_classes(const Dataset& data, const FoldSpec& folds, Task task) {
  if (task != Task::classify || folds.kind == FoldSpec::Kind::test || data.total_rows != 0) return;
  std::map<std::string, std::size_t> rows;
  for (const auto& label : data.labels)
    if (!label.empty()) ++rows[label];  // a missing label is no class
  std::vector<std::string> single;
  for (const auto& [label, n] : rows)
    if (n == 1) single.push_back(label);
  if (single.empty()) return;
  std::string names;
  for (std::size_t i = 0; i < std::min<std::size_t>(single.size(), 3); ++i) names += (i ? ", " : "") + quote(single[i]);
  if (single.size() > 3) names += ", ...";
  const bool one = single.size() == 1;
  lines_.push_back(std::to_string(single.size()) + (one ? " class of " : " classes of ") + data.source + (one ? " has" : " have") +
                   " a single row (" + names + "): held out, such a row has no row of its class to learn from, so it always " +
                   "counts as misclassified");
}

void DataNotes::print(std::ostream& err) {
  for (const auto& l : lines_) err << "note: " << l << '\n';
  lines_.clear();
}

void check_guessed_task(const Dataset& train, bool task_given, bool label_given, const Communicator* comm) {
  if (!task_given) check_class_labels(train, label_given, comm);
}

}  // namespace knn::app
