#include "table.hpp"

#include "output_writer.hpp"

namespace knn::sweep {

namespace {

const char* validation_name(FoldSpec::Kind kind) {
  switch (kind) {
    case FoldSpec::Kind::kfold: return "k-fold";
    case FoldSpec::Kind::loo: return "leave-one-out";
    case FoldSpec::Kind::test: return "test file";
    case FoldSpec::Kind::splits: return "given splits";
  }
  return "?";
}

std::string csv_table(const EvalResult& res, const EvalOptions& eo) {
  // The weight function and metric of each row are columns only when several are swept.
  const bool combos = eo.weights.size() > 1 || eo.metrics.size() > 1;
  app::CsvWriter csv;
  if (combos) csv.text("weights").text("metric");
  csv.text("k");
  for (const auto& name : res.score_names) csv.text(name + "_mean").text(name + "_std");
  csv.end_row();
  for (const SweepRow& row : res.rows) {
    if (combos) csv.text(row.weights.to_string()).text(to_string(row.metric));
    csv.integer(row.k);
    for (const Score& sc : row.scores) csv.number(sc.mean).number(sc.std);
    csv.end_row();
  }
  return csv.str();
}

app::Json json_row(const EvalResult& res, const SweepRow& row) {
  app::Json j;
  j["weights"] = row.weights.to_string();
  j["metric"] = to_string(row.metric);
  j["k"] = row.k;
  for (std::size_t i = 0; i < res.score_names.size(); ++i) {
    j[res.score_names[i] + "_mean"] = row.scores[i].mean;
    j[res.score_names[i] + "_std"] = row.scores[i].std;
  }
  return j;
}

std::string json_table(const EvalResult& res, const Settings& st, const Dataset& data) {
  const EvalOptions& eo = st.eval;
  const bool kfold = eo.folds.kind == FoldSpec::Kind::kfold;
  app::Json settings;
  settings["data"] = st.data_path;
  settings["rows"] = data.all_rows();
  settings["features"] = data.dims();
  settings["label"] = data.label_name;
  settings["task"] = to_string(eo.task);
  settings["validation"] = validation_name(eo.folds.kind);
  settings["folds"] = res.folds;
  settings["stratified"] = kfold && eo.task == Task::classify;
  settings["seed"] = kfold ? app::Json(eo.folds.seed) : app::Json(nullptr);
  settings["test"] = st.test_path.empty() ? app::Json(nullptr) : app::Json(st.test_path);
  settings["scale"] = to_string(eo.scaling);
  settings["k"] = eo.ks;
  app::Json& weights = settings["weights"] = app::Json::array();
  for (const Weights& w : eo.weights) weights.push_back(w.to_string());
  app::Json& metrics = settings["metrics"] = app::Json::array();
  for (Metric m : eo.metrics) metrics.push_back(to_string(m));

  app::Json doc;
  doc["settings"] = std::move(settings);
  doc["scores"] = res.score_names;
  if (eo.task == Task::classify) doc["classes"] = res.classes;
  doc["best"] = json_row(res, res.rows[res.best]);
  app::Json& rows = doc["rows"] = app::Json::array();
  for (const SweepRow& row : res.rows) rows.push_back(json_row(res, row));
  return app::json_text(doc, {"settings/validation", "settings/scale", "scores", "best", "rows"});
}

}  // namespace

std::string table_text(const EvalResult& res, const Settings& st, const Dataset& data) {
  return st.format == "json" ? json_table(res, st, data) : csv_table(res, st.eval);
}

std::string best_line(const EvalResult& res, const FoldSpec& folds) {
  const SweepRow& b = res.rows[res.best];
  const std::string spread = !folds.pooled() ? " (std " + app::format_double(b.scores[0].std) + ")" : "";
  return "best: k = " + std::to_string(b.k) + ", " + res.score_names[0] + ' ' + app::format_double(b.scores[0].mean) + spread +
         ", weights " + b.weights.to_string() + ", metric " + to_string(b.metric) + '\n';
}

}  // namespace knn::sweep
