#include <vector>

#include "data.hpp"
#include "knn/model.hpp"
#include "output_writer.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

std::string neighbors_text(const Settings& s, const KnnModel& model, const Dataset& query) {
  Matrix storage;
  Neighbors nb = model.kneighbors(encode_queries(s, model, query, storage));
  // Rows dropped for a missing value: the file's row numbers.
  if (const std::vector<std::size_t>& rows = model.layout().file_rows; !rows.empty())
    for (std::int64_t& i : nb.index) i = static_cast<std::int64_t>(rows.at(static_cast<std::size_t>(i)));
  if (s.format == "json") {
    app::Json doc;
    doc["k"] = nb.k;
    doc["metric"] = to_string(s.params.metric);
    app::Json& rows = doc["neighbors"] = app::Json::array();
    for (std::size_t q = 0; q < nb.queries; ++q) {
      app::Json row;
      row["query"] = q;
      if (query.has_ids()) row["id"] = query.ids[q];
      row["index"] = std::vector<std::int64_t>(nb.index_row(q), nb.index_row(q) + nb.k);
      row["distance"] = std::vector<double>(nb.distance_row(q), nb.distance_row(q) + nb.k);
      rows.push_back(std::move(row));
    }
    return app::json_text(doc);
  }
  app::CsvWriter csv;
  if (query.has_ids()) csv.text(query.id_name);
  csv.text("query").text("rank").text("index").text("distance").end_row();
  for (std::size_t q = 0; q < nb.queries; ++q)
    for (std::size_t j = 0; j < nb.k; ++j) {
      if (query.has_ids()) csv.text(query.ids[q]);
      csv.integer(q).integer(j + 1).integer(nb.index_row(q)[j]).number(nb.distance_row(q)[j]).end_row();
    }
  return csv.str();
}

}  // namespace

std::string neighbors(const cxxopts::ParseResult& r, const Settings& s, std::ostream&) {
  return answer_queries<KnnModel>(
      r, s, "neighbors",
      // Neighbours need no labels: the preprocessing, the scaler and the rows of the shared model.
      [&](const Dataset& train) { return fit_model<NearestNeighbors>(s, train); },
      [&](const KnnModel& m, const Dataset& query) { return neighbors_text(s, m, query); });
}

}  // namespace knn::cli
