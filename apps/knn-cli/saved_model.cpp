#include "saved_model.hpp"

#include <memory>
#include <vector>

#include "arguments.hpp"
#include "errors.hpp"
#include "knn/model.hpp"

namespace knn::cli {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out;
}

// Compares the options given with a model's values, naming the model's file in a conflict.
class Agreement {
 public:
  Agreement(const cxxopts::ParseResult& r, std::string file) : r_(r), file_(std::move(file)) {}

  /// Option `name`, where given as `given`, must equal the model's `held` (or `alias`, the same
  /// column by its name).
  void value(const std::string& name, const std::string& given, const std::string& held, const std::string& alias = "") const {
    if (!r_.count(name) || given == held || (!alias.empty() && given == alias)) return;
    throw app::option_error(name, quote(given) + " conflicts with the model in " + file_ + ", fitted with " + quote(held) +
                                      " (leave the option out, or fit another model)");
  }
  /// Flag `name`, where given, must have been given to the fit.
  void flag(const std::string& name, bool held) const {
    if (!r_.count(name) || held) return;
    throw app::option_error(name, "conflicts with the model in " + file_ + ", fitted without it (leave the option out, or fit another model)");
  }

 private:
  const cxxopts::ParseResult& r_;
  std::string file_;
};

}  // namespace

void read_model(const cxxopts::ParseResult& r, Settings& s, const std::string& cmd) {
  if (!r.count("model")) {
    if (!r.count("train")) throw app::option_error("train", "is required by knn-cli " + cmd + " (or --model, a model file from knn-cli fit)");
    return;
  }
  if (r.count("train")) throw app::option_error("model", "conflicts with --train: a model holds its training rows (give one of the two)");
  const std::string file = app::option_text(r, "model");
  // Read on the CPU backend: the GPU's start-up goes on meanwhile, and the model moves to the
  // run's backend once the query file is read (answer_queries).
  BackendOptions on_cpu = s.params.backend;
  on_cpu.device = Device::cpu;
  std::unique_ptr<KnnModel> model = load_model(file, on_cpu);
  const Dataset& layout = model->layout();
  if (layout.column_names.empty())
    throw Error::at(file, 0, 0, "holds a model fitted on a matrix, without a CSV file's columns to read the query file by");
  if (cmd == "predict" && model->kind() == ModelKind::neighbors)
    throw Error::at(file, 0, 0, "holds a nearest-neighbours model without labels: it answers knn-cli neighbors, not predict");

  const ModelParams& held = model->params();
  const CsvOptions& csv = layout.options;
  const Task task = model->kind() == ModelKind::regressor ? Task::regress : Task::classify;
  const Agreement agree(r, file);
  agree.value("task", to_string(s.task), to_string(task));
  agree.value("weights", s.params.weights.to_string(), held.weights.to_string());
  agree.value("metric", to_string(s.params.metric), to_string(held.metric));
  agree.value("scale", to_string(s.params.scaling), to_string(held.scaling));
  agree.flag("no-normalize", held.scaling == Scaling::none);
  agree.value("impute", to_string(s.params.impute), to_string(held.impute));
  agree.value("label", s.csv.label, csv.label, layout.label_name);
  agree.value("ignore", joined(s.csv.ignore), joined(csv.ignore));
  agree.value("categorical", joined(s.csv.categorical), joined(csv.categorical));
  agree.value("numeric", joined(s.csv.numeric), joined(csv.numeric));
  agree.value("na-values", joined(s.csv.na_values), joined(csv.na_values));
  agree.value("delimiter", std::string(1, s.csv.delimiter), std::string(1, csv.delimiter));
  agree.flag("drop-missing", csv.drop_missing);
  agree.flag("no-header", !csv.header);
  // An identifier column of the query file only may be named here (load_query_csv refuses a
  // column the model's training file has); one named to the fit must be the same.
  if (!csv.id.empty()) agree.value("id", s.csv.id, csv.id, layout.id_name);
  const std::string id = r.count("id") ? s.csv.id : csv.id;

  if (r.count("k")) model->set_k(s.params.k);
  BackendOptions backend = std::move(s.params.backend);
  s.params = model->params();
  s.params.backend = std::move(backend);
  // Properties of the query file, not the model's.
  const std::size_t skip = s.csv.skip_lines;
  const char decimal = s.csv.decimal;
  s.csv = csv;
  s.csv.id = id;
  s.csv.skip_lines = skip;
  s.csv.decimal = decimal;
  s.task = task;
  s.model = std::move(model);
}

}  // namespace knn::cli
