#include "options.hpp"

#include <vector>

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
    {"fit", "  knn-cli fit --train data/iris.csv -k 7 --weights distance -o iris.knn\n"
            "  knn-cli predict --model iris.knn --query new.csv --proba\n"},
    {"predict", "  knn-cli predict --train data/iris.csv --query new.csv -k 7 --weights distance --proba -o out.csv\n"
                "  knn-cli predict --model iris.knn --query new.csv   (iris.knn from knn-cli fit)\n"},
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
    o.add_options("input")
      ("file", "the CSV file to describe, gzip-compressed or not (- reads standard input)", cxxopts::value<std::string>(), "FILE")
      ("train", "FILE given as an option, as the other commands take theirs", cxxopts::value<std::string>(), "FILE");
    app::add_csv_options(o, nullptr, "shown with the role id");
    o.add_options("output")
      ("o,output", "output file, written whole or not at all (- is standard output)", cxxopts::value<std::string>()->default_value("-"), "FILE")
      ("format", "json (default: a readable table)", cxxopts::value<std::string>(), "F");
    o.add_options("")("h,help", "this help");
    // clang-format on
    o.parse_positional({"file"});
    return o;
  }
  const bool queries = cmd == "predict" || cmd == "neighbors";
  o.custom_help(cmd == "evaluate" ? "--train FILE [--test FILE | --folds N | --loo] [options]"
                : cmd == "fit"    ? "--train FILE -o MODEL [options]"
                                  : "(--train FILE | --model MODEL) --query FILE [options]");
  o.positional_help("");
  // clang-format off
  o.add_options("input")
    ("train", "training data: a CSV file with a header row, gzip-compressed or not (- reads standard input)", cxxopts::value<std::string>(), "FILE");
  if (queries)
    o.add_options("input")
      ("model", "a model file from knn-cli fit, in place of --train; options given beside it must be the model's, but for -k (up to its training rows), --skip-lines (the query file's) and the run options", cxxopts::value<std::string>(), "MODEL");
  app::add_csv_options(o, queries ? "the query file" : cmd == "evaluate" ? "the --test file" : nullptr,
                       queries ? "the output carries it as its first column (it may be in the query file only)"
                       : cmd == "fit" ? "the model keeps it, and predict and neighbors with --model carry it to their output"
                                      : "the scores do not show it; predict and neighbors carry it to their output");
  if (cmd == "evaluate") {
    o.add_options("folds")
      ("test", "score a model fitted on --train against this file instead of cross-validating", cxxopts::value<std::string>(), "FILE")
      ("folds", "k-fold cross-validation, stratified for classification", cxxopts::value<std::string>()->default_value("5"), "N")
      ("loo", "leave-one-out: every row is scored by a model of all the other rows")
      ("seed", "seed of the fold assignment (fixed by default, so runs repeat)", cxxopts::value<std::string>()->default_value(std::to_string(default_fold_seed)), "N");
  } else if (queries) {
    o.add_options("input")
      ("query", std::string(cmd == "neighbors" ? "rows whose nearest training rows to find" : "rows to predict") + ": the training file's feature columns; its label column may be present or absent", cxxopts::value<std::string>(), "FILE");
  }
  // Weights and the task choose how neighbours vote: neighbors, which only finds them, takes neither.
  app::add_model_options(o, "model", app::ModelValues::one, cmd != "neighbors");
  app::add_run_options(o);
  if (cmd == "fit")
    o.add_options("output")
      ("o,output", "the model file to write, whole or not at all: the options, the fitted preprocessing and scaler, the classes, the scaled training rows and their labels (docs/model-format.md)", cxxopts::value<std::string>(), "MODEL");
  else
    o.add_options("output")
      ("o,output", "output file, written whole or not at all (- is standard output)", cxxopts::value<std::string>()->default_value("-"), "FILE")
      ("format", "csv or json" + std::string(cmd == "evaluate"    ? " (default: a readable summary)"
                                              : cmd == "neighbors" ? " (default: csv): a row per query and neighbour, with the query's "
                                                                     "0-based row, the rank (1 to k), the neighbour's 0-based data row "
                                                                     "in the training file and the distance in the scaled space"
                                                                   : " (default: csv)"),
       cxxopts::value<std::string>(), "F");
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

std::string taken_elsewhere(const std::string& cmd, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  std::vector<std::string> takers;
  for (const char* other : {"predict", "evaluate", "neighbors", "fit", "inspect"}) {
    if (cmd == other) continue;
    auto o = make_options(other);
    const char* argv[] = {other, name.c_str()};
    try {
      (void)o.parse(2, argv);
    } catch (const cxxopts::exceptions::no_such_option&) {
      continue;
    } catch (const cxxopts::exceptions::exception&) {  // known, without its value
    }
    takers.emplace_back(other);
  }
  if (takers.empty()) return std::string();
  std::string who = takers.front();
  for (std::size_t i = 1; i < takers.size(); ++i) who += (i + 1 == takers.size() ? " and " : ", ") + takers[i];
  return who + (takers.size() == 1 ? " takes" : " take") + " it, not " + cmd;
}

}  // namespace knn::cli
