#include "settings.hpp"

#include "arguments.hpp"
#include "csv_options.hpp"
#include "errors.hpp"
#include "model_options.hpp"
#include "output.hpp"
#include "run_options.hpp"

namespace knn::cli {

Settings read_settings(const cxxopts::ParseResult& r, const std::string& cmd, std::ostream& err) {
  Settings s;
  s.csv = app::csv_options(r);
  // evaluate prints scores, not rows: no --id to offer for row names.
  if (cmd == "evaluate") s.notes = app::DataNotes(false);
  if (cmd == "inspect") {  // no model, no run: only the file's options
    s.format = app::option_text(r, "format");
    if (!s.format.empty() && s.format != "json") throw app::option_error("format", quote(s.format) + " is not json");
    s.output = app::option_text(r, "output");
    return s;
  }
  const EvalOptions model = app::model_options(r, app::ModelValues::one, cmd != "neighbors");
  s.params.k = model.ks.front();
  s.task = model.task;
  s.task_given = r.count("task") > 0;
  s.label_given = r.count("label") > 0;
  s.params.impute = model.impute;
  s.params.weights = model.weights.front();
  s.params.metric = model.metrics.front();
  s.params.scaling = model.scaling;
  s.params.backend = app::run_options(r, err);
  s.output = app::option_text(r, "output");
  if (cmd == "fit") {
    // A model is fitted before any query file is read: --ignore may name columns of those only.
    s.csv.query_file_follows = true;
    return s;
  }
  s.format = app::option_text(r, "format");
  if (!s.format.empty()) app::check_format(s.format);
  return s;
}

const std::string& required(const cxxopts::ParseResult& r, const std::string& name, const std::string& cmd) {
  if (!r.count(name)) throw app::option_error(name, "is required by knn-cli " + cmd);
  return r[name].as<std::string>();
}

void check_stdin_once(const cxxopts::ParseResult& r) {
  int n = 0;
  for (const char* name : {"train", "model", "query", "test"}) n += r.count(name) && r[name].as<std::string>() == "-";
  if (n > 1) throw app::option_error("train", "standard input (-) can be given to one file option only");
}

}  // namespace knn::cli
