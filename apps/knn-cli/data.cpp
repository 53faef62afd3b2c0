#include "data.hpp"

#include "errors.hpp"
#include "knn/communicator.hpp"
#include "knn/stage_times.hpp"

namespace knn::cli {

Dataset load_train(const cxxopts::ParseResult& r, const Settings& s, const std::string& cmd) {
  Dataset train = load_csv_sharded(required(r, "train", cmd), s.csv, s.params.backend.comm.get());
  check_fillable(train, s.params.impute, s.params.backend.comm);
  s.notes.training(train);
  return train;
}

Dataset load_query(const std::string& path, const Settings& s, const Dataset& train) {
  Dataset query;
  collective(s.params.backend.comm.get(), [&] { query = load_query_csv(path, s.csv, train); });
  return query;
}

void check_query_ids(const Settings& s, const Dataset& query) {
  if (!s.csv.id.empty() && !query.has_ids())
    throw app::option_error("id", "no column " + quote(s.csv.id) + " in " + query.source + " to carry to the output");
}

std::shared_ptr<const KnnClassifier> fit_classifier(const Settings& s, const Dataset& train) {
  app::check_guessed_task(train, s.task_given, s.label_given, s.params.backend.comm.get());
  return fit_model<KnnClassifier>(s, train);
}

MatrixView encode_queries(const Settings& s, const KnnModel& model, const Dataset& query, Matrix& storage) {
  PrepReport report;
  const MatrixView q = model.encode(query, storage, &report);
  s.notes.query(query, report);
  stage_done("queries encoded");
  return q;
}

}  // namespace knn::cli
