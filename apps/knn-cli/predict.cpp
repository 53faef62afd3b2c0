#include <vector>

#include "data.hpp"
#include "errors.hpp"
#include "knn/model.hpp"
#include "output_writer.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

std::string regress(const Settings& s, const Dataset& train, const Dataset& query) {
  KnnRegressor m(s.params);
  m.fit(train.features, numeric_targets(train));
  const std::vector<double> pred = m.predict(query.features);
  if (s.format == "json") {
    app::Json doc;
    doc["task"] = "regress";
    doc["k"] = s.params.k;
    doc["predictions"] = pred;
    return app::json_text(doc);
  }
  app::CsvWriter csv;
  csv.text("prediction").end_row();
  for (double v : pred) csv.number(v).end_row();
  return csv.str();
}

std::string classify(const Settings& s, bool proba, const Dataset& train, const Dataset& query) {
  KnnClassifier m(s.params);
  m.fit(train.features, train.labels);
  const auto& classes = m.classes();
  const std::size_t nc = classes.size();
  std::vector<std::string> pred;
  std::vector<double> p;
  if (proba) {
    p = m.predict_proba(query.features);
    // The prediction is the class of largest share, ties to the smaller class: the same rule as
    // predict(), so both agree.
    for (std::size_t i = 0; i < query.size(); ++i) {
      std::size_t best = 0;
      for (std::size_t cl = 1; cl < nc; ++cl)
        if (p[i * nc + cl] > p[i * nc + best]) best = cl;
      pred.push_back(classes[best]);
    }
  } else {
    pred = m.predict(query.features);
  }
  if (s.format == "json") {
    app::Json doc;
    doc["task"] = "classify";
    doc["k"] = s.params.k;
    doc["classes"] = classes;
    doc["predictions"] = pred;
    if (proba) {
      app::Json& rows = doc["proba"] = app::Json::array();
      for (std::size_t i = 0; i < pred.size(); ++i) rows.push_back(std::vector<double>(p.begin() + i * nc, p.begin() + (i + 1) * nc));
    }
    return app::json_text(doc);
  }
  app::CsvWriter csv;
  csv.text("prediction");
  if (proba)
    for (const auto& cl : classes) csv.text("p_" + cl);
  csv.end_row();
  for (std::size_t i = 0; i < pred.size(); ++i) {
    csv.text(pred[i]);
    if (proba)
      for (std::size_t cl = 0; cl < nc; ++cl) csv.number(p[i * nc + cl]);
    csv.end_row();
  }
  return csv.str();
}

}  // namespace

std::string predict(const cxxopts::ParseResult& r, const Settings& s, std::ostream&) {
  return answer_queries(r, s, "predict", [&](const Dataset& train, const Dataset& query) {
    const bool proba = r.count("proba") > 0;
    if (s.task == Task::classify) return classify(s, proba, train, query);
    if (proba) throw app::option_error("proba", "gives class probabilities: it needs --task classify");
    return regress(s, train, query);
  });
}

}  // namespace knn::cli
