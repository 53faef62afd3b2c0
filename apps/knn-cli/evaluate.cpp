#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "arguments.hpp"
#include "data_notes.hpp"
#include "data.hpp"
#include "errors.hpp"
#include "option_values.hpp"
#include "output_writer.hpp"
#include "progress.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

// What was evaluated, for the output.
struct Evaluation {
  const Dataset& data;
  const Dataset& test;
  const EvalOptions& options;
  const EvalResult& result;
  const SweepRow& row;  // the one model's scores
};

const char* validation_name(FoldSpec::Kind kind) {
  return kind == FoldSpec::Kind::test ? "test file" : kind == FoldSpec::Kind::loo ? "leave-one-out" : "k-fold";
}

std::string json_text(const Evaluation& ev) {
  const EvalResult& res = ev.result;
  app::Json doc;
  doc["task"] = to_string(res.task);
  doc["k"] = ev.row.k;
  doc["folds"] = res.folds;
  doc["validation"] = validation_name(ev.options.folds.kind);
  doc["weights"] = ev.row.weights.to_string();
  doc["metric"] = to_string(ev.row.metric);
  doc["scale"] = to_string(ev.options.scaling);
  doc["rows"] = ev.data.all_rows();
  app::Json& metrics = doc["metrics"] = app::Json::object();
  for (std::size_t i = 0; i < res.score_names.size(); ++i)
    metrics[res.score_names[i]] = {{"mean", ev.row.scores[i].mean}, {"std", ev.row.scores[i].std}};
  if (res.task == Task::classify) doc["confusion_matrix"] = {{"labels", res.classes}, {"counts", res.confusion.front()}};
  return app::json_text(doc, {"metrics", "confusion_matrix"});
}

std::string csv_text(const Evaluation& ev) {
  app::CsvWriter csv;
  csv.text("score").text("mean").text("std").end_row();
  for (std::size_t i = 0; i < ev.result.score_names.size(); ++i)
    csv.text(ev.result.score_names[i]).number(ev.row.scores[i].mean).number(ev.row.scores[i].std).end_row();
  return csv.str();
}

std::string fixed(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The first ten names, then how many there are in all.
std::string names(const std::vector<std::string>& list) {
  constexpr std::size_t kListed = 10;
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < kListed; ++i) out += (out.empty() ? "" : ", ") + list[i];
  if (list.size() > kListed) out += ", ... (" + std::to_string(list.size()) + " in all)";
  return out;
}

// The columns the model was given: numeric, one-hot (the categories of the whole file; each fold
// encodes those of its own training rows), left out, identifiers; and how missing cells were met.
std::string feature_lines(const Dataset& data, const EvalOptions& eo) {
  std::vector<std::string> numeric, one_hot, left_out;
  std::size_t width = 0;
  for (std::size_t f = 0; f < data.dims(); ++f) {
    if (data.feature_types.empty() || data.feature_types[f] == ColumnType::numeric) {
      numeric.push_back(data.feature_names[f]);
      ++width;
      continue;
    }
    one_hot.push_back(data.feature_names[f] + " (" + std::to_string(data.levels[f].size()) + ")");
    width += data.levels[f].size();
  }
  for (std::size_t c = 0; c < data.column_names.size(); ++c) {
    const bool feature = std::find(data.feature_columns.begin(), data.feature_columns.end(), c) != data.feature_columns.end();
    if (feature || c == data.label_column || c == data.id_column) continue;
    left_out.push_back(data.column_names[c].empty() ? "column " + std::to_string(c + 1) + " (no name)" : data.column_names[c]);
  }
  std::ostringstream s;
  s << "features  " << data.dims() << " columns, " << width << " once encoded\n";
  if (!numeric.empty()) s << "  numeric   " << numeric.size() << ": " << names(numeric) << "\n";
  if (!one_hot.empty()) s << "  one-hot   " << one_hot.size() << ": " << names(one_hot) << "\n";
  if (!left_out.empty()) s << "  left out  " << names(left_out) << "\n";
  if (data.has_ids()) s << "  id        " << data.id_name << "\n";
  if (eo.impute != Impute::none) s << "impute    " << to_string(eo.impute) << " (categorical: most frequent)\n";
  if (data.dropped_rows) s << "dropped   " << app::dropped_rows_text(data) << "\n";
  return s.str();
}

// The readable summary: settings, scores, and for classification the confusion matrix.
std::string summary_text(const Evaluation& ev) {
  const EvalResult& res = ev.result;
  const EvalOptions& eo = ev.options;
  const SweepRow& row = ev.row;
  std::ostringstream s;
  s << "task      " << to_string(res.task) << "\n";
  s << "data      " << ev.data.source << " (" << ev.data.all_rows() << " rows, " << ev.data.dims() << " features";
  if (res.task == Task::classify) s << ", " << res.classes.size() << " classes";
  s << ")\n";
  s << feature_lines(ev.data, eo);
  s << "k         " << row.k << "\nweights   " << row.weights.to_string() << "\nmetric    " << to_string(row.metric)
    << "\nscale     " << to_string(eo.scaling) << "\n";
  if (eo.folds.kind == FoldSpec::Kind::kfold)
    s << "folds     " << res.folds << (res.task == Task::classify ? " (stratified" : " (shuffled") << ", seed " << eo.folds.seed << ")\n";
  else if (eo.folds.kind == FoldSpec::Kind::loo)
    s << "folds     leave-one-out (" << res.folds << " rows, scores pooled)\n";
  else
    s << "test      " << ev.test.source << " (" << ev.test.size() << " rows)\n";
  // One pooled score has no spread over folds to show: the std column says so ("-") rather than
  // 0.0000. CSV and JSON keep the number, 0.
  const bool one_score = eo.folds.pooled();
  s << "\nscore                  mean       std\n";
  for (std::size_t i = 0; i < res.score_names.size(); ++i)
    s << std::left << std::setw(18) << res.score_names[i] << std::right << std::setw(10) << fixed(row.scores[i].mean) << std::setw(10)
      << (one_score ? std::string("-") : fixed(row.scores[i].std)) << '\n';
  if (res.task == Task::classify) {
    s << "\nconfusion matrix (rows: true class, columns: predicted";
    if (!eo.folds.pooled()) s << ", summed over folds";
    s << ")\n";
    std::size_t w = 5;
    for (const auto& cl : res.classes) w = std::max(w, cl.size() + 1);
    s << std::setw(static_cast<int>(w)) << "";
    for (const auto& cl : res.classes) s << std::setw(static_cast<int>(w)) << cl;
    s << '\n';
    const auto& cm = res.confusion.front();
    for (std::size_t i = 0; i < cm.size(); ++i) {
      s << std::left << std::setw(static_cast<int>(w)) << res.classes[i] << std::right;
      for (std::size_t j = 0; j < cm[i].size(); ++j) s << std::setw(static_cast<int>(w)) << cm[i][j];
      s << '\n';
    }
  }
  return s.str();
}

}  // namespace

std::string evaluate(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err) {
  const Dataset data = load_train(r, s, "evaluate");
  if (s.task == Task::classify) app::check_guessed_task(data, s.task_given, s.label_given, s.params.backend.comm.get());
  EvalOptions eo;
  eo.task = s.task;
  eo.impute = s.params.impute;
  eo.ks = {s.params.k};
  eo.weights = {s.params.weights};
  eo.metrics = {s.params.metric};
  eo.scaling = s.params.scaling;
  eo.backend = s.params.backend;
  const int modes = static_cast<int>(r.count("test")) + static_cast<int>(r.count("loo")) +
                    static_cast<int>(r.count("folds") && !r["folds"].has_default());
  if (modes > 1) throw app::option_error("folds", "choose one of --test, --folds and --loo");
  Dataset test;
  if (r.count("test")) {
    test = load_query(app::option_text(r, "test"), s, data);
    eo.folds.kind = FoldSpec::Kind::test;
    eo.folds.test = &test;
  } else if (r.count("loo")) {
    eo.folds.kind = FoldSpec::Kind::loo;
  } else {
    eo.folds.folds = static_cast<int>(app::parse_count("folds", app::option_text(r, "folds"), 2));
  }
  eo.folds.seed = app::parse_seed(app::option_text(r, "seed"));
  app::Progress progress(err, "folds");
  eo.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  const EvalResult res = knn::evaluate(data, eo);
  progress.finish();
  s.notes.single_row_classes(data, eo.folds, s.task);
  const Evaluation ev{data, test, eo, res, res.rows.front()};
  if (s.format == "json") return json_text(ev);
  if (s.format == "csv") return csv_text(ev);
  return summary_text(ev);
}

}  // namespace knn::cli
