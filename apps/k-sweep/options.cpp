#include "options.hpp"

#include "csv_options.hpp"
#include "knn/evaluation.hpp"
#include "model_options.hpp"
#include "run_options.hpp"

namespace knn::sweep {

namespace {

constexpr const char* kExamples =
    "\nexamples:\n"
    "  k-sweep --data data/iris.csv --k 1:50 --plot iris.svg\n"
    "  k-sweep --data data/wine.csv --folds 10 --weights uniform,distance --format json -o wine.json\n"
    "  k-sweep --data data/diabetes.csv --task regress --k 1:99:2 --metric l2,l1\n"
    "\n"
    "The table has one row per k (per weight function and metric when several are swept) with the\n"
    "mean and population standard deviation of each score over the folds. The best k (highest\n"
    "accuracy, or lowest RMSE; a tie goes to the smaller k) is reported on standard error.\n"
    "--plot runs gnuplot: the program named by the environment variable KNN_GNUPLOT, else the one\n"
    "found when k-sweep was built, else gnuplot on PATH.\n";

}  // namespace

cxxopts::Options make_options() {
  cxxopts::Options o(kProg, "k-sweep: cross-validated scores of k-nearest-neighbour models for many k in one pass");
  o.custom_help("--data FILE [options]");
  o.positional_help("");
  // clang-format off
  o.add_options("input")
    ("data", "the data: a CSV file with a header row, gzip-compressed or not (- reads standard input)", cxxopts::value<std::string>(), "FILE")
    ("train", "the same as --data, as knn-cli evaluate names it", cxxopts::value<std::string>(), "FILE");
  app::add_csv_options(o, "the --test file", "the table does not show it (as with --ignore)");
  o.add_options("folds")
    ("folds", "k-fold cross-validation, stratified for classification", cxxopts::value<std::string>()->default_value("5"), "N")
    ("loo", "leave-one-out: every row is scored by a model of all the other rows")
    ("test", "score models fitted on the data (--data or --train) against this file instead of cross-validating", cxxopts::value<std::string>(), "FILE")
    ("seed", "seed of the fold assignment (fixed by default, so runs repeat)", cxxopts::value<std::string>()->default_value(std::to_string(default_fold_seed)), "N");
  app::add_model_options(o, "sweep", app::ModelValues::lists);
  app::add_run_options(o);
  o.add_options("output")
    ("o,output", "the table, written whole or not at all (- is standard output)", cxxopts::value<std::string>()->default_value("-"), "FILE")
    ("format", "csv or json", cxxopts::value<std::string>()->default_value("csv"), "F")
    ("plot", "plot of the score against k with a band of +-1 standard deviation: FILE.svg or FILE.png", cxxopts::value<std::string>(), "FILE")
    ("save-folds", "write the fold of every data row (0-based, header not counted) as row,fold CSV", cxxopts::value<std::string>(), "FILE");
  o.add_options("")
    ("h,help", "this help")
    ("version", "the version");
  // clang-format on
  return o;
}

std::string help_text(cxxopts::Options& options) {
  return options.help({"input", "folds", "sweep", "run", "output", ""}) + kExamples;
}

}  // namespace knn::sweep
