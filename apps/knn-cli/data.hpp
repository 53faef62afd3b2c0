#pragma once
// The files of a knn-cli subcommand: the training rows (under MPI, this rank's shard) and the
// query or test rows (every rank loads them whole).
#include <cxxopts.hpp>

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

/// The query rows of `query` as `model` searches them; cells filled and categories unknown noted.
Matrix encode_queries(const Settings& s, const KnnModel& model, const Dataset& query);

/// predict and neighbors: --train and --query, then `answer(train, query, prep)`, where the
/// answer copies the preprocessing its model fitted into `prep` (the model is gone once an error
/// leaves the answer); a query value that overflows once scaled is reported at its file, line and
/// column.
template <class F>
std::string answer_queries(const cxxopts::ParseResult& r, const Settings& s, const std::string& cmd, F&& answer) {
  const Dataset train = load_train(r, s, cmd);
  stage_done("training file read");
  const Dataset query = load_query(required(r, "query", cmd), s, train);
  stage_done("query file read");
  check_query_ids(s, query);
  Preprocessor prep;
  try {
    return answer(train, query, prep);
  } catch (const ScaleOverflow& e) {
    const std::size_t f = prep.fitted() ? prep.feature_of(e.col) : e.col;
    throw e.at(query.source, query.lines.at(e.row), query.feature_columns.at(f) + 1);
  }
}

}  // namespace knn::cli
