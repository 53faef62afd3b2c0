#include "sweep.hpp"

#include <cxxopts.hpp>
#include <omp.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "app_common.hpp"
#include "knn/mpi.hpp"
#include "knn/knn.hpp"

#ifndef KNN_GNUPLOT_PATH
#define KNN_GNUPLOT_PATH ""
#endif

extern char** environ;

namespace knn::sweep {

namespace {

namespace fs = std::filesystem;

constexpr const char* kProg = "k-sweep";

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

cxxopts::Options make_options() {
  cxxopts::Options o(kProg, "k-sweep: cross-validated scores of k-nearest-neighbour models for many k in one pass");
  o.custom_help("--data FILE [options]");
  o.positional_help("");
  // clang-format off
  o.add_options("input")
    ("data", "the data: a CSV file with a header row (- reads standard input)", cxxopts::value<std::string>(), "FILE")
    ("label", "label column by name or 0-based index, negative from the end (default: the last column)", cxxopts::value<std::string>(), "COLUMN")
    ("ignore", "comma-separated columns (names or indices) left out of the features, e.g. an ID column", cxxopts::value<std::string>(), "COLUMNS")
    ("no-header", "the files have no header row: columns are named by their 0-based index")
    ("delimiter", "field separator (\\t or tab for a tab)", cxxopts::value<std::string>()->default_value(","), "CHAR");
  o.add_options("folds")
    ("folds", "k-fold cross-validation, stratified for classification", cxxopts::value<std::string>()->default_value("5"), "N")
    ("loo", "leave-one-out: every row is scored by a model of all the other rows")
    ("test", "score models fitted on --data against this file instead of cross-validating", cxxopts::value<std::string>(), "FILE")
    ("seed", "seed of the fold assignment (fixed by default, so runs repeat)", cxxopts::value<std::string>()->default_value(std::to_string(default_fold_seed)), "N");
  o.add_options("sweep")
    ("k", "k values: START:STOP[:STEP] with STOP included (1:50, 1:99:2) or a list 1,3,5,7", cxxopts::value<std::string>()->default_value("1:30"), "LIST")
    ("weights", "comma-separated: uniform | distance | gaussian[:SIGMA] | inverse[:C] | subtract[:C]", cxxopts::value<std::string>()->default_value("uniform"), "LIST")
    ("metric", "comma-separated: l2 | l1 | cosine", cxxopts::value<std::string>()->default_value("l2"), "LIST")
    ("task", "classify or regress", cxxopts::value<std::string>()->default_value("classify"), "TASK")
    ("scale", "minmax | standard | none, fitted on each fold's training rows", cxxopts::value<std::string>()->default_value("minmax"), "S")
    ("no-normalize", "same as --scale none");
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

// The option's value, its default when it has one, else "".
std::string get(const cxxopts::ParseResult& r, const std::string& name) {
  if (r.count(name) || r[name].has_default()) return r[name].as<std::string>();
  return std::string();
}

// ---------------------------------------------------------------------------------------------
// Settings

enum class ImageType { svg, png };

struct Settings {
  std::string data_path;
  CsvOptions csv;
  EvalOptions eval;
  std::string k_text;
  std::string format = "csv";
  std::string output = "-";
  std::string plot;  // empty: no plot
  ImageType image = ImageType::svg;
  std::string gnuplot;
  std::string save_folds;  // empty: none
  std::string test_path;
};

std::vector<Weights> parse_weights_list(const std::string& text) {
  std::vector<Weights> out;
  for (const auto& part : app::split_list(text)) {
    const Weights w = Weights::parse(part);
    for (const auto& seen : out)
      if (seen.kind == w.kind && seen.param == w.param)
        throw app::option_error("weights", quote(text) + " names " + quote(w.to_string()) + " twice");
    out.push_back(w);
  }
  return out;
}

std::vector<Metric> parse_metric_list(const std::string& text) {
  std::vector<Metric> out;
  for (const auto& part : app::split_list(text)) {
    const Metric m = parse_metric(part);
    if (std::find(out.begin(), out.end(), m) != out.end())
      throw app::option_error("metric", quote(text) + " names " + quote(to_string(m)) + " twice");
    out.push_back(m);
  }
  return out;
}

bool is_executable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !fs::is_directory(path, ec);
}

std::string find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  if (!env) return std::string();
  const std::string path(env);
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = path.find(':', b);
    const std::string dir = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;  // empty entry: "."
    if (is_executable(candidate)) return candidate;
    if (e == std::string::npos) return std::string();
    b = e + 1;
  }
}

// gnuplot: $KNN_GNUPLOT when set, else the program found at build time, else gnuplot on PATH.
std::string find_gnuplot(const std::string& plot) {
  if (const char* env = std::getenv("KNN_GNUPLOT"); env && *env) {
    const std::string named(env);
    const std::string path = named.find('/') == std::string::npos ? find_on_path(named) : named;
    if (!is_executable(path))
      throw app::option_error("plot", quote(plot) + " needs gnuplot, but KNN_GNUPLOT names " + quote(named) +
                                      ", which is not an executable program");
    return path;
  }
  if (is_executable(KNN_GNUPLOT_PATH)) return KNN_GNUPLOT_PATH;
  const std::string on_path = find_on_path("gnuplot");
  if (!on_path.empty()) return on_path;
  throw app::option_error("plot", quote(plot) +
                                  " needs gnuplot, which was not found (install it, e.g. Debian's gnuplot-nox, or "
                                  "set KNN_GNUPLOT to its path)");
}

ImageType image_type(const std::string& plot) {
  std::string ext = fs::path(plot).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg") return ImageType::svg;
  if (ext == ".png") return ImageType::png;
  throw app::option_error("plot", quote(plot) + ": unknown image type " + quote(ext) +
                                  " (the file name must end in .svg or .png)");
}

// Before any work: an output file must not be a folder and its folder must exist, so that the
// writes at the end do not fail after some of them were made.
void check_destination(const std::string& option, const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw app::option_error(option, "needs a file name");
  std::error_code ec;
  const fs::path target(path);
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw app::option_error(option, quote(path) + " is a folder; give a file name");
  if (fs::exists(status) && !fs::is_regular_file(status)) {  // a device or a pipe: written directly
    if (::access(path.c_str(), W_OK) != 0)
      throw app::option_error(option, quote(path) + ": cannot write: " + std::strerror(errno));
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw app::option_error(option, quote(path) + ": folder " + quote(dir.string()) + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw app::option_error(option, quote(path) + ": cannot write in folder " + quote(dir.string()) + ": " +
                                    std::strerror(errno));
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  std::error_code ec1, ec2;
  const fs::path pa = fs::weakly_canonical(a, ec1), pb = fs::weakly_canonical(b, ec2);
  return ec1 || ec2 ? a == b : pa == pb;
}

// A whole number >= min_value that fits an int.
int small_count(const std::string& option, const std::string& text, std::size_t min_value) {
  const std::size_t v = app::parse_count(option, text, min_value);
  if (v > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw app::option_error(option, quote(text) + " is too large");
  return static_cast<int>(v);
}

Settings read_settings(const cxxopts::ParseResult& r, std::ostream& err) {
  Settings s;
  if (!r.count("data")) throw app::option_error("data", "is required: the CSV file to sweep over (see k-sweep --help)");
  s.data_path = get(r, "data");
  s.csv.header = r.count("no-header") == 0;
  s.csv.delimiter = app::parse_delimiter(get(r, "delimiter"));
  s.csv.label = get(r, "label");
  // An empty value (an unset shell variable, say) must not quietly mean the default last column.
  if (r.count("label") && s.csv.label.empty())
    throw app::option_error("label", "empty column name " + quote(s.csv.label) + " (give a name or a 0-based index)");
  if (r.count("ignore")) s.csv.ignore = app::split_list(get(r, "ignore"));

  EvalOptions& eo = s.eval;
  s.k_text = get(r, "k");
  eo.ks = app::parse_k_list(s.k_text);
  eo.task = parse_task(get(r, "task"));
  eo.weights = parse_weights_list(get(r, "weights"));
  eo.metrics = parse_metric_list(get(r, "metric"));
  eo.scaling = parse_scaling(get(r, "scale"));
  if (r.count("no-normalize")) {
    if (r.count("scale") && eo.scaling != Scaling::none)
      throw app::option_error("no-normalize", "conflicts with --scale " + quote(get(r, "scale")));
    eo.scaling = Scaling::none;
  }

  const int modes = static_cast<int>(r.count("test")) + static_cast<int>(r.count("loo")) + static_cast<int>(r.count("folds"));
  if (modes > 1) throw app::option_error("folds", "choose one of --folds, --loo and --test");
  if (r.count("test")) {
    eo.folds.kind = FoldSpec::Kind::test;
    s.test_path = get(r, "test");
  } else if (r.count("loo")) {
    eo.folds.kind = FoldSpec::Kind::loo;
  } else {
    eo.folds.kind = FoldSpec::Kind::kfold;
    eo.folds.folds = small_count("folds", get(r, "folds"), 2);
  }
  eo.folds.seed = app::parse_seed(get(r, "seed"));
  if ((s.data_path == "-") + (s.test_path == "-") > 1)
    throw app::option_error("test", "standard input (-) can be given to one file option only");

  eo.backend = app::run_options(r, err);

  s.format = get(r, "format");
  if (s.format != "csv" && s.format != "json")
    throw app::option_error("format", "unknown format " + quote(s.format) + " (expected csv or json)");
  s.output = get(r, "output");
  check_destination("output", s.output);
  if (r.count("plot")) {
    s.plot = get(r, "plot");
    if (s.plot == "-") throw app::option_error("plot", "needs a file name ending in .svg or .png, not standard output");
    s.image = image_type(s.plot);
    check_destination("plot", s.plot);
    s.gnuplot = find_gnuplot(s.plot);
  }
  if (r.count("save-folds")) {
    s.save_folds = get(r, "save-folds");
    if (eo.folds.kind == FoldSpec::Kind::test)
      throw app::option_error("save-folds", quote(s.save_folds) + ": there are no folds with --test (every row of --data trains the model)");
    check_destination("save-folds", s.save_folds);
  }
  // Each result goes to a file of its own.
  const std::pair<const char*, std::string> dest[] = {{"output", s.output}, {"plot", s.plot}, {"save-folds", s.save_folds}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = i + 1; j < 3; ++j)
      if (!dest[i].second.empty() && !dest[j].second.empty() && same_file(dest[i].second, dest[j].second))
        throw app::option_error(dest[j].first, quote(dest[j].second) + " is also the file of --" + dest[i].first);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Output

bool several_combinations(const EvalOptions& eo) { return eo.weights.size() > 1 || eo.metrics.size() > 1; }

const char* validation_name(FoldSpec::Kind kind) {
  switch (kind) {
    case FoldSpec::Kind::kfold: return "k-fold";
    case FoldSpec::Kind::loo: return "leave-one-out";
    case FoldSpec::Kind::test: return "test file";
  }
  return "?";
}

std::string csv_table(const EvalResult& res, const EvalOptions& eo) {
  const bool combos = several_combinations(eo);
  std::ostringstream s;
  if (combos) s << "weights,metric,";
  s << 'k';
  for (const auto& name : res.score_names) s << ',' << name << "_mean," << name << "_std";
  s << '\n';
  for (const SweepRow& row : res.rows) {
    if (combos) s << csv_field(row.weights.to_string()) << ',' << to_string(row.metric) << ',';
    s << row.k;
    for (const Score& sc : row.scores) s << ',' << format_double(sc.mean) << ',' << format_double(sc.std);
    s << '\n';
  }
  return s.str();
}

std::string json_row(const EvalResult& res, const SweepRow& row) {
  std::ostringstream s;
  s << "{\"weights\": " << app::json_string(row.weights.to_string()) << ", \"metric\": \"" << to_string(row.metric)
    << "\", \"k\": " << row.k;
  for (std::size_t i = 0; i < res.score_names.size(); ++i)
    s << ", \"" << res.score_names[i] << "_mean\": " << app::json_number(row.scores[i].mean) << ", \""
      << res.score_names[i] << "_std\": " << app::json_number(row.scores[i].std);
  s << '}';
  return s.str();
}

std::string json_document(const EvalResult& res, const Settings& st, const Dataset& data) {
  const EvalOptions& eo = st.eval;
  const bool kfold = eo.folds.kind == FoldSpec::Kind::kfold;
  std::ostringstream s;
  s << "{\"settings\": {\"data\": " << app::json_string(st.data_path) << ", \"rows\": " << data.all_rows()
    << ", \"features\": " << data.dims() << ", \"label\": " << app::json_string(data.label_name)
    << ", \"task\": \"" << to_string(eo.task) << "\",\n  \"validation\": \"" << validation_name(eo.folds.kind)
    << "\", \"folds\": " << res.folds << ", \"stratified\": " << (kfold && eo.task == Task::classify ? "true" : "false")
    << ", \"seed\": " << (kfold ? std::to_string(eo.folds.seed) : std::string("null"))
    << ", \"test\": " << (st.test_path.empty() ? std::string("null") : app::json_string(st.test_path))
    << ",\n  \"scale\": \"" << to_string(eo.scaling) << "\", \"k\": [";
  for (std::size_t i = 0; i < eo.ks.size(); ++i) s << (i ? ", " : "") << eo.ks[i];
  s << "], \"weights\": [";
  for (std::size_t i = 0; i < eo.weights.size(); ++i) s << (i ? ", " : "") << app::json_string(eo.weights[i].to_string());
  s << "], \"metrics\": [";
  for (std::size_t i = 0; i < eo.metrics.size(); ++i) s << (i ? ", " : "") << '"' << to_string(eo.metrics[i]) << '"';
  s << "]},\n \"scores\": [";
  for (std::size_t i = 0; i < res.score_names.size(); ++i) s << (i ? ", " : "") << '"' << res.score_names[i] << '"';
  s << ']';
  if (eo.task == Task::classify) {
    s << ", \"classes\": [";
    for (std::size_t i = 0; i < res.classes.size(); ++i) s << (i ? ", " : "") << app::json_string(res.classes[i]);
    s << ']';
  }
  s << ",\n \"best\": " << json_row(res, res.rows[res.best]) << ",\n \"rows\": [";
  for (std::size_t i = 0; i < res.rows.size(); ++i) s << (i ? ",\n  " : "\n  ") << json_row(res, res.rows[i]);
  s << "\n]}\n";
  return s.str();
}

std::string best_line(const EvalResult& res) {
  const SweepRow& b = res.rows[res.best];
  std::ostringstream s;
  s << "best: k = " << b.k << ", " << res.score_names[0] << ' ' << format_double(b.scores[0].mean) << " (std "
    << format_double(b.scores[0].std) << "), weights " << b.weights.to_string() << ", metric " << to_string(b.metric)
    << '\n';
  return s.str();
}

std::string folds_csv(const Dataset& data, const EvalOptions& eo) {
  std::vector<int> fold;
  if (distributed(eo.backend.comm.get())) {
    // Sharded: the folds are planned over the labels of every rank's rows, as evaluate() does.
    Dataset all;
    all.labels = gather_labels(*eo.backend.comm, data.labels);
    all.features.rows = data.all_rows();
    EvalOptions one = eo;
    one.backend.comm = nullptr;
    return folds_csv(all, one);
  }
  if (eo.folds.kind == FoldSpec::Kind::loo) {
    fold.resize(data.size());
    for (std::size_t i = 0; i < fold.size(); ++i) fold[i] = static_cast<int>(i);
  } else if (eo.task == Task::classify) {
    // The same stratification as knn::evaluate: class ids in the encoder's sorted order.
    LabelEncoder enc;
    enc.fit(data.labels);
    const std::vector<int> classes = enc.encode(data.labels);
    fold = assign_folds(data.size(), &classes, eo.folds.folds, eo.folds.seed);
  } else {
    fold = assign_folds(data.size(), nullptr, eo.folds.folds, eo.folds.seed);
  }
  std::string s = "row,fold\n";
  for (std::size_t i = 0; i < fold.size(); ++i) s += std::to_string(i) + ',' + std::to_string(fold[i]) + '\n';
  return s;
}

// ---------------------------------------------------------------------------------------------
// Plot through gnuplot

class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "k-sweep-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw app::option_error("plot", "cannot make a temporary folder in " + quote(base.string()) + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A gnuplot string literal in double quotes; a newline in `text` becomes gnuplot's line break.
std::string gp_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c < 0x20 ? '?' : static_cast<char>(c);
  }
  return out + '"';
}

std::string read_binary(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw app::option_error("plot", "cannot write " + quote(p.string()));
}

// "#rrggbb" mixed with white: `amount` of the colour, the rest white.
std::string tint(const std::string& color, double amount) {
  char buf[8];
  unsigned rgb = static_cast<unsigned>(std::strtoul(color.c_str() + 1, nullptr, 16));
  unsigned out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const double c = static_cast<double>((rgb >> shift) & 0xffu);
    out |= static_cast<unsigned>(std::lround(255.0 - amount * (255.0 - c))) << shift;
  }
  std::snprintf(buf, sizeof buf, "#%06x", out);
  return buf;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void run_gnuplot(const std::string& program, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::string arg0 = program, arg1 = script.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw app::option_error("plot", "cannot run gnuplot " + quote(program) + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw app::option_error("plot", "lost gnuplot " + quote(program) + ": " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string first;
  std::istringstream lines(read_binary(log));
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" \t^") != std::string::npos) {
      first = line;
      if (line.find("line") != std::string::npos) break;  // gnuplot's "..., line N: what" is the useful one
    }
  throw app::option_error("plot", "gnuplot " + quote(program) + " failed" + (first.empty() ? std::string() : ": " + quote(first)));
}

std::string plot_image(const EvalResult& res, const Settings& st) {
  const EvalOptions& eo = st.eval;
  const bool cls = eo.task == Task::classify;
  const std::string score = cls ? "accuracy" : "RMSE";
  TempDir tmp;
  const fs::path data_file = tmp.path() / "sweep.dat", script_file = tmp.path() / "sweep.gp",
                 log_file = tmp.path() / "gnuplot.log", best_file = tmp.path() / "best.dat",
                 image_file = tmp.path() / (st.image == ImageType::svg ? "sweep.svg" : "sweep.png");

  // One data block per combination (blocks separated by two blank lines: gnuplot's `index`).
  const std::size_t per_combo = eo.ks.size(), combos = res.rows.size() / per_combo;
  std::ostringstream dat;
  for (std::size_t c = 0; c < combos; ++c) {
    if (c) dat << "\n\n";
    dat << "# " << res.rows[c * per_combo].weights.to_string() << ' ' << to_string(res.rows[c * per_combo].metric)
        << "\n# k mean std\n";
    for (std::size_t i = 0; i < per_combo; ++i) {
      const SweepRow& row = res.rows[c * per_combo + i];
      dat << row.k << ' ' << format_double(row.scores[0].mean) << ' ' << format_double(row.scores[0].std) << '\n';
    }
  }
  write_text(data_file, dat.str());
  const SweepRow& best = res.rows[res.best];
  write_text(best_file, std::to_string(best.k) + ' ' + format_double(best.scores[0].mean) + '\n');

  std::string how;
  switch (eo.folds.kind) {
    case FoldSpec::Kind::kfold:
      how = std::to_string(res.folds) + "-fold cross-validation (" + (cls ? "stratified, " : "") + "seed " +
            std::to_string(eo.folds.seed) + ")";
      break;
    case FoldSpec::Kind::loo: how = "leave-one-out (pooled)"; break;
    case FoldSpec::Kind::test: how = "test file " + st.test_path; break;
  }
  how += eo.scaling == Scaling::minmax ? ", min-max scaling" : eo.scaling == Scaling::standard ? ", standard scaling" : ", no scaling";
  if (eo.folds.kind == FoldSpec::Kind::kfold) how += "; band: mean +/- 1 standard deviation over folds";

  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
  std::ostringstream gp;
  gp << "# k-sweep plot: score against k\n";
  if (st.image == ImageType::svg) {
    gp << "set terminal svg size 960,600 dynamic noenhanced font 'Sans,13' background rgb 'white'\n";
  } else {
    // pngcairo draws smoother lines than the libgd png terminal; use it when this gnuplot has it.
    gp << "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
          "  set terminal pngcairo size 1200,750 noenhanced font 'Sans,13' background rgb 'white'\n"
          "} else {\n"
          "  set terminal png size 1200,750 noenhanced background rgb 'white'\n"
          "}\n";
  }
  gp << "set output " << gp_string(image_file.string()) << "\n"
     << "set encoding utf8\n"
     << "set title " << gp_string("k-sweep of " + st.data_path + "\n" + how) << "\n";
  gp << "set xlabel 'k (number of neighbours)'\n"
     << "set ylabel " << gp_string(score + (eo.folds.kind == FoldSpec::Kind::kfold ? " (mean over folds)" : "")) << "\n"
     << "set grid back lc rgb '#dddddd'\n"
     << "set border 3 back\nset tics nomirror\n"
     << "set key at screen 0.5, screen 0.015 center bottom horizontal samplen 2 width 2 maxrows " << (combos > 2 ? 2 : 1) << "\n"
     << "set bmargin " << (combos > 2 ? 7 : 5.5) << "\n"
     << "set autoscale xfix\n"
     << "set style textbox opaque noborder margins 2,2\n"
     // Several bands overlap, so they are see-through; a single one is drawn in a solid light tint,
     // which every SVG viewer shows the same.
     << "set style fill " << (combos > 1 ? "transparent solid 0.08" : "solid 1.0") << " noborder\n"
     << "set offsets graph 0.02, graph 0.02, graph " << (cls ? "0.14" : "0.05") << ", graph " << (cls ? "0.05" : "0.14")
     << "\n";
  if (eo.ks.size() == 1) gp << "set xrange [" << eo.ks.front() - 1 << ':' << eo.ks.front() + 1 << "]\n";
  std::string best_text = "best k = " + std::to_string(best.k) + ": " + score + " " + short_number(best.scores[0].mean);
  if (combos > 1) best_text += " (" + best.weights.to_string() + ", " + to_string(best.metric) + ")";
  gp << "set label 1 " << gp_string(best_text)
     << " at " << best.k << ", " << format_double(best.scores[0].mean) << " center offset 0," << (cls ? "1.6" : "-1.6")
     << " front boxed textcolor rgb '#000000'\n";
  gp << "plot ";
  for (std::size_t c = 0; c < combos; ++c) {
    const SweepRow& first = res.rows[c * per_combo];
    const std::string color = colors[c % (sizeof colors / sizeof colors[0])];
    const std::string name = first.weights.to_string() + ", " + to_string(first.metric);
    gp << (c ? ", \\\n     " : "") << gp_string(data_file.string()) << " index " << c
       << " using 1:($2-$3):($2+$3) with filledcurves lc rgb '" << (combos > 1 ? color : tint(color, 0.18)) << "' "
       << (combos == 1 && eo.folds.kind == FoldSpec::Kind::kfold ? "title '+/- 1 standard deviation'" : "notitle")
       << ", \\\n     '' index " << c << " using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '" << color << "' title "
       << gp_string(combos == 1 ? "mean " + score + " (" + name + ")" : name);
  }
  gp << ", \\\n     " << gp_string(best_file.string())
     << " using 1:2 with points pt 7 ps 2.2 lc rgb '#000000' title 'best k'\n"
     << "set output\n";
  write_text(script_file, gp.str());

  run_gnuplot(st.gnuplot, script_file, log_file);
  std::error_code ec;
  if (!fs::exists(image_file, ec) || fs::file_size(image_file, ec) == 0)
    throw app::option_error("plot", "gnuplot " + quote(st.gnuplot) + " made no image");
  return read_binary(image_file);
}

// Writes one result: "-" to `out`; an existing file that is not a regular file (/dev/null, a
// pipe) directly, since renaming a temporary file over it would replace it; otherwise whole or not
// at all through knn::write_file_atomic.
void write_result(const std::string& path, const std::string& content, std::ostream& out) {
  if (path == "-") {
    out << content << std::flush;
    return;
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!ec && fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status)) {
    std::ofstream f(path, std::ios::binary);
    f << content;
    f.close();
    if (!f) throw Error::at(path, 0, 0, "write failed");
    return;
  }
  write_file_atomic(path, content);
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out_stream, std::ostream& err_stream) {
  // Under mpirun every rank computes; rank 0 alone writes results and messages.
  const auto comm = mpi::world();
  std::ostream null_stream(nullptr);
  std::ostream& out = comm && comm->rank() > 0 ? null_stream : out_stream;
  std::ostream& err = comm && comm->rank() > 0 ? null_stream : err_stream;
  return app::guarded(kProg, err, [&]() -> int {
    auto options = make_options();
    const char* const fallback[] = {kProg};
    const cxxopts::ParseResult r =
        argc > 0 ? app::parse_arguments(options, argc, argv, "see k-sweep --help") : app::parse_arguments(options, 1, fallback, "see k-sweep --help");
    if (r.count("help")) {
      out << options.help({"input", "folds", "sweep", "run", "output", ""}) << kExamples;
      return 0;
    }
    if (r.count("version")) {
      out << kProg << ' ' << version() << (built_with_cuda() ? " (CPU and CUDA backends)" : " (CPU backend)") << '\n';
      return 0;
    }
    if (!r.unmatched().empty()) throw Error("unexpected argument " + quote(r.unmatched().front()) + " (options start with --)");

    Settings st = read_settings(r, err);
    st.eval.backend.comm = comm;
    const Dataset data = load_csv_sharded(st.data_path, st.csv, comm.get());
    Dataset test;
    if (st.eval.folds.kind == FoldSpec::Kind::test) {
      collective(comm.get(), [&] { test = load_query_csv(st.test_path, st.csv, data); });
      st.eval.folds.test = &test;
    }
    app::Progress progress(err, "folds");
    st.eval.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    EvalResult res;
    try {
      res = evaluate(data, st.eval);
    } catch (...) {
      progress.finish();
      throw;
    }
    progress.finish();

    const std::string folds = st.save_folds.empty() ? std::string() : folds_csv(data, st.eval);
    if (comm && comm->rank() > 0) return 0;
    // Everything is made before anything is written.
    const std::string table = st.format == "json" ? json_document(res, st, data) : csv_table(res, st.eval);
    const std::string image = st.plot.empty() ? std::string() : plot_image(res, st);

    if (!st.plot.empty()) write_result(st.plot, image, out);
    if (!st.save_folds.empty()) write_result(st.save_folds, folds, out);
    write_result(st.output, table, out);
    err << best_line(res);
    return 0;
  });
}

}  // namespace knn::sweep
