#include "settings.hpp"

#include <limits>
#include <utility>

#include "arguments.hpp"
#include "csv_options.hpp"
#include "destinations.hpp"
#include "errors.hpp"
#include "gnuplot.hpp"
#include "model_options.hpp"
#include "option_values.hpp"
#include "output.hpp"
#include "run_options.hpp"

namespace knn::sweep {

namespace {

// A whole number >= min_value that fits an int.
int small_count(const std::string& option, const std::string& text, std::size_t min_value) {
  const std::size_t v = app::parse_count(option, text, min_value);
  if (v > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw app::option_error(option, quote(text) + " is too large");
  return static_cast<int>(v);
}

// --folds, --loo or --test, and --seed.
void read_folds(const cxxopts::ParseResult& r, Settings& s) {
  FoldSpec& folds = s.eval.folds;
  const int modes = static_cast<int>(r.count("test")) + static_cast<int>(r.count("loo")) + static_cast<int>(r.count("folds"));
  if (modes > 1) throw app::option_error("folds", "choose one of --folds, --loo and --test");
  if (r.count("test")) {
    folds.kind = FoldSpec::Kind::test;
    s.test_path = app::option_text(r, "test");
  } else if (r.count("loo")) {
    folds.kind = FoldSpec::Kind::loo;
  } else {
    folds.kind = FoldSpec::Kind::kfold;
    folds.folds = small_count("folds", app::option_text(r, "folds"), 2);
  }
  folds.seed = app::parse_seed(app::option_text(r, "seed"));
  if ((s.data_path == "-") + (s.test_path == "-") > 1)
    throw app::option_error("test", "standard input (-) can be given to one file option only");
}

// --output, --plot and --save-folds: each checked, and each result in a file of its own.
void read_destinations(const cxxopts::ParseResult& r, Settings& s) {
  s.output = app::option_text(r, "output");
  check_destination("output", s.output);
  if (r.count("plot")) {
    s.plot = app::option_text(r, "plot");
    if (s.plot == "-") throw app::option_error("plot", "needs a file name ending in .svg or .png, not standard output");
    s.image = image_type(s.plot);
    check_destination("plot", s.plot);
    s.gnuplot = find_gnuplot(s.plot);
  }
  if (r.count("save-folds")) {
    s.save_folds = app::option_text(r, "save-folds");
    if (s.eval.folds.kind == FoldSpec::Kind::test)
      throw app::option_error("save-folds", quote(s.save_folds) + ": there are no folds with --test (every row of the data file trains the model)");
    check_destination("save-folds", s.save_folds);
  }
  const std::pair<const char*, std::string> dest[] = {{"output", s.output}, {"plot", s.plot}, {"save-folds", s.save_folds}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = i + 1; j < 3; ++j)
      if (!dest[i].second.empty() && !dest[j].second.empty() && same_file(dest[i].second, dest[j].second))
        throw app::option_error(dest[j].first, quote(dest[j].second) + " is also the file of --" + dest[i].first);
}

}  // namespace

Settings read_settings(const cxxopts::ParseResult& r, std::ostream& err) {
  Settings s;
  // --train is knn-cli evaluate's name for the same file.
  if (r.count("data") && r.count("train")) throw app::option_error("train", "names the data as --data does: give one of the two");
  if (!r.count("data") && !r.count("train")) throw app::option_error("data", "is required: the CSV file to sweep over (see k-sweep --help)");
  s.data_path = app::option_text(r, r.count("data") ? "data" : "train");
  s.csv = app::csv_options(r);
  s.eval = app::model_options(r, app::ModelValues::lists);
  s.task_given = r.count("task") > 0;
  s.label_given = r.count("label") > 0;
  read_folds(r, s);
  s.eval.backend = app::run_options(r, err);
  s.format = app::option_text(r, "format");
  app::check_format(s.format);
  read_destinations(r, s);
  return s;
}

}  // namespace knn::sweep
