#include "folds.hpp"

#include <vector>

#include "knn/communicator.hpp"
#include "output_writer.hpp"

namespace knn::sweep {

std::string folds_csv(const Dataset& data, const EvalOptions& eo) {
  if (distributed(eo.backend.comm.get())) {
    // Sharded: the folds are planned over the labels of every rank's rows, as evaluate() does.
    Dataset all;
    all.labels = gather_labels(*eo.backend.comm, data.labels);
    all.features.rows = data.all_rows();
    if (data.dropped_rows) all.file_rows = all_file_rows(data, eo.backend.comm.get());
    EvalOptions one = eo;
    one.backend.comm = nullptr;
    return folds_csv(all, one);
  }
  std::vector<int> fold;
  if (eo.folds.kind == FoldSpec::Kind::loo) {
    fold.resize(data.size());
    for (std::size_t i = 0; i < fold.size(); ++i) fold[i] = static_cast<int>(i);
  } else if (eo.task == Task::classify) {
    // The same stratification as knn::evaluate: class ids in the encoder's sorted order.
    LabelEncoder enc;
    enc.fit(data.labels);
    const std::vector<int> classes = enc.encode(data.labels);
    fold = assign_folds(data.size(), &classes, eo.folds.folds, eo.folds.seed);
  } else {
    fold = assign_folds(data.size(), nullptr, eo.folds.folds, eo.folds.seed);
  }
  app::CsvWriter csv;
  csv.text("row").text("fold").end_row();
  for (std::size_t i = 0; i < fold.size(); ++i) csv.integer(data.file_row(i)).integer(fold[i]).end_row();
  return csv.str();
}

}  // namespace knn::sweep
