#include "options.hpp"

#include "csv_options.hpp"
#include "knn/evaluation.hpp"
#include "model_options.hpp"
#include "run_options.hpp"

namespace knn::cli {

namespace {

struct Example {
  const char* command;
  const char* text;
};
constexpr Example kExamples[] = {
    {"predict", "  knn-cli predict --train data/iris.csv --query new.csv -k 7 --weights distance --proba -o out.csv\n"},
    {"evaluate", "  knn-cli evaluate --train data/wine.csv --folds 10 -k 5 --format json\n"
                 "  knn-cli evaluate --train data/diabetes.csv --task regress --loo -k 15\n"},
    {"neighbors", "  knn-cli neighbors --train data/iris.csv --query data/iris.csv -k 3 --metric l1\n"},
    {"inspect", "  knn-cli inspect data/survey.csv --label Sex\n"},
    {"evaluate", "  knn-cli evaluate --train data/survey.csv --label Sex --impute mean\n"},
};

}  // namespace

cxxopts::Options make_options(const std::string& cmd) {
  cxxopts::Options o("knn-cli " + cmd, "");
  if (cmd == "inspect") {
    o.custom_help("FILE [options]");
    o.positional_help("");
    // clang-format off
    o.add_options("input")("file", "the CSV file to describe (- reads standard input)", cxxopts::value<std::string>(), "FILE");
    app::add_csv_options(o);
    o.add_options("output")
      ("o,output", "output file, written whole or not at all (- is standard output)", cxxopts::value<std::string>()->default_value("-"), "FILE")
      ("format", "json (default: a readable table)", cxxopts::value<std::string>(), "F");
    o.add_options("")("h,help", "this help");
    // clang-format on
    o.parse_positional({"file"});
    return o;
  }
  o.custom_help("--train FILE " + std::string(cmd == "evaluate" ? "[--test FILE | --folds N | --loo]" : "--query FILE") + " [options]");
  o.positional_help("");
  // clang-format off
  o.add_options("input")
    ("train", "training data: a CSV file with a header row (- reads standard input)", cxxopts::value<std::string>(), "FILE");
  app::add_csv_options(o);
  if (cmd == "evaluate") {
    o.add_options("folds")
      ("test", "score a model fitted on --train against this file instead of cross-validating", cxxopts::value<std::string>(), "FILE")
      ("folds", "k-fold cross-validation, stratified for classification", cxxopts::value<std::string>()->default_value("5"), "N")
      ("loo", "leave-one-out: every row is scored by a model of all the other rows")
      ("seed", "seed of the fold assignment (fixed by default, so runs repeat)", cxxopts::value<std::string>()->default_value(std::to_string(default_fold_seed)), "N");
  } else {
    o.add_options("input")
      ("query", "rows to predict: the training file's feature columns; its label column may be present or absent", cxxopts::value<std::string>(), "FILE");
  }
  app::add_model_options(o, "model", app::ModelValues::one);
  app::add_run_options(o);
  o.add_options("output")
    ("o,output", "output file, written whole or not at all (- is standard output)", cxxopts::value<std::string>()->default_value("-"), "FILE")
    ("format", "csv or json" + std::string(cmd == "evaluate" ? " (default: a readable summary)" : ""), cxxopts::value<std::string>(), "F");
  if (cmd == "predict")
    o.add_options("output")("proba", "classification: add one probability column p_<class> per class");
  o.add_options("")("h,help", "this help");
  // clang-format on
  return o;
}

std::string help_text(const std::string& cmd) {
  auto o = make_options(cmd);
  std::string h = o.help({"input", "folds", "model", "run", "output", ""});
  h += "\nexample:\n";
  for (const auto& e : kExamples)
    if (cmd == e.command) h += e.text;
  return h;
}

}  // namespace knn::cli
