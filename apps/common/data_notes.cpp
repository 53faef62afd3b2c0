#include "data_notes.hpp"

#include "knn/evaluation.hpp"

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

void DataNotes::print(std::ostream& err) {
  for (const auto& l : lines_) err << "note: " << l << '\n';
  lines_.clear();
}

void check_guessed_task(const Dataset& train, bool task_given, bool label_given, const Communicator* comm) {
  if (!task_given) check_class_labels(train, label_given, comm);
}

}  // namespace knn::app
