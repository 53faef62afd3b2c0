#pragma once
// The files of a knn-cli subcommand: the training rows (under MPI, this rank's shard) and the
// query or test rows (every rank loads them whole).
#include <cxxopts.hpp>

#include <memory>
#include <string>

#include "knn/dataset.hpp"
#include "knn/model.hpp"
#include "knn/scaler.hpp"
#include "knn/stage_times.hpp"
#include "settings.hpp"

namespace knn::cli {

/// --train, required by subcommand `cmd`.
Dataset load_train(const cxxopts::ParseResult& r, const Settings& s, const std::string& cmd);

/// A file of query or test rows, its columns matched to `train`'s.
Dataset load_query(const std::string& path, const Settings& s, const Dataset& train);

/// --id, where given: the query file must have the column, to carry it to the output.
void check_query_ids(const Settings& s, const Dataset& query);

/// The query rows of `query` as `model` searches them (query.features themselves where the model
/// keeps them as they are, else encoded into `storage`); cells filled and categories unknown noted.
MatrixView encode_queries(const Settings& s, const KnnModel& model, const Dataset& query, Matrix& storage);

/// A `Model` with the run's parameters, fitted on the training rows.
template <class Model>
std::shared_ptr<const Model> fit_model(const Settings& s, const Dataset& train) {
  auto m = std::make_shared<Model>(s.params);
  m->fit(train);
  return m;
}

/// A classifier fitted on the training rows, once their labels are checked to be classes where
/// the task was guessed.
std::shared_ptr<const KnnClassifier> fit_classifier(const Settings& s, const Dataset& train);

/// predict and neighbors: the model (s.model, read from --model; or `fit(train)`, a
/// std::shared_ptr<const Model> fitted on --train) and the --query rows, then `answer(model,
/// query)`; a query value that overflows once scaled is reported at its file, line and column.
template <class Model, class Fit, class Answer>
std::string answer_queries(const cxxopts::ParseResult& r, const Settings& s, const std::string& cmd, Fit&& fit, Answer&& answer) {
  // The subcommand's kind was checked when the model was read.
  std::shared_ptr<const Model> model = std::dynamic_pointer_cast<const Model>(s.model);
  Dataset train;
  if (!model) {
    train = load_train(r, s, cmd);
    stage_done("training file read");
  }
  const Dataset query = load_query(required(r, "query", cmd), s, model ? model->layout() : train);
  stage_done("query file read");
  check_query_ids(s, query);
  if (model) s.model->set_backend(s.params.backend);  // read on the CPU backend (read_model)
  try {
    if (!model) {
      model = fit(train);
      stage_done("fitted (scaled, uploaded)");
    }
    return answer(*model, query);
  } catch (const ScaleOverflow& e) {
    const std::size_t f = model ? model->preprocessor().feature_of(e.col) : e.col;
    throw e.at(query.source, query.lines.at(e.row), query.feature_columns.at(f) + 1);
  }
}

}  // namespace knn::cli
