#include <vector>

#include "data.hpp"
#include "errors.hpp"
#include "knn/model.hpp"
#include "knn/stage_times.hpp"
#include "output_writer.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

// --id: the query's identifiers, first (JSON: "id" names the column, "ids" holds them).
void add_ids(app::Json& doc, const Dataset& query) {
  if (!query.has_ids()) return;
  doc["id"] = query.id_name;
  doc["ids"] = query.ids;
}

std::string regress(const Settings& s, const KnnRegressor& m, const Dataset& query) {
  Matrix storage;
  const std::vector<double> pred = m.predict(encode_queries(s, m, query, storage));
  stage_done("predicted (search, vote)");
  if (s.format == "json") {
    app::Json doc;
    doc["task"] = "regress";
    doc["k"] = s.params.k;
    add_ids(doc, query);
    doc["predictions"] = pred;
    return app::json_text(doc);
  }
  app::CsvWriter csv;
  if (query.has_ids()) csv.text(query.id_name);
  csv.text("prediction").end_row();
  for (std::size_t i = 0; i < pred.size(); ++i) {
    if (query.has_ids()) csv.text(query.ids[i]);
    csv.number(pred[i]).end_row();
  }
  return csv.str();
}

std::string classify(const Settings& s, bool proba, const KnnClassifier& m, const Dataset& query) {
  Matrix storage;
  const MatrixView queries = encode_queries(s, m, query, storage);
  const auto& classes = m.classes();
  const std::size_t nc = classes.size();
  std::vector<std::string> pred;
  std::vector<double> p;
  if (proba) {
    p = m.predict_proba(queries);
    // The prediction is the class of largest share, ties to the smaller class: the same rule as
    // predict(), so both agree.
    for (std::size_t i = 0; i < query.size(); ++i) {
      std::size_t best = 0;
      for (std::size_t cl = 1; cl < nc; ++cl)
        if (p[i * nc + cl] > p[i * nc + best]) best = cl;
      pred.push_back(classes[best]);
    }
  } else {
    pred = m.predict(queries);
  }
  stage_done("predicted (search, vote)");
  if (s.format == "json") {
    app::Json doc;
    doc["task"] = "classify";
    doc["k"] = s.params.k;
    doc["classes"] = classes;
    add_ids(doc, query);
    doc["predictions"] = pred;
    if (proba) {
      app::Json& rows = doc["proba"] = app::Json::array();
      for (std::size_t i = 0; i < pred.size(); ++i) rows.push_back(std::vector<double>(p.begin() + i * nc, p.begin() + (i + 1) * nc));
    }
    return app::json_text(doc);
  }
  app::CsvWriter csv;
  if (query.has_ids()) csv.text(query.id_name);
  csv.text("prediction");
  if (proba)
    for (const auto& cl : classes) csv.text("p_" + cl);
  csv.end_row();
  for (std::size_t i = 0; i < pred.size(); ++i) {
    if (query.has_ids()) csv.text(query.ids[i]);
    csv.text(pred[i]);
    if (proba)
      for (std::size_t cl = 0; cl < nc; ++cl) csv.number(p[i * nc + cl]);
    csv.end_row();
  }
  return csv.str();
}

}  // namespace

std::string predict(const cxxopts::ParseResult& r, const Settings& s, std::ostream&) {
  const bool proba = r.count("proba") > 0;
  if (s.task == Task::classify)
    return answer_queries<KnnClassifier>(
        r, s, "predict",
        [&](const Dataset& train) { return fit_classifier(s, train); },
        [&](const KnnClassifier& m, const Dataset& query) { return classify(s, proba, m, query); });
  if (proba) throw app::option_error("proba", "gives class probabilities: it needs --task classify");
  return answer_queries<KnnRegressor>(
      r, s, "predict",
      [&](const Dataset& train) { return fit_model<KnnRegressor>(s, train); },
      [&](const KnnRegressor& m, const Dataset& query) { return regress(s, m, query); });
}

}  // namespace knn::cli
