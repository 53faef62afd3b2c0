#include "cli.hpp"

#include <cxxopts.hpp>
#include <omp.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>

#include "app_common.hpp"
#include "knn/mpi.hpp"
#include "knn/knn.hpp"

namespace knn::cli {

namespace {

constexpr const char* kUsage =
    "knn-cli: exact k-nearest-neighbour classification and regression on CSV files\n"
    "\n"
    "usage:\n"
    "  knn-cli predict   --train FILE --query FILE [options]   one prediction per query row\n"
    "  knn-cli evaluate  --train FILE [--test FILE | --folds N | --loo] [options]   scores\n"
    "  knn-cli neighbors --train FILE --query FILE [options]   neighbour indices and distances\n"
    "  knn-cli --version | --help | SUBCOMMAND --help\n"
    "\n"
    "example:\n"
    "  knn-cli evaluate --train data/iris.csv -k 5\n";

struct Example {
  const char* command;
  const char* text;
};
constexpr Example kExamples[] = {
    {"predict", "  knn-cli predict --train data/iris.csv --query new.csv -k 7 --weights distance --proba -o out.csv\n"},
    {"evaluate", "  knn-cli evaluate --train data/wine.csv --folds 10 -k 5 --format json\n"
                 "  knn-cli evaluate --train data/diabetes.csv --task regress --loo -k 15\n"},
    {"neighbors", "  knn-cli neighbors --train data/iris.csv --query data/iris.csv -k 3 --metric l1\n"},
};

cxxopts::Options make_options(const std::string& cmd) {
  cxxopts::Options o("knn-cli " + cmd, "");
  o.custom_help("--train FILE " + std::string(cmd == "evaluate" ? "[--test FILE | --folds N | --loo]" : "--query FILE") + " [options]");
  o.positional_help("");
  // clang-format off
  o.add_options("input")
    ("train", "training data: a CSV file with a header row (- reads standard input)", cxxopts::value<std::string>(), "FILE")
    ("label", "label column by name or 0-based index, negative from the end (default: the last column)", cxxopts::value<std::string>(), "COLUMN")
    ("ignore", "comma-separated columns (names or indices) left out of the features, e.g. an ID column", cxxopts::value<std::string>(), "COLUMNS")
    ("no-header", "the files have no header row: columns are named by their 0-based index")
    ("delimiter", "field separator (\\t or tab for a tab)", cxxopts::value<std::string>()->default_value(","), "CHAR");
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
  o.add_options("model")
    ("k", "number of neighbours", cxxopts::value<std::string>()->default_value("5"), "N")
    ("task", "classify or regress", cxxopts::value<std::string>()->default_value("classify"), "TASK")
    ("weights", "uniform | distance | gaussian[:SIGMA] | inverse[:C] | subtract[:C]", cxxopts::value<std::string>()->default_value("uniform"), "W")
    ("metric", "l2 | l1 | cosine", cxxopts::value<std::string>()->default_value("l2"), "M")
    ("scale", "minmax | standard | none, fitted on the training rows only", cxxopts::value<std::string>()->default_value("minmax"), "S")
    ("no-normalize", "same as --scale none");
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

// The option's value, its default when it has one, else "".
std::string get(const cxxopts::ParseResult& r, const std::string& name) {
  if (r.count(name) || r[name].has_default()) return r[name].as<std::string>();
  return std::string();
}

const std::string& required(const cxxopts::ParseResult& r, const std::string& name, const std::string& cmd) {
  if (!r.count(name)) throw app::option_error(name, "is required by knn-cli " + cmd);
  return r[name].as<std::string>();
}

struct Common {
  CsvOptions csv;
  ModelParams params;
  Task task = Task::classify;
  std::string format;
  std::string output;
};

Common common_options(const cxxopts::ParseResult& r, std::ostream& err) {
  Common c;
  c.csv.header = r.count("no-header") == 0;
  c.csv.delimiter = app::parse_delimiter(get(r, "delimiter"));
  c.csv.label = get(r, "label");
  // An empty value (an unset shell variable, say) must not quietly mean the default last column.
  if (r.count("label") && c.csv.label.empty())
    throw app::option_error("label", "empty column name " + quote(c.csv.label) + " (give a name or a 0-based index)");
  if (r.count("ignore")) c.csv.ignore = app::split_list(get(r, "ignore"));
  c.params.k = app::parse_count("k", get(r, "k"), 1);
  c.task = parse_task(get(r, "task"));
  c.params.weights = Weights::parse(get(r, "weights"));
  c.params.metric = parse_metric(get(r, "metric"));
  c.params.scaling = parse_scaling(get(r, "scale"));
  if (r.count("no-normalize")) {
    if (r.count("scale") && c.params.scaling != Scaling::none)
      throw app::option_error("no-normalize", "conflicts with --scale " + get(r, "scale"));
    c.params.scaling = Scaling::none;
  }
  c.params.backend = app::run_options(r, err);
  c.format = get(r, "format");
  if (!c.format.empty() && c.format != "csv" && c.format != "json")
    throw app::option_error("format", "unknown format " + quote(c.format) + " (expected csv or json)");
  c.output = get(r, "output");
  return c;
}

void check_stdin_once(const cxxopts::ParseResult& r) {
  int n = 0;
  for (const char* name : {"train", "query", "test"}) n += r.count(name) && r[name].as<std::string>() == "-";
  if (n > 1) throw app::option_error("train", "standard input (-) can be given to one file option only");
}

// Runs f; a query value that overflows once scaled is reported at its file, line and column.
template <class F>
std::string naming_query_cells(const Dataset& query, F&& f) {
  try {
    return f();
  } catch (const ScaleOverflow& e) {
    throw e.at(query.source, query.lines.at(e.row), query.feature_columns.at(e.col) + 1);
  }
}

std::string predict_text(const cxxopts::ParseResult& r, const Common& c, const Dataset& train, const Dataset& query);
std::string neighbors_text(const Common& c, const Dataset& train, const Dataset& query);

// With several MPI ranks each loads its shard of the training rows and the whole query file.
Dataset load_query(const std::string& path, const Common& c, const Dataset& train) {
  Dataset query;
  collective(c.params.backend.comm.get(), [&] { query = load_query_csv(path, c.csv, train); });
  return query;
}

std::string run_predict(const cxxopts::ParseResult& r, const Common& c) {
  const Dataset train = load_csv_sharded(required(r, "train", "predict"), c.csv, c.params.backend.comm.get());
  const Dataset query = load_query(required(r, "query", "predict"), c, train);
  return naming_query_cells(query, [&] { return predict_text(r, c, train, query); });
}

std::string run_neighbors(const cxxopts::ParseResult& r, const Common& c) {
  const Dataset train = load_csv_sharded(required(r, "train", "neighbors"), c.csv, c.params.backend.comm.get());
  const Dataset query = load_query(required(r, "query", "neighbors"), c, train);
  return naming_query_cells(query, [&] { return neighbors_text(c, train, query); });
}

std::string predict_text(const cxxopts::ParseResult& r, const Common& c, const Dataset& train, const Dataset& query) {
  const bool proba = r.count("proba") > 0;
  const bool json = c.format == "json";
  std::ostringstream s;
  if (c.task == Task::regress) {
    if (proba) throw app::option_error("proba", "gives class probabilities: it needs --task classify");
    KnnRegressor m(c.params);
    m.fit(train.features, numeric_targets(train));
    const auto pred = m.predict(query.features);
    if (json) {
      s << "{\"task\": \"regress\", \"k\": " << c.params.k << ", \"predictions\": [";
      for (std::size_t i = 0; i < pred.size(); ++i) s << (i ? ", " : "") << app::json_number(pred[i]);
      s << "]}\n";
    } else {
      s << "prediction\n";
      for (double v : pred) s << format_double(v) << '\n';
    }
    return s.str();
  }
  KnnClassifier m(c.params);
  m.fit(train.features, train.labels);
  const auto& classes = m.classes();
  std::vector<std::string> pred;
  std::vector<double> p;
  if (proba) {
    p = m.predict_proba(query.features);
    // The prediction is the class of largest share, ties to the smaller class: the same rule as
    // predict(), so both agree.
    for (std::size_t i = 0; i < query.size(); ++i) {
      std::size_t best = 0;
      for (std::size_t cl = 1; cl < classes.size(); ++cl)
        if (p[i * classes.size() + cl] > p[i * classes.size() + best]) best = cl;
      pred.push_back(classes[best]);
    }
  } else {
    pred = m.predict(query.features);
  }
  if (json) {
    s << "{\"task\": \"classify\", \"k\": " << c.params.k << ", \"classes\": [";
    for (std::size_t i = 0; i < classes.size(); ++i) s << (i ? ", " : "") << app::json_string(classes[i]);
    s << "], \"predictions\": [";
    for (std::size_t i = 0; i < pred.size(); ++i) s << (i ? ", " : "") << app::json_string(pred[i]);
    s << "]";
    if (proba) {
      s << ", \"proba\": [";
      for (std::size_t i = 0; i < pred.size(); ++i) {
        s << (i ? ", [" : "[");
        for (std::size_t cl = 0; cl < classes.size(); ++cl) s << (cl ? ", " : "") << app::json_number(p[i * classes.size() + cl]);
        s << "]";
      }
      s << "]";
    }
    s << "}\n";
    return s.str();
  }
  s << "prediction";
  if (proba)
    for (const auto& cl : classes) s << ',' << csv_field("p_" + cl);
  s << '\n';
  for (std::size_t i = 0; i < pred.size(); ++i) {
    s << csv_field(pred[i]);
    if (proba)
      for (std::size_t cl = 0; cl < classes.size(); ++cl) s << ',' << format_double(p[i * classes.size() + cl]);
    s << '\n';
  }
  return s.str();
}

std::string neighbors_text(const Common& c, const Dataset& train, const Dataset& query) {
  // Neighbours need no labels: fit the scaler and the rows through the shared model.
  NearestNeighbors model(c.params);
  model.fit(train.features);
  const Neighbors nb = model.kneighbors(query.features);
  std::ostringstream s;
  if (c.format == "json") {
    s << "{\"k\": " << nb.k << ", \"metric\": \"" << to_string(c.params.metric) << "\", \"neighbors\": [";
    for (std::size_t q = 0; q < nb.queries; ++q) {
      s << (q ? ",\n  " : "\n  ") << "{\"query\": " << q << ", \"index\": [";
      for (std::size_t j = 0; j < nb.k; ++j) s << (j ? ", " : "") << nb.index_row(q)[j];
      s << "], \"distance\": [";
      for (std::size_t j = 0; j < nb.k; ++j) s << (j ? ", " : "") << app::json_number(nb.distance_row(q)[j]);
      s << "]}";
    }
    s << "\n]}\n";
    return s.str();
  }
  s << "query,rank,index,distance\n";
  for (std::size_t q = 0; q < nb.queries; ++q)
    for (std::size_t j = 0; j < nb.k; ++j)
      s << q << ',' << j + 1 << ',' << nb.index_row(q)[j] << ',' << format_double(nb.distance_row(q)[j]) << '\n';
  return s.str();
}

std::string fixed(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string run_evaluate(const cxxopts::ParseResult& r, const Common& c, std::ostream& err) {
  const Dataset data = load_csv_sharded(required(r, "train", "evaluate"), c.csv, c.params.backend.comm.get());
  EvalOptions eo;
  eo.task = c.task;
  eo.ks = {c.params.k};
  eo.weights = {c.params.weights};
  eo.metrics = {c.params.metric};
  eo.scaling = c.params.scaling;
  eo.backend = c.params.backend;
  const int modes = static_cast<int>(r.count("test")) + static_cast<int>(r.count("loo")) +
                    static_cast<int>(r.count("folds") && !r["folds"].has_default());
  if (modes > 1) throw app::option_error("folds", "choose one of --test, --folds and --loo");
  Dataset test;
  if (r.count("test")) {
    test = load_query(get(r, "test"), c, data);
    eo.folds.kind = FoldSpec::Kind::test;
    eo.folds.test = &test;
  } else if (r.count("loo")) {
    eo.folds.kind = FoldSpec::Kind::loo;
  } else {
    eo.folds.folds = static_cast<int>(app::parse_count("folds", get(r, "folds"), 2));
  }
  eo.folds.seed = app::parse_seed(get(r, "seed"));
  app::Progress progress(err, "folds");
  eo.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  const EvalResult res = evaluate(data, eo);
  progress.finish();
  const SweepRow& row = res.rows.front();
  const char* fold_text = eo.folds.kind == FoldSpec::Kind::test ? "test file" : eo.folds.kind == FoldSpec::Kind::loo ? "leave-one-out" : "k-fold";
  std::ostringstream s;
  if (c.format == "json") {
    s << "{\"task\": \"" << to_string(res.task) << "\", \"k\": " << row.k << ", \"folds\": " << res.folds
      << ", \"validation\": \"" << fold_text << "\", \"weights\": " << app::json_string(row.weights.to_string())
      << ", \"metric\": \"" << to_string(row.metric) << "\", \"scale\": \"" << to_string(eo.scaling) << "\", \"rows\": " << data.all_rows()
      << ",\n \"metrics\": {";
    for (std::size_t i = 0; i < res.score_names.size(); ++i)
      s << (i ? ", " : "") << '"' << res.score_names[i] << "\": {\"mean\": " << app::json_number(row.scores[i].mean)
        << ", \"std\": " << app::json_number(row.scores[i].std) << '}';
    s << '}';
    if (res.task == Task::classify) {
      s << ",\n \"confusion_matrix\": {\"labels\": [";
      for (std::size_t i = 0; i < res.classes.size(); ++i) s << (i ? ", " : "") << app::json_string(res.classes[i]);
      s << "], \"counts\": [";
      const auto& cm = res.confusion.front();
      for (std::size_t i = 0; i < cm.size(); ++i) {
        s << (i ? ", [" : "[");
        for (std::size_t j = 0; j < cm[i].size(); ++j) s << (j ? ", " : "") << cm[i][j];
        s << ']';
      }
      s << "]}";
    }
    s << "}\n";
    return s.str();
  }
  if (c.format == "csv") {
    s << "score,mean,std\n";
    for (std::size_t i = 0; i < res.score_names.size(); ++i)
      s << res.score_names[i] << ',' << format_double(row.scores[i].mean) << ',' << format_double(row.scores[i].std) << '\n';
    return s.str();
  }
  s << "task      " << to_string(res.task) << "\n";
  s << "data      " << data.source << " (" << data.all_rows() << " rows, " << data.dims() << " features";
  if (res.task == Task::classify) s << ", " << res.classes.size() << " classes";
  s << ")\n";
  s << "k         " << row.k << "\nweights   " << row.weights.to_string() << "\nmetric    " << to_string(row.metric)
    << "\nscale     " << to_string(eo.scaling) << "\n";
  if (eo.folds.kind == FoldSpec::Kind::kfold)
    s << "folds     " << res.folds << (res.task == Task::classify ? " (stratified" : " (shuffled") << ", seed " << eo.folds.seed << ")\n";
  else if (eo.folds.kind == FoldSpec::Kind::loo)
    s << "folds     leave-one-out (" << res.folds << " rows, scores pooled)\n";
  else
    s << "test      " << test.source << " (" << test.size() << " rows)\n";
  s << "\nscore                  mean       std\n";
  for (std::size_t i = 0; i < res.score_names.size(); ++i)
    s << std::left << std::setw(18) << res.score_names[i] << std::right << std::setw(10) << fixed(row.scores[i].mean)
      << std::setw(10) << fixed(row.scores[i].std) << '\n';
  if (res.task == Task::classify) {
    s << "\nconfusion matrix (rows: true class, columns: predicted";
    if (eo.folds.kind == FoldSpec::Kind::kfold) s << ", summed over folds";
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

int run(int argc, const char* const* argv, std::ostream& out_stream, std::ostream& err_stream) {
  // Under mpirun every rank computes; rank 0 alone writes results and messages.
  const auto comm = mpi::world();
  std::ostream null_stream(nullptr);
  std::ostream& out = comm && comm->rank() > 0 ? null_stream : out_stream;
  std::ostream& err = comm && comm->rank() > 0 ? null_stream : err_stream;
  return app::guarded("knn-cli", err, [&]() -> int {
    if (argc < 2) throw Error("no subcommand (expected predict, evaluate or neighbors; see knn-cli --help)");
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      out << kUsage;
      return 0;
    }
    if (cmd == "--version") {
      out << "knn-cli " << version() << (built_with_cuda() ? " (CPU and CUDA backends)" : " (CPU backend)") << '\n';
      return 0;
    }
    if (cmd != "predict" && cmd != "evaluate" && cmd != "neighbors")
      throw Error("unknown subcommand " + quote(cmd) + " (expected predict, evaluate or neighbors; see knn-cli --help)");
    auto options = make_options(cmd);
    const cxxopts::ParseResult r = app::parse_arguments(options, argc - 1, argv + 1, "see knn-cli " + cmd + " --help");
    if (r.count("help")) {
      out << help_text(cmd);
      return 0;
    }
    if (!r.unmatched().empty()) throw Error("unexpected argument " + quote(r.unmatched().front()) + " (options start with --)");
    check_stdin_once(r);
    Common c = common_options(r, err);
    c.params.backend.comm = comm;
    std::string result;
    if (cmd == "predict") result = run_predict(r, c);
    else if (cmd == "neighbors") result = run_neighbors(r, c);
    else result = run_evaluate(r, c, err);
    if (comm && comm->rank() > 0) return 0;
    if (c.output == "-") {
      out << result << std::flush;
    } else {
      write_file_atomic(c.output, result);
    }
    return 0;
  });
}

}  // namespace knn::cli
