// knn-cli: results on the shipped data sets, values computed by hand on tiny files, the bad-input
// contract of docs/design.md#errors (exit code 2, one "knn-cli: error:" line naming the option or
// file:line:column and quoting the value, nothing on stdout, no output file) and the CSV
// variants that must read the same as a plain file. Most tests call knn::cli::run in-process; a
// few run the built knn-cli binary to check exit codes, the two streams and standard input.
//
// Small inputs live in tests/cli_cases/ (see its README.md); variants of them (BOM, CRLF, ...)
// are written to a temporary folder by the tests.
#include <gtest/gtest.h>

#include "app_runner.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "output_writer.hpp"

#ifndef KNN_SOURCE_DIR
#error "KNN_SOURCE_DIR must be defined as the repository root"
#endif
#ifndef KNN_CLI_PATH
#error "KNN_CLI_PATH must be defined as the path of the built knn-cli"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kSource = KNN_SOURCE_DIR;
const std::string kCli = KNN_CLI_PATH;

std::string data_file(const std::string& name) { return kSource + "/data/" + name; }
std::string case_file(const std::string& name) { return kSource + "/tests/cli_cases/" + name; }

using knn::test::temp_dir;
using knn::test::write_temp;
using knn::test::read_file;
using knn::test::shell_quote;

// ---------------------------------------------------------------------------------------------
// Running knn-cli.

using CliResult = knn::test::AppResult;

// In-process: argv[0] is "knn-cli", then `args`.
CliResult cli(const std::vector<std::string>& args) { return knn::test::run_app(knn::cli::run, "knn-cli", args); }

// Like cli(), failing the test unless the command succeeds quietly.
std::string cli_ok(const std::vector<std::string>& args) {
  const CliResult r = cli(args);
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  return r.out;
}

// Like cli(), failing the test unless the command is refused (exit 2) with `message` in its
// standard error.
CliResult cli_refused(const std::vector<std::string>& args, const std::string& message) {
  const CliResult r = cli(args);
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find(message), std::string::npos) << "expected: " << message << "\n" << r;
  return r;
}

// As a subprocess: `shell_prefix` (e.g. "cat f |") then knn-cli with `args`; stdout and stderr
// are captured separately.
CliResult cli_process(const std::vector<std::string>& args, const std::string& shell_prefix = "") {
  return knn::test::run_process(kCli, args, shell_prefix);
}

// ---------------------------------------------------------------------------------------------
// Reading outputs.

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = s.find(sep, b);
    parts.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return parts;
    b = e + 1;
  }
}

// Lines of an output that must end with a newline.
std::vector<std::string> lines_of(const std::string& text) {
  EXPECT_TRUE(!text.empty() && text.back() == '\n') << "output does not end with a newline:\n" << text;
  std::vector<std::string> l = split(text, '\n');
  if (!l.empty() && l.back().empty()) l.pop_back();
  return l;
}

double to_double(const std::string& s) {
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size()) throw std::runtime_error("not a number: " + s);
  return v;
}

// Plain CSV rows (no quoting) of an output.
std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : lines_of(text)) rows.push_back(split(l, ','));
  return rows;
}

// A minimal JSON reader, enough for knn-cli's outputs.
struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  double number = 0.0;
  bool boolean = false;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  bool has(const std::string& key) const {
    for (const auto& kv : object)
      if (kv.first == key) return true;
    return false;
  }
  const Json& operator[](const std::string& key) const {
    if (type != Type::object) throw std::runtime_error("not an object, looking up " + key);
    for (const auto& kv : object)
      if (kv.first == key) return kv.second;
    throw std::runtime_error("no key " + key);
  }
  const Json& operator[](std::size_t i) const {
    if (type != Type::array) throw std::runtime_error("not an array");
    return array.at(i);
  }
  std::size_t size() const { return type == Type::array ? array.size() : object.size(); }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : s_(text) {}
  Json document() {
    Json v = value();
    skip();
    if (i_ != s_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(i_));
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string str() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) fail("bad escape");
        const char e = s_[i_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'u':
            if (i_ + 4 > s_.size()) fail("bad \\u escape");
            c = static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
            i_ += 4;
            break;
          default: c = e;
        }
      }
      out += c;
    }
    expect('"');
    return out;
  }
  Json value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::object;
      if (eat('}')) return v;
      do {
        skip();
        std::string key = str();
        expect(':');
        v.object.emplace_back(std::move(key), value());
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::array;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::Type::string;
      v.string = str();
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      v.type = Json::Type::boolean;
      v.boolean = s_[i_] == 't';
      i_ += v.boolean ? 4 : 5;
    } else {
      const std::size_t b = i_;
      while (i_ < s_.size() && std::string("+-0123456789.eE").find(s_[i_]) != std::string::npos) ++i_;
      if (b == i_) fail("unexpected character");
      v.type = Json::Type::number;
      v.number = to_double(s_.substr(b, i_ - b));
    }
    return v;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

Json parse_json(const std::string& text) { return JsonReader(text).document(); }

// Checks a neighbors CSV output: header, k rows per query in query order, ranks 1..k, valid
// indices, distances ascending and equal distances in ascending index order. Returns the rows as
// (index, distance) per query.
std::vector<std::vector<std::pair<long, double>>> check_neighbors(const std::string& text, std::size_t queries,
                                                                  std::size_t k, std::size_t train_rows) {
  const auto rows = rows_of(text);
  std::vector<std::vector<std::pair<long, double>>> nb(queries);
  EXPECT_EQ(rows.size(), 1 + queries * k);
  if (rows.size() != 1 + queries * k) return nb;
  EXPECT_EQ(rows[0], (std::vector<std::string>{"query", "rank", "index", "distance"}));
  for (std::size_t q = 0; q < queries; ++q) {
    for (std::size_t j = 0; j < k; ++j) {
      const auto& r = rows[1 + q * k + j];
      EXPECT_EQ(r.size(), 4u);
      if (r.size() != 4) continue;
      EXPECT_EQ(r[0], std::to_string(q));
      EXPECT_EQ(r[1], std::to_string(j + 1));
      const long idx = std::stol(r[2]);
      const double d = to_double(r[3]);
      EXPECT_GE(idx, 0);
      EXPECT_LT(idx, static_cast<long>(train_rows));
      EXPECT_GE(d, 0.0);
      if (j > 0) {
        const auto& prev = nb[q].back();
        EXPECT_LE(prev.second, d) << "query " << q << " rank " << j + 1 << ": distances not ascending";
        if (prev.second == d) {
          EXPECT_LT(prev.first, idx) << "query " << q << " rank " << j + 1 << ": equal distances not in index order";
        }
      }
      nb[q].emplace_back(idx, d);
    }
  }
  return nb;
}

// The rows of a CSV data file (header first), split on commas.
std::vector<std::vector<std::string>> read_csv_rows(const std::string& path) { return rows_of(read_file(path)); }

std::string join(const std::vector<std::string>& v, const std::string& sep = ",") {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// Writes a file of chosen rows (0-based data rows) of a CSV data file; `drop_last` leaves the
// label column out.
std::string write_rows(const std::string& name, const std::string& source, const std::vector<std::size_t>& rows,
                       bool drop_last) {
  const auto all = read_csv_rows(source);
  auto pick = [&](std::vector<std::string> r) {
    if (drop_last) r.pop_back();
    return join(r) + "\n";
  };
  std::string text = pick(all[0]);
  for (std::size_t i : rows) text += pick(all.at(i + 1));
  return write_temp(name, text);
}

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

// =============================================================================================
// Real data sets.

TEST(CliPredict, OneRowPerQueryInQueryOrder) {
  // Rows 100, 0, 50, 101, 1, 51 of iris (virginica, setosa, versicolor, ...) without the label:
  // with k = 1 each is its own nearest row, so the predictions are the true labels, in this order.
  const std::string q = write_rows("iris_order.csv", data_file("iris.csv"), {100, 0, 50, 101, 1, 51}, true);
  const std::string out = cli_ok({"predict", "--train", data_file("iris.csv"), "--query", q, "-k", "1"});
  EXPECT_EQ(out, "prediction\nvirginica\nsetosa\nversicolor\nvirginica\nsetosa\nversicolor\n");
}

TEST(CliPredict, IrisOnItselfWithKOneGivesTheLabels) {
  // Iris has one duplicated row and both copies have the same class: every row's nearest row is
  // at distance 0 with its own label.
  const std::string out = cli_ok({"predict", "--train", data_file("iris.csv"), "--query", data_file("iris.csv"), "-k", "1"});
  const auto lines = lines_of(out);
  const auto truth = read_csv_rows(data_file("iris.csv"));
  ASSERT_EQ(lines.size(), 151u);
  EXPECT_EQ(lines[0], "prediction");
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i], truth[i].back()) << "row " << i - 1;
}

TEST(CliPredict, WineAccuracyAndJsonAgree) {
  const std::vector<std::string> base{"predict", "--train", data_file("wine.csv"), "--query", data_file("wine.csv"), "-k", "5"};
  const auto lines = lines_of(cli_ok(base));
  const auto truth = read_csv_rows(data_file("wine.csv"));
  ASSERT_EQ(lines.size(), truth.size());
  std::size_t hit = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) hit += lines[i] == truth[i].back();
  // Resubstitution accuracy of 5-NN on min-max scaled wine is about 0.96.
  EXPECT_GT(static_cast<double>(hit) / 178.0, 0.93);
  EXPECT_LT(hit, 178u);

  auto json_args = base;
  json_args.insert(json_args.end(), {"--format", "json"});
  const Json j = parse_json(cli_ok(json_args));
  EXPECT_EQ(j["task"].string, "classify");
  EXPECT_EQ(j["k"].number, 5.0);
  ASSERT_EQ(j["classes"].size(), 3u);
  EXPECT_EQ(j["classes"][0].string, "class_0");
  EXPECT_EQ(j["classes"][2].string, "class_2");
  ASSERT_EQ(j["predictions"].size(), 178u);
  for (std::size_t i = 0; i < 178; ++i) EXPECT_EQ(j["predictions"][i].string, lines[i + 1]);
}

void check_proba(const std::vector<std::string>& args, std::size_t queries, const std::vector<std::string>& classes) {
  auto with = args;
  with.push_back("--proba");
  const auto rows = rows_of(cli_ok(with));
  const auto plain = lines_of(cli_ok(args));
  ASSERT_EQ(rows.size(), queries + 1);
  ASSERT_EQ(plain.size(), queries + 1);
  std::vector<std::string> header{"prediction"};
  for (const auto& c : classes) header.push_back("p_" + c);
  ASSERT_EQ(rows[0], header);
  std::set<std::string> seen;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), classes.size() + 1);
    double sum = 0.0;
    std::size_t best = 0;
    for (std::size_t c = 0; c < classes.size(); ++c) {
      const double p = to_double(rows[i][c + 1]);
      EXPECT_GE(p, 0.0);
      EXPECT_LE(p, 1.0);
      sum += p;
      if (p > to_double(rows[i][best + 1])) best = c;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << i;
    EXPECT_EQ(rows[i][0], classes[best]) << "row " << i << ": prediction is not the class of largest share";
    EXPECT_EQ(rows[i][0], plain[i]) << "row " << i << ": --proba changed the prediction";
    seen.insert(rows[i][0]);
  }
  EXPECT_GT(seen.size(), 1u);
}

TEST(CliPredict, ProbaColumnsSumToOneAndArgmaxIsThePrediction) {
  check_proba({"predict", "--train", data_file("wine.csv"), "--query", data_file("wine.csv"), "-k", "7", "--weights", "distance"},
              178, {"class_0", "class_1", "class_2"});
  // Rows 0, 3, 6, ... of iris as queries against the others: some queries get mixed votes.
  std::vector<std::size_t> test_rows, train_rows;
  for (std::size_t i = 0; i < 150; ++i) (i % 3 == 0 ? test_rows : train_rows).push_back(i);
  const std::string tr = write_rows("iris_train_part.csv", data_file("iris.csv"), train_rows, false);
  const std::string te = write_rows("iris_test_part.csv", data_file("iris.csv"), test_rows, false);
  check_proba({"predict", "--train", tr, "--query", te, "-k", "15"}, 50, {"setosa", "versicolor", "virginica"});
  check_proba({"predict", "--train", tr, "--query", te, "-k", "15", "--weights", "gaussian:0.2", "--metric", "l1"}, 50,
              {"setosa", "versicolor", "virginica"});
}

TEST(CliPredict, RegressionOnDiabetesIsCloseToTheTargets) {
  const std::string out = cli_ok({"predict", "--train", data_file("diabetes.csv"), "--query", data_file("diabetes.csv"),
                                  "--task", "regress", "-k", "10"});
  const auto lines = lines_of(out);
  const auto truth = read_csv_rows(data_file("diabetes.csv"));
  ASSERT_EQ(lines.size(), 443u);
  EXPECT_EQ(lines[0], "prediction");
  double se = 0.0, lo = 1e300, hi = -1e300;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const double p = to_double(lines[i]);
    se += (p - to_double(truth[i].back())) * (p - to_double(truth[i].back()));
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  // A mean of 10 targets lies within the range of the targets (25..346).
  EXPECT_GE(lo, 25.0);
  EXPECT_LE(hi, 346.0);
  const double rmse = std::sqrt(se / 442.0);
  EXPECT_GT(rmse, 30.0);
  EXPECT_LT(rmse, 65.0);
}

TEST(CliNeighbors, IrisAgainstItself) {
  const std::string out =
      cli_ok({"neighbors", "--train", data_file("iris.csv"), "--query", data_file("iris.csv"), "-k", "3"});
  const auto nb = check_neighbors(out, 150, 3, 150);
  ASSERT_EQ(nb.size(), 150u);
  for (std::size_t q = 0; q < nb.size(); ++q) {
    ASSERT_EQ(nb[q].size(), 3u);
    // A query identical to a training row has that row at distance 0.
    EXPECT_EQ(nb[q][0].second, 0.0) << "query " << q;
    bool self = false;
    for (const auto& e : nb[q]) self = self || (e.first == static_cast<long>(q) && e.second == 0.0);
    EXPECT_TRUE(self) << "query " << q << " does not list its own row at distance 0";
    EXPECT_GT(nb[q][2].second, 0.0) << "query " << q;  // at most one duplicate in iris
  }
  // The duplicated pair (data rows 101 and 142) lists the smaller index first for both.
  EXPECT_EQ(nb[142][0].first, 101);
  EXPECT_EQ(nb[142][1].first, 142);
  EXPECT_EQ(nb[101][0].first, 101);
  EXPECT_EQ(nb[101][1].first, 142);
}

TEST(CliNeighbors, JsonMatchesCsv) {
  const std::vector<std::string> base{"neighbors", "--train", data_file("wine.csv"), "--query", data_file("wine.csv"), "-k", "4", "--metric", "l1"};
  const auto nb = check_neighbors(cli_ok(base), 178, 4, 178);
  auto j_args = base;
  j_args.insert(j_args.end(), {"--format", "json"});
  const Json j = parse_json(cli_ok(j_args));
  EXPECT_EQ(j["k"].number, 4.0);
  EXPECT_EQ(j["metric"].string, "l1");
  ASSERT_EQ(j["neighbors"].size(), 178u);
  for (std::size_t q = 0; q < 178; ++q) {
    const Json& e = j["neighbors"][q];
    EXPECT_EQ(e["query"].number, static_cast<double>(q));
    ASSERT_EQ(e["index"].size(), 4u);
    for (std::size_t r = 0; r < 4; ++r) {
      EXPECT_EQ(e["index"][r].number, static_cast<double>(nb[q][r].first));
      EXPECT_EQ(e["distance"][r].number, nb[q][r].second);
    }
  }
}

TEST(CliNeighbors, DuplicateRowsAreOrderedByTrainingIndex) {
  // ties.csv: rows 0, 2, 4 are (1,1); rows 1, 3 are (0,0); row 5 is (2,2). Min-max scaled, (1,1)
  // is (0.5,0.5): rows 1, 3 and 5 are all at sqrt(0.5) from it.
  const std::string out =
      cli_ok({"neighbors", "--train", case_file("ties.csv"), "--query", case_file("ties_query.csv"), "-k", "6"});
  const std::string h = knn::app::format_double(std::sqrt(0.5)), s2 = knn::app::format_double(std::sqrt(2.0));
  EXPECT_EQ(out, "query,rank,index,distance\n"
                 "0,1,0,0\n0,2,2,0\n0,3,4,0\n0,4,1," + h + "\n0,5,3," + h + "\n0,6,5," + h + "\n"
                 "1,1,1,0\n1,2,3,0\n1,3,0," + h + "\n1,4,2," + h + "\n1,5,4," + h + "\n1,6,5," + s2 + "\n");
}

TEST(CliNeighbors, ManyTiesKeepIndexOrderOnEveryThreadCount) {
  // 600 rows cycling through 3 points: every query has 200 training rows at each distance.
  std::string train = "a,b,label\n", query = "a,b\n";
  const char* pts[] = {"0,0", "1,0", "0,2"};
  for (int i = 0; i < 600; ++i) train += std::string(pts[(i * 7) % 3]) + (i % 2 ? ",x\n" : ",y\n");
  for (int i = 0; i < 5; ++i) query += std::string(pts[i % 3]) + "\n";
  const std::string tr = write_temp("many_ties.csv", train), q = write_temp("many_ties_query.csv", query);
  std::string first;
  for (const char* threads : {"1", "2"}) {
    const std::string out = cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "450", "--threads", threads});
    const auto nb = check_neighbors(out, 5, 450, 600);
    // Query 0 is (0,0): the 200 copies of (0,0) come first, in index order.
    ASSERT_EQ(nb[0].size(), 450u);
    EXPECT_EQ(nb[0][0].first, 0);
    EXPECT_EQ(nb[0][199].second, 0.0);
    EXPECT_GT(nb[0][200].second, 0.0);
    if (first.empty()) {
      first = out;
    } else {
      EXPECT_EQ(out, first) << "--threads 1 and --threads 2 differ";
    }
  }
}

// Summary lines "name   mean   std" of the default evaluate output.
std::map<std::string, std::pair<double, double>> summary_scores(const std::string& text) {
  std::map<std::string, std::pair<double, double>> m;
  for (const auto& l : lines_of(text)) {
    std::istringstream in(l);
    std::string name, mean, sd, extra;
    if (!(in >> name >> mean >> sd) || (in >> extra)) continue;
    try {
      m[name] = {to_double(mean), to_double(sd)};
    } catch (const std::exception&) {
    }
  }
  return m;
}

TEST(CliEvaluate, SummaryListsClassificationScores) {
  const std::string out = cli_ok({"evaluate", "--train", data_file("iris.csv"), "-k", "5"});
  const auto s = summary_scores(out);
  for (const char* name : {"accuracy", "balanced_accuracy", "f1_macro"}) {
    ASSERT_TRUE(s.count(name)) << name << " missing from\n" << out;
    EXPECT_GT(s.at(name).first, 0.9) << name;
    EXPECT_LE(s.at(name).first, 1.0) << name;
    EXPECT_GE(s.at(name).second, 0.0) << name;
    EXPECT_LT(s.at(name).second, 0.1) << name;
  }
  EXPECT_EQ(s.count("rmse"), 0u);
  EXPECT_NE(out.find("150 rows"), std::string::npos) << out;
  EXPECT_NE(out.find("3 classes"), std::string::npos) << out;
  EXPECT_NE(out.find("seed 42"), std::string::npos) << out;

  // The summary shows the same means as the JSON output, to 4 decimals.
  const Json j = parse_json(cli_ok({"evaluate", "--train", data_file("iris.csv"), "-k", "5", "--format", "json"}));
  for (const char* name : {"accuracy", "balanced_accuracy", "f1_macro"}) {
    EXPECT_NEAR(s.at(name).first, j["metrics"][name]["mean"].number, 0.00005001) << name;
    EXPECT_NEAR(s.at(name).second, j["metrics"][name]["std"].number, 0.00005001) << name;
  }
}

TEST(CliEvaluate, SummaryListsRegressionScores) {
  const std::string out = cli_ok({"evaluate", "--train", data_file("diabetes.csv"), "--task", "regress", "-k", "15"});
  const auto s = summary_scores(out);
  for (const char* name : {"rmse", "mae", "r2"}) ASSERT_TRUE(s.count(name)) << name << " missing from\n" << out;
  EXPECT_EQ(s.count("accuracy"), 0u);
  // 15-NN on diabetes: RMSE about 57, R^2 about 0.45.
  EXPECT_GT(s.at("rmse").first, 45.0);
  EXPECT_LT(s.at("rmse").first, 70.0);
  EXPECT_LT(s.at("mae").first, s.at("rmse").first);
  EXPECT_GT(s.at("r2").first, 0.25);
  EXPECT_LT(s.at("r2").first, 0.65);
  EXPECT_EQ(out.find("confusion"), std::string::npos);
}

void check_eval_json(const Json& j, const std::string& task, double k, double folds, std::size_t scored_rows,
                     const std::vector<std::string>& labels) {
  EXPECT_EQ(j["task"].string, task);
  EXPECT_EQ(j["k"].number, k);
  EXPECT_EQ(j["folds"].number, folds);
  const std::vector<std::string> names = task == "classify" ? std::vector<std::string>{"accuracy", "balanced_accuracy", "f1_macro"}
                                                            : std::vector<std::string>{"rmse", "mae", "r2"};
  ASSERT_EQ(j["metrics"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["metrics"].object[i].first, names[i]);
    const Json& m = j["metrics"][names[i]];
    EXPECT_EQ(m["mean"].type, Json::Type::number) << names[i];
    EXPECT_EQ(m["std"].type, Json::Type::number) << names[i];
    EXPECT_GE(m["std"].number, 0.0) << names[i];
  }
  if (task != "classify") {
    EXPECT_FALSE(j.has("confusion_matrix"));
    return;
  }
  const Json& cm = j["confusion_matrix"];
  ASSERT_EQ(cm["labels"].size(), labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(cm["labels"][i].string, labels[i]);
  ASSERT_EQ(cm["counts"].size(), labels.size());
  double total = 0.0, diagonal = 0.0;
  for (std::size_t t = 0; t < labels.size(); ++t) {
    ASSERT_EQ(cm["counts"][t].size(), labels.size());
    for (std::size_t p = 0; p < labels.size(); ++p) total += cm["counts"][t][p].number;
    diagonal += cm["counts"][t][t].number;
  }
  EXPECT_EQ(total, static_cast<double>(scored_rows));
  // Pooled over the rows: the diagonal's share is the accuracy over all scored rows, which for
  // k-fold is close to the mean of the folds' accuracies (equal to it for LOO and a test file).
  const double pooled = diagonal / static_cast<double>(scored_rows);
  EXPECT_NEAR(pooled, j["metrics"]["accuracy"]["mean"].number, folds > 1 && folds < scored_rows ? 0.02 : 1e-12);
}

TEST(CliEvaluate, JsonKFold) {
  const Json j = parse_json(cli_ok({"evaluate", "--train", data_file("iris.csv"), "-k", "5", "--format", "json"}));
  check_eval_json(j, "classify", 5, 5, 150, {"setosa", "versicolor", "virginica"});
  EXPECT_EQ(j["validation"].string, "k-fold");
  EXPECT_EQ(j["rows"].number, 150.0);
  EXPECT_GT(j["metrics"]["accuracy"]["mean"].number, 0.9);

  const Json ten = parse_json(cli_ok({"evaluate", "--train", data_file("wine.csv"), "-k", "3", "--folds", "10", "--format", "json"}));
  check_eval_json(ten, "classify", 3, 10, 178, {"class_0", "class_1", "class_2"});
  EXPECT_GT(ten["metrics"]["accuracy"]["std"].number, 0.0);

  const Json reg = parse_json(cli_ok({"evaluate", "--train", data_file("diabetes.csv"), "--task", "regress", "-k", "15",
                                      "--folds", "4", "--format", "json"}));
  check_eval_json(reg, "regress", 15, 4, 442, {});
  EXPECT_GT(reg["metrics"]["rmse"]["mean"].number, reg["metrics"]["mae"]["mean"].number);
}

TEST(CliEvaluate, LeaveOneOut) {
  const Json j = parse_json(cli_ok({"evaluate", "--train", data_file("iris.csv"), "-k", "5", "--loo", "--format", "json"}));
  check_eval_json(j, "classify", 5, 150, 150, {"setosa", "versicolor", "virginica"});
  EXPECT_EQ(j["validation"].string, "leave-one-out");
  for (const char* name : {"accuracy", "balanced_accuracy", "f1_macro"}) EXPECT_EQ(j["metrics"][name]["std"].number, 0.0);
  EXPECT_GT(j["metrics"]["accuracy"]["mean"].number, 0.9);
  EXPECT_LT(j["metrics"]["accuracy"]["mean"].number, 1.0);
}

// A class of one row cannot be predicted once that row is held out: k folds and leave-one-out
// say so in one note naming the class; a class of two rows, and a test file, give none.
TEST(CliEvaluate, SingleRowClassesGetANote) {
  std::string text = "x,y,label\n";
  for (int i = 0; i < 12; ++i) text += std::to_string(i % 4) + "," + std::to_string(i / 4) + (i % 2 ? ",odd\n" : ",even\n");
  text += "9,9,lonely\n8,8,pair\n8,9,pair\n";
  const std::string data = write_temp("single_row_class.csv", text);
  for (const std::vector<std::string>& mode : {std::vector<std::string>{"--folds", "3"}, std::vector<std::string>{"--loo"}}) {
    std::vector<std::string> args = {"evaluate", "--train", data, "-k", "1"};
    args.insert(args.end(), mode.begin(), mode.end());
    const CliResult r = cli(args);
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_NE(r.err.find("note: 1 class of " + data + " has a single row (\"lonely\"): held out"), std::string::npos) << r;
    EXPECT_EQ(r.err.find("pair"), std::string::npos) << r;
  }
  const CliResult with_test = cli({"evaluate", "--train", data, "--test", data, "-k", "1"});
  ASSERT_EQ(with_test.code, 0) << with_test;
  EXPECT_EQ(with_test.err.find("single row"), std::string::npos) << with_test;
}

TEST(CliEvaluate, TestFileAgreesWithPredict) {
  std::vector<std::size_t> test_rows, train_rows;
  for (std::size_t i = 0; i < 150; ++i) (i % 3 == 0 ? test_rows : train_rows).push_back(i);
  const std::string tr = write_rows("iris_train_eval.csv", data_file("iris.csv"), train_rows, false);
  const std::string te = write_rows("iris_test_eval.csv", data_file("iris.csv"), test_rows, false);
  const Json j = parse_json(cli_ok({"evaluate", "--train", tr, "--test", te, "-k", "7", "--format", "json"}));
  check_eval_json(j, "classify", 7, 1, 50, {"setosa", "versicolor", "virginica"});
  EXPECT_EQ(j["validation"].string, "test file");
  // The accuracy is the share of predict's answers that match the test file's labels.
  const auto pred = lines_of(cli_ok({"predict", "--train", tr, "--query", te, "-k", "7"}));
  const auto truth = read_csv_rows(te);
  ASSERT_EQ(pred.size(), 51u);
  std::size_t hit = 0;
  for (std::size_t i = 1; i <= 50; ++i) hit += pred[i] == truth[i].back();
  EXPECT_EQ(j["metrics"]["accuracy"]["mean"].number, static_cast<double>(hit) / 50.0);
  EXPECT_GT(hit, 40u);

  // Regression: RMSE and MAE of predict's values against the test targets.
  std::vector<std::size_t> dtest, dtrain;
  for (std::size_t i = 0; i < 442; ++i) (i % 4 == 1 ? dtest : dtrain).push_back(i);
  const std::string rtr = write_rows("diabetes_train_eval.csv", data_file("diabetes.csv"), dtrain, false);
  const std::string rte = write_rows("diabetes_test_eval.csv", data_file("diabetes.csv"), dtest, false);
  const Json r = parse_json(cli_ok({"evaluate", "--train", rtr, "--test", rte, "--task", "regress", "-k", "9",
                                    "--weights", "distance", "--format", "json"}));
  check_eval_json(r, "regress", 9, 1, dtest.size(), {});
  const auto rp = lines_of(cli_ok({"predict", "--train", rtr, "--query", rte, "--task", "regress", "-k", "9", "--weights", "distance"}));
  const auto rt = read_csv_rows(rte);
  ASSERT_EQ(rp.size(), dtest.size() + 1);
  double se = 0.0, ae = 0.0;
  for (std::size_t i = 1; i < rp.size(); ++i) {
    const double e = to_double(rp[i]) - to_double(rt[i].back());
    se += e * e;
    ae += std::fabs(e);
  }
  const double n = static_cast<double>(dtest.size());
  EXPECT_NEAR(r["metrics"]["rmse"]["mean"].number, std::sqrt(se / n), 1e-9);
  EXPECT_NEAR(r["metrics"]["mae"]["mean"].number, ae / n, 1e-9);
}

TEST(CliEvaluate, CsvFormatMatchesJson) {
  const std::vector<std::string> base{"evaluate", "--train", data_file("breast_cancer.csv"), "-k", "9", "--folds", "3"};
  auto c = base, j = base;
  c.insert(c.end(), {"--format", "csv"});
  j.insert(j.end(), {"--format", "json"});
  const auto rows = rows_of(cli_ok(c));
  const Json js = parse_json(cli_ok(j));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"score", "mean", "std"}));
  const char* names[] = {"accuracy", "balanced_accuracy", "f1_macro"};
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(rows[i + 1].size(), 3u);
    EXPECT_EQ(rows[i + 1][0], names[i]);
    EXPECT_EQ(to_double(rows[i + 1][1]), js["metrics"][names[i]]["mean"].number);
    EXPECT_EQ(to_double(rows[i + 1][2]), js["metrics"][names[i]]["std"].number);
  }
  EXPECT_GT(js["metrics"]["accuracy"]["mean"].number, 0.9);
}

TEST(CliEvaluate, SameSeedSameBytesOtherSeedOtherFolds) {
  const std::vector<std::string> base{"evaluate", "--train", data_file("wine.csv"), "-k", "5", "--format", "json"};
  auto s7 = base, s8 = base;
  s7.insert(s7.end(), {"--seed", "7"});
  s8.insert(s8.end(), {"--seed", "8"});
  const std::string a = cli_ok(s7), b = cli_ok(s7), c = cli_ok(s8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c) << "a different seed should deal the rows to other folds";
  // Without --seed the default seed 42 is used: same as --seed 42.
  auto s42 = base;
  s42.insert(s42.end(), {"--seed", "42"});
  EXPECT_EQ(cli_ok(base), cli_ok(s42));
}

TEST(CliThreads, OneAndTwoThreadsGiveTheSameBytes) {
  const std::string bc = data_file("breast_cancer.csv");
  const std::vector<std::vector<std::string>> commands{
      {"predict", "--train", bc, "--query", bc, "-k", "9", "--weights", "distance", "--proba"},
      {"predict", "--train", data_file("diabetes.csv"), "--query", data_file("diabetes.csv"), "--task", "regress", "-k", "7", "--weights", "gaussian:0.3"},
      {"neighbors", "--train", bc, "--query", bc, "-k", "12", "--metric", "cosine"},
      {"neighbors", "--train", bc, "--query", bc, "-k", "5", "--scale", "standard"},
      {"evaluate", "--train", bc, "-k", "5", "--format", "json"},
      {"evaluate", "--train", data_file("diabetes.csv"), "--task", "regress", "--loo", "-k", "11", "--format", "json"},
  };
  for (const auto& cmd : commands) {
    auto one = cmd, two = cmd;
    one.insert(one.end(), {"--threads", "1"});
    two.insert(two.end(), {"--threads", "2"});
    const std::string a = cli_ok(one), b = cli_ok(two);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b) << "differs between 1 and 2 threads: " << join(cmd, " ");
  }
}

TEST(CliOutput, OutputFileHoldsWhatStdoutWould) {
  const std::vector<std::string> base{"predict", "--train", data_file("iris.csv"), "--query", data_file("iris.csv"), "-k", "3", "--proba"};
  const std::string expected = cli_ok(base);
  const fs::path dir = temp_dir() / "outdir";
  fs::create_directories(dir);
  const std::string path = (dir / "pred.csv").string();
  write_temp("outdir/pred.csv", "old content\n");  // replaced whole
  auto args = base;
  args.insert(args.end(), {"-o", path});
  const CliResult r = cli(args);
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_file(path), expected);
  // No temporary file is left next to it.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
  // "-o -" is standard output.
  args.back() = "-";
  EXPECT_EQ(cli_ok(args), expected);
}

// =============================================================================================
// Values computed by hand on tiny files.
//
// line_regress.csv: x = 0, 1, 2, 4, 8 with y = 10, 20, 30, 40, 50.
// line_classify.csv: the same x with labels a, a, b, b, a.

TEST(CliHand, RegressionMeansWithUniformWeights) {
  // --scale none, k = 3. x = 3: rows 2, 3 (d 1), row 1 (d 2): (30+40+20)/3 = 30.
  // x = 1.5: rows 1, 2 (d 0.5), row 0 (d 1.5): 20. x = 4: rows 3, 2, 1: 30. x = 16: rows 4, 3, 2: 40.
  EXPECT_EQ(cli_ok({"predict", "--train", case_file("line_regress.csv"), "--query", case_file("line_query.csv"), "--task",
                    "regress", "-k", "3", "--scale", "none"}),
            "prediction\n30\n20\n30\n40\n");
  // k = 1 and k = 5 (all rows: the mean 30).
  EXPECT_EQ(cli_ok({"predict", "--train", case_file("line_regress.csv"), "--query", case_file("line_query.csv"), "--task",
                    "regress", "-k", "1", "--scale", "none"}),
            "prediction\n30\n20\n40\n50\n");
  EXPECT_EQ(cli_ok({"predict", "--train", case_file("line_regress.csv"), "--query", case_file("line_query.csv"), "--task",
                    "regress", "-k", "5"}),
            "prediction\n30\n30\n30\n30\n");
}

double predict_one(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"predict", "--train", case_file("line_regress.csv"), "--query", case_file("line_query_3.csv"),
                                "--task", "regress", "-k", "3", "--scale", "none"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto lines = lines_of(cli_ok(args));
  if (lines.size() != 2 || lines[0] != "prediction") {
    ADD_FAILURE() << "unexpected output for " << join(extra, " ");
    return std::nan("");
  }
  return to_double(lines[1]);
}

TEST(CliHand, RegressionWeightFunctions) {
  // Query x = 3, k = 3: neighbours y = 30 (d 1), 40 (d 1), 20 (d 2).
  EXPECT_EQ(predict_one({}), 30.0);
  EXPECT_EQ(predict_one({"--weights", "uniform"}), 30.0);
  // distance: weights 1, 1, 1/2: (30 + 40 + 10) / 2.5 = 32.
  EXPECT_EQ(predict_one({"--weights", "distance"}), 32.0);
  // subtract:2: weights 1, 1, 0: 35. subtract:1.5: 0.5, 0.5, 0: 35.
  EXPECT_EQ(predict_one({"--weights", "subtract:2"}), 35.0);
  EXPECT_EQ(predict_one({"--weights", "subtract:1.5"}), 35.0);
  // subtract:1 (also the default c): all weights 0, so uniform weights are used: 30.
  EXPECT_EQ(predict_one({"--weights", "subtract:1"}), 30.0);
  EXPECT_EQ(predict_one({"--weights", "subtract"}), 30.0);
  // subtract:4: weights 3, 3, 2: (90 + 120 + 40) / 8 = 31.25.
  EXPECT_EQ(predict_one({"--weights", "subtract:4"}), 31.25);
  // gaussian sigma: exp(-d^2 / (2 sigma^2)).
  const auto gauss = [](double sigma) {
    const double a = std::exp(-1.0 / (2 * sigma * sigma)), b = std::exp(-4.0 / (2 * sigma * sigma));
    return (a * 30 + a * 40 + b * 20) / (a + a + b);
  };
  EXPECT_NEAR(predict_one({"--weights", "gaussian"}), gauss(1.0), 1e-12);
  EXPECT_NEAR(predict_one({"--weights", "gaussian:1"}), gauss(1.0), 1e-12);
  EXPECT_NEAR(predict_one({"--weights", "gaussian:0.5"}), gauss(0.5), 1e-12);
  // sigma 0.5: weights e^-2, e^-2, e^-8: (70 e^-2 + 20 e^-8) / (2 e^-2 + e^-8) = 34.98143237...
  EXPECT_NEAR(predict_one({"--weights", "gaussian:0.5"}), 34.98143237095046, 1e-12);
  // inverse c: 1 / (d + c). c = 1: 1/2, 1/2, 1/3: (15 + 20 + 20/3) / (4/3) = 31.25.
  EXPECT_NEAR(predict_one({"--weights", "inverse:1"}), 31.25, 1e-12);
  const double i = 1 / 1.1, j = 1 / 2.1;
  EXPECT_NEAR(predict_one({"--weights", "inverse"}), (i * 70 + j * 20) / (2 * i + j), 1e-12);
}

TEST(CliHand, DistanceWeightsWithAnExactMatchUseOnlyThatRow) {
  // x = 4 is row 3 (y 40): with distance weights only the rows at distance 0 count.
  const std::string q = write_temp("line_query_4.csv", "x\n4\n");
  EXPECT_EQ(cli_ok({"predict", "--train", case_file("line_regress.csv"), "--query", q, "--task", "regress", "-k", "5",
                    "--weights", "distance"}),
            "prediction\n40\n");
  // Two training rows at distance 0 (y 10 and 30): their mean, the others left out.
  const std::string tr = write_temp("dup_regress.csv", "x,y\n0,100\n2,10\n2,30\n5,0\n");
  const std::string q2 = write_temp("dup_query.csv", "x\n2\n");
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q2, "--task", "regress", "-k", "4", "--weights", "distance"}),
            "prediction\n20\n");
}

TEST(CliHand, ClassificationVotesAndProbabilities) {
  const std::string tr = case_file("line_classify.csv");
  // x = 3, k = 3, no scaling: rows 2 (b), 3 (b), 1 (a): b with shares 1/3, 2/3.
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "3", "--scale", "none", "--proba"}),
            "prediction,p_a,p_b\nb," + knn::app::format_double(1.0 / 3.0) + "," + knn::app::format_double(2.0 / 3.0) + "\n");
  // k = 4 adds row 0 (a): a 2-2 tie goes to the smaller class, a.
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "4", "--scale", "none", "--proba"}),
            "prediction,p_a,p_b\na,0.5,0.5\n");
  // With distance weights: b has 1 + 1, a has 1/2 + 1/3: b, share 2 / (17/6) = 12/17.
  const auto rows = rows_of(cli_ok({"predict", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "4", "--scale",
                                    "none", "--proba", "--weights", "distance"}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "b");
  EXPECT_NEAR(to_double(rows[1][1]), 5.0 / 17.0, 1e-15);
  EXPECT_NEAR(to_double(rows[1][2]), 12.0 / 17.0, 1e-15);
  // x = 1.5, k = 2: rows 1 (a) and 2 (b), both at 0.5: a tie, to a.
  const std::string q = write_temp("line_query_15.csv", "x\n1.5\n");
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "2"}), "prediction\na\n");
}

TEST(CliHand, NumericClassLabelsTieToTheNumericallySmallerClass) {
  // Labels 10 and 9: numeric order puts 9 first (byte order would put "10" first). x = 0.5,
  // k = 2: rows 0 (10) and 1 (9) tie at distance 0.5: the prediction is 9.
  EXPECT_EQ(cli_ok({"predict", "--train", case_file("numeric_labels.csv"), "--query", case_file("numeric_labels_query.csv"),
                    "-k", "2", "--proba"}),
            "prediction,p_9,p_10\n9,0.5,0.5\n");
}

TEST(CliHand, NeighborsOnALine) {
  const std::string tr = case_file("line_regress.csv");
  // Min-max scaling divides by 8: x = 3 -> 0.375 against 0, 0.125, 0.25, 0.5, 1. Rows 2 and 3
  // tie at 0.125: row 2 first.
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "5"}),
            "query,rank,index,distance\n0,1,2,0.125\n0,2,3,0.125\n0,3,1,0.25\n0,4,0,0.375\n0,5,4,0.625\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "5", "--no-normalize"}),
            "query,rank,index,distance\n0,1,2,1\n0,2,3,1\n0,3,1,2\n0,4,0,3\n0,5,4,5\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", case_file("line_query_3.csv"), "-k", "2", "--scale", "none", "--metric", "l1"}),
            "query,rank,index,distance\n0,1,2,1\n0,2,3,1\n");
  // x = 16 is scaled with the training rows' min and max only, and not clipped: 16/8 = 2, one
  // from row 4 (1), 1.5 from row 3.
  const std::string q = write_temp("line_query_16.csv", "x\n16\n-4\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "2"}),
            "query,rank,index,distance\n0,1,4,1\n0,2,3,1.5\n1,1,0,0.5\n1,2,1,0.625\n");
}

TEST(CliHand, StandardScaling) {
  // Mean 3, population standard deviation sqrt(8): x = 3 -> 0, rows 2 and 3 at 1/sqrt(8) (as
  // float), row 1 at 2/sqrt(8).
  const auto rows = rows_of(cli_ok({"neighbors", "--train", case_file("line_regress.csv"), "--query",
                                    case_file("line_query_3.csv"), "-k", "3", "--scale", "standard"}));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][2], "2");
  EXPECT_EQ(rows[2][2], "3");
  EXPECT_EQ(rows[3][2], "1");
  const double s = std::sqrt(8.0);
  EXPECT_EQ(to_double(rows[1][3]), static_cast<double>(static_cast<float>(1.0 / s)));
  EXPECT_EQ(to_double(rows[2][3]), to_double(rows[1][3]));
  EXPECT_NEAR(to_double(rows[3][3]), 2.0 / s, 1e-7);
}

TEST(CliHand, Metrics) {
  // points2d.csv, no scaling: (3,4), (1,1), (-1,2), (6,0); query (1,0).
  const std::vector<std::string> base{"neighbors", "--train", case_file("points2d.csv"), "--query", case_file("points2d_query.csv"),
                                      "-k", "4", "--scale", "none"};
  auto l1 = base;
  l1.insert(l1.end(), {"--metric", "l1"});
  EXPECT_EQ(cli_ok(l1), "query,rank,index,distance\n0,1,1,1\n0,2,2,4\n0,3,3,5\n0,4,0,6\n");
  auto l2 = base;
  l2.insert(l2.end(), {"--metric", "l2"});
  EXPECT_EQ(cli_ok(l2), "query,rank,index,distance\n0,1,1,1\n0,2,2," + knn::app::format_double(std::sqrt(8.0)) + "\n0,3,0," +
                            knn::app::format_double(std::sqrt(20.0)) + "\n0,4,3,5\n");
  EXPECT_EQ(cli_ok(base), cli_ok(l2));  // l2 is the default
  auto cosine = base;
  cosine.insert(cosine.end(), {"--metric", "cosine"});
  const auto rows = rows_of(cli_ok(cosine));
  ASSERT_EQ(rows.size(), 5u);
  // 1 - cos: (6,0) 0; (1,1) 1 - 1/sqrt(2); (3,4) 0.4; (-1,2) 1 + 1/sqrt(5).
  const std::vector<std::pair<std::string, double>> expected{
      {"3", 0.0}, {"1", 1.0 - 1.0 / std::sqrt(2.0)}, {"0", 0.4}, {"2", 1.0 + 1.0 / std::sqrt(5.0)}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i + 1][2], expected[i].first) << "rank " << i + 1;
    EXPECT_NEAR(to_double(rows[i + 1][3]), expected[i].second, 1e-15) << "rank " << i + 1;
  }
}

TEST(CliHand, LeaveOneOutRegression) {
  // k = 1, no scaling: row 0 -> row 1 (20); row 1 -> rows 0 and 2 tie, row 0 (10); row 2 -> row 1
  // (20); row 3 -> row 2 (30); row 4 -> row 3 (40). Every error is 10: RMSE = MAE = 10, and
  // R^2 = 1 - 500/1000 = 0.5.
  for (const char* scale : {"none", "minmax"}) {
    const Json j = parse_json(cli_ok({"evaluate", "--train", case_file("line_regress.csv"), "--task", "regress", "--loo",
                                      "-k", "1", "--scale", scale, "--format", "json"}));
    check_eval_json(j, "regress", 1, 5, 5, {});
    EXPECT_EQ(j["metrics"]["rmse"]["mean"].number, 10.0) << scale;
    EXPECT_EQ(j["metrics"]["mae"]["mean"].number, 10.0) << scale;
    EXPECT_EQ(j["metrics"]["r2"]["mean"].number, 0.5) << scale;
    EXPECT_EQ(j["metrics"]["rmse"]["std"].number, 0.0) << scale;
  }
  // k = 2: row 0 -> 20, 30 (25); row 1 -> 10, 30 (20); row 2 -> 20 (d 1), then rows 0 and 3
  // tie at d 2: row 0, 10 (15); row 3 -> 30, 20 (25); row 4 -> 40, 30 (35). Errors 15, 0, 15,
  // 15, 15: RMSE sqrt(180), MAE 12, R^2 = 1 - 900/1000. (Row 2 taking row 3 instead would give
  // an error of 0 there.)
  const Json j = parse_json(cli_ok({"evaluate", "--train", case_file("line_regress.csv"), "--task", "regress", "--loo", "-k",
                                    "2", "--scale", "none", "--format", "json"}));
  EXPECT_NEAR(j["metrics"]["rmse"]["mean"].number, std::sqrt(180.0), 1e-12);
  EXPECT_NEAR(j["metrics"]["mae"]["mean"].number, 12.0, 1e-12);
  EXPECT_NEAR(j["metrics"]["r2"]["mean"].number, 0.1, 1e-12);
}

TEST(CliHand, LeaveOneOutClassification) {
  // k = 1, no scaling: row 0 -> a (right), row 1 -> rows 0 and 2 tie, row 0: a (right), row 2 ->
  // row 1: a (wrong), row 3 -> row 2: b (right), row 4 -> row 3: b (wrong). Accuracy 3/5,
  // confusion [[2, 1], [1, 1]], balanced accuracy and macro F1 both (2/3 + 1/2) / 2.
  const std::string out = cli_ok({"evaluate", "--train", case_file("line_classify.csv"), "--loo", "-k", "1", "--scale", "none",
                                  "--format", "json"});
  const Json j = parse_json(out);
  check_eval_json(j, "classify", 1, 5, 5, {"a", "b"});
  EXPECT_EQ(j["metrics"]["accuracy"]["mean"].number, 0.6);
  EXPECT_NEAR(j["metrics"]["balanced_accuracy"]["mean"].number, 7.0 / 12.0, 1e-15);
  EXPECT_NEAR(j["metrics"]["f1_macro"]["mean"].number, 7.0 / 12.0, 1e-15);
  EXPECT_NE(out.find("\"counts\": [[2, 1], [1, 1]]"), std::string::npos) << out;
}

TEST(CliHand, TestFile) {
  // line_test.csv: 0.25 (a) -> row 0: a; 3.5 (b) -> row 3: b; 7 (b) -> row 4: a. Accuracy 2/3.
  const std::string out = cli_ok({"evaluate", "--train", case_file("line_classify.csv"), "--test", case_file("line_test.csv"),
                                  "-k", "1", "--scale", "none", "--format", "json"});
  const Json j = parse_json(out);
  check_eval_json(j, "classify", 1, 1, 3, {"a", "b"});
  EXPECT_EQ(j["metrics"]["accuracy"]["mean"].number, 2.0 / 3.0);
  EXPECT_NE(out.find("\"counts\": [[1, 0], [1, 1]]"), std::string::npos) << out;
  // The summary names the test file and its rows.
  const std::string summary = cli_ok({"evaluate", "--train", case_file("line_classify.csv"), "--test", case_file("line_test.csv"),
                                      "-k", "1", "--scale", "none"});
  EXPECT_NE(summary.find("line_test.csv (3 rows)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("0.6667"), std::string::npos) << summary;
  // One score, so no spread to show: "-" in the std column, where k folds give a number.
  EXPECT_NE(summary.find("\naccuracy              0.6667         -\n"), std::string::npos) << summary;
  const std::string loo = cli_ok({"evaluate", "--train", case_file("line_classify.csv"), "--loo", "-k", "1", "--scale", "none"});
  EXPECT_NE(loo.find("\naccuracy              0.6000         -\n"), std::string::npos) << loo;
}

// =============================================================================================
// Bad input.

struct BadCase {
  const char* name;
  std::vector<std::string> args;     // "@" prefix: a file in tests/cli_cases/
  std::vector<std::string> needles;  // all must appear in the error line
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

using namespace std::string_literals;  // "...\0..."s keeps NUL bytes

// Inputs too large to commit (10 MB lines) or whose bytes no tool may touch (NUL, control and
// non-ASCII bytes), written to the temporary folder on first use.
std::string generated_case(const std::string& name) {
  static const std::map<std::string, std::function<std::string()>> makers{
      // One line of 10 MiB: 5 Mi fields "1," where 3 are expected.
      {"ten_mb_fields.csv", [] {
         std::string s = "a,b,label\n1,2,x\n";
         for (int i = 0; i < (5 << 20); ++i) s += "1,";
         return s + "y\n5,6,y\n";
       }},
      {"ten_mb_cell.csv", [] { return "a,b,label\n1,2,x\n3," + std::string(10 << 20, '7') + ",y\n5,6,y\n"; }},
      {"ten_mb_no_delimiter.csv", [] { return "a,b,label\n1,2,x\n" + std::string(10 << 20, 'z') + "\n5,6,y\n"; }},
      {"ten_mb_single_line.csv", [] { return std::string(10 << 20, 'q'); }},
      {"ten_mb_query.csv", [] { return "a,b\n1,2\n3," + std::string(10 << 20, '7') + "\n"; }},
      // Beyond the 16 MiB that the line reader holds.
      {"seventeen_mb_line.csv", [] { return "a,b,label\n1,2,x\n3," + std::string(17 << 20, '7') + ",y\n"; }},
      // The start of a PNG file: high bytes, CR, NUL bytes on line 3.
      {"binary_garbage.bin", [] { return "\x89PNG\r\n\x1A\n\0\0\0\rIHDR\0\0\0\x10\xFF\xFE,\x01\x02\n\0\0\n"s; }},
      // A row that would read as valid if the line ended at its NUL byte.
      {"nul_in_row.csv", [] { return "a,b,label\n1,2,x\n3,4,y\0junk\n5,6,y\n"s; }},
      {"garbage_no_nul.csv", [] { return "\xFF\xFE\x01,\x80,label\n1,2,x\n\x90\xC3(,4,y\n"s; }},
      {"control_bytes.csv", [] { return "a,b,label\n1,2,x\n3,\x01\xC3\xA9\tz\x7F,y\n"s; }},
      // The bad cell is on line 4: the quoted label of the row before spans lines 2 and 3.
      {"after_multiline_quote.csv", [] { return "a,b,label\n1,2,\"two\nlines\"\n3,abc,y\n"s; }},
      {"unclosed_quote.csv", [] { return "a,b,label\n1,2,x\n3,4,\"y\n5,6,y\n"s; }},
  };
  const fs::path p = temp_dir() / "generated" / name;
  if (!fs::exists(p)) write_temp("generated/" + name, makers.at(name)());
  return p.string();
}

// "@name": a file in tests/cli_cases/; "TMP/name": a path in the temporary folder; "GEN/name": a
// generated_case(); "DIR/name": an empty folder, made in the temporary folder.
std::vector<std::string> expand(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    if (!a.empty() && a[0] == '@') {
      out.push_back(case_file(a.substr(1)));
    } else if (a.rfind("TMP/", 0) == 0) {
      out.push_back((temp_dir() / a.substr(4)).string());
    } else if (a.rfind("GEN/", 0) == 0) {
      out.push_back(generated_case(a.substr(4)));
    } else if (a.rfind("DIR/", 0) == 0) {
      const fs::path dir = temp_dir() / a.substr(4);
      fs::create_directories(dir);
      out.push_back(dir.string());
    } else {
      out.push_back(a);
    }
  }
  return out;
}

const std::vector<std::string> kPredict{"predict", "--train", "@line_classify.csv", "--query", "@line_query.csv"};

std::vector<std::string> predict_with(std::vector<std::string> extra) {
  std::vector<std::string> a = kPredict;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> train_with(const std::string& train, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"predict", "--train", train, "--query", "@line_query.csv"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

const BadCase kBadCases[] = {
    {"k_zero", predict_with({"-k", "0"}), {"--k", "\"0\""}},
    {"k_text", predict_with({"-k", "abc"}), {"--k", "\"abc\""}},
    {"k_negative", predict_with({"-k", "-3"}), {"--k", "\"-3\""}},
    {"k_long_spelling", predict_with({"--k=x7"}), {"--k", "\"x7\""}},
    {"k_larger_than_training_rows", predict_with({"-k", "6"}), {"--k", "\"6\""}},
    {"k_larger_than_loo_training_rows", {"evaluate", "--train", "@line_classify.csv", "--loo", "-k", "5"}, {"--k", "\"5\""}},
    {"weights_gaussian_zero", predict_with({"--weights", "gaussian:0"}), {"--weights", "\"0\""}},
    {"weights_inverse_negative", predict_with({"--weights", "inverse:-1"}), {"--weights", "\"-1\""}},
    {"weights_subtract_text", predict_with({"--weights", "subtract:abc"}), {"--weights", "\"abc\""}},
    {"weights_unknown", predict_with({"--weights", "triangle"}), {"--weights", "\"triangle\""}},
    {"weights_distance_with_parameter", predict_with({"--weights", "distance:2"}), {"--weights", "\"distance:2\""}},
    {"metric_unknown", predict_with({"--metric", "bad"}), {"--metric", "\"bad\""}},
    {"scale_unknown", predict_with({"--scale", "bad"}), {"--scale", "\"bad\""}},
    {"task_unknown", predict_with({"--task", "bad"}), {"--task", "\"bad\""}},
    {"format_xml", predict_with({"--format", "xml"}), {"--format", "\"xml\""}},
    {"device_unknown", predict_with({"--device", "bad"}), {"--device", "\"bad\""}},
    {"threads_zero", predict_with({"--threads", "0"}), {"--threads", "\"0\""}},
    {"delimiter_two_characters", predict_with({"--delimiter", "ab"}), {"--delimiter", "\"ab\""}},
    {"folds_one", {"evaluate", "--train", "@line_classify.csv", "--folds", "1"}, {"--folds", "\"1\""}},
    {"seed_negative", {"evaluate", "--train", "@line_classify.csv", "--seed", "-1"}, {"--seed", "\"-1\""}},
    {"loo_and_folds", {"evaluate", "--train", "@line_classify.csv", "--loo", "--folds", "3"}, {"--folds"}},
    {"unknown_option", predict_with({"--bogus"}), {"bogus\""}},
    {"unknown_short_option", predict_with({"-z"}), {"z\""}},
    {"option_without_value", predict_with({"-k"}), {"k\""}},
    {"stray_argument", predict_with({"stray"}), {"\"stray\""}},
    {"unknown_subcommand", {"frobnicate", "--train", "@line_classify.csv"}, {"\"frobnicate\""}},
    {"missing_train", {"predict", "--query", "@line_query.csv"}, {"--train"}},
    {"missing_query", {"neighbors", "--train", "@line_classify.csv"}, {"--query"}},
    {"stdin_twice", {"predict", "--train", "-", "--query", "-"}, {"standard input"}},
    {"missing_file", train_with("@does_not_exist.csv"), {"does_not_exist.csv:", "cannot open"}},
    {"directory_as_train", train_with("@bad"), {"cli_cases/bad:", "directory"}},
    {"empty_file", train_with("@bad/empty.csv"), {"bad/empty.csv:", "empty"}},
    {"header_only", train_with("@bad/header_only.csv"), {"bad/header_only.csv:", "no data rows"}},
    {"ragged_row_too_few", train_with("@bad/ragged_short.csv"), {"bad/ragged_short.csv:3:", "expected 3 fields, found 2"}},
    {"ragged_row_too_many", train_with("@bad/ragged_long.csv"), {"bad/ragged_long.csv:3:4:", "\"9\""}},
    // A text cell makes a column categorical, unless --numeric says it holds numbers.
    {"non_numeric_cell", train_with("@bad/text_cell.csv", {"--numeric", "b"}), {"bad/text_cell.csv:3:2:", "\"abc\"", "\"b\"", "--numeric"}},
    // Missing cells (empty, nan) with nothing to fill them: the first is named, --impute suggested.
    {"empty_cell", train_with("@bad/empty_cell.csv"), {"bad/empty_cell.csv:3:2:", "missing value", "\"b\"", "--impute"}},
    {"nan_cell", train_with("@bad/nan_cell.csv"), {"bad/nan_cell.csv:3:2:", "missing value", "--impute", "--drop-missing"}},
    {"inf_cell", train_with("@bad/inf_cell.csv"), {"bad/inf_cell.csv:3:1:", "inf\""}},
    {"huge_cell", train_with("@bad/huge_cell.csv"), {"bad/huge_cell.csv:3:2:", "\"1e999\""}},
    {"long_cell_quoted_to_40_characters", train_with("@bad/long_cell.csv", {"--numeric", "b"}),
     {"bad/long_cell.csv:3:2:", "\"abcdefghijabcdefghijabcdefghijabcdefghij...\""}},
    {"label_unknown_name", predict_with({"--label", "nope"}), {"--label", "\"nope\""}},
    {"label_index_out_of_range", predict_with({"--label", "7"}), {"--label", "\"7\""}},
    {"label_negative_index_out_of_range", predict_with({"--label", "-3"}), {"--label", "\"-3\""}},
    {"ignore_unknown_column", predict_with({"--ignore", "nope"}), {"--ignore", "\"nope\""}},
    {"ignore_the_label", predict_with({"--ignore", "label"}), {"--ignore", "\"label\""}},
    {"regress_with_text_labels", predict_with({"--task", "regress"}), {"line_classify.csv:2:2:", "\"a\""}},
    {"evaluate_regress_with_text_labels", {"evaluate", "--train", "@line_classify.csv", "--task", "regress"},
     {"line_classify.csv:2:2:", "\"a\""}},
    {"query_extra_column", {"predict", "--train", "@bad/two_features.csv", "--query", "@bad/query_extra_column.csv"},
     {"bad/query_extra_column.csv:1:3:", "\"z\""}},
    {"query_missing_feature", {"predict", "--train", "@bad/two_features.csv", "--query", "@bad/query_missing_b.csv"},
     {"bad/query_missing_b.csv:1:", "\"b\""}},
    {"query_wrong_column_count_no_header",
     {"predict", "--train", "@bad/noheader_train.csv", "--query", "@bad/noheader_query3.csv", "--no-header"},
     {"bad/noheader_query3.csv:1:", "3 columns"}},
    {"query_ragged_row", {"neighbors", "--train", "@bad/two_features.csv", "--query", "@bad/query_ragged.csv"},
     {"bad/query_ragged.csv:3:3:", "\"5\""}},
    {"query_non_numeric_cell", {"neighbors", "--train", "@bad/two_features.csv", "--query", "@bad/query_text_cell.csv"},
     {"bad/query_text_cell.csv:3:2:", "\"oops\""}},
    {"test_file_non_numeric_cell", {"evaluate", "--train", "@bad/two_features.csv", "--test", "@bad/test_text_cell.csv", "-k", "1"},
     {"bad/test_text_cell.csv:3:1:", "\"bad\""}},
    // Finite in the file, but beyond float32 once scaled by the training rows' tiny range.
    {"query_value_overflows_when_scaled", {"predict", "--train", "@bad/tiny_range.csv", "--query", "@bad/far_query.csv", "-k", "1"},
     {"bad/far_query.csv:2:1:", "\"1e+10\""}},
    {"output_into_missing_folder", predict_with({"-o", "TMP/no_such_folder/out.csv"}), {"no_such_folder", "out.csv"}},
    {"directory_as_output", predict_with({"-o", "DIR/output_folder"}), {"output_folder:", "directory"}},
    {"directory_as_query", {"predict", "--train", "@bad/two_features.csv", "--query", "@bad"},
     {"cli_cases/bad:", "directory"}},
    {"query_empty_file", {"predict", "--train", "@bad/two_features.csv", "--query", "@bad/empty.csv"},
     {"bad/empty.csv:", "empty"}},
    {"query_header_only", {"predict", "--train", "@bad/two_features.csv", "--query", "@bad/header_only.csv"},
     {"bad/header_only.csv:", "no data rows"}},
    // Option values: more spellings of k and of weight parameters, and the quoting of the value.
    {"k_fraction", predict_with({"-k", "1.5"}), {"--k", "\"1.5\""}},
    {"k_overflowing", predict_with({"-k", "99999999999999999999999"}), {"--k", "\"99999999999999999999999\""}},
    {"weights_gaussian_nan", predict_with({"--weights", "gaussian:nan"}), {"--weights", "\"nan\""}},
    {"weights_inverse_inf", predict_with({"--weights", "inverse:inf"}), {"--weights", "\"inf\""}},
    {"weights_subtract_zero", predict_with({"--weights", "subtract:0"}), {"--weights", "\"0\""}},
    {"weights_parameter_non_ascii_byte", predict_with({"--weights", "gaussian:\xFF"}), {"--weights", "\"\\xFF\""}},
    // A newline in a value must not break the one error line.
    {"option_value_with_newline", predict_with({"--task", "re\ngress"}), {"--task", "\"re\\ngress\""}},
    {"option_value_cut_to_40_characters", predict_with({"--metric", std::string(60, 'm')}),
     {"--metric", "\"" + std::string(40, 'm') + "...\""}},
    // The label column: missing (empty option, no feature beside it, an empty cell, absent from
    // a test file that must be scored) and selected by a name that two columns have.
    {"label_empty_name", predict_with({"--label", ""}), {"--label", "\"\""}},
    {"label_only_column", train_with("@bad/label_only.csv"),
     {"bad/label_only.csv:1:", "no feature columns", "\"label\""}},
    {"ignore_every_feature", predict_with({"--ignore", "x"}),
     {"line_classify.csv:1:", "no feature columns", "left out"}},
    {"label_empty_cell", train_with("@bad/empty_label.csv"), {"bad/empty_label.csv:3:3:", "missing label", "\"label\"", "--drop-missing"}},
    {"test_file_without_the_label_column",
     {"evaluate", "--train", "@bad/two_features.csv", "--test", "@bad/query_a_b.csv", "-k", "1"},
     {"bad/query_a_b.csv:", "no label column", "\"label\""}},
    {"label_name_appears_twice",
     {"predict", "--train", "@bad/dup_label.csv", "--query", "@bad/query_a_b.csv", "--label", "label"},
     {"bad/dup_label.csv:1:", "--label", "\"label\"", "appears 2 times"}},
    {"ignore_name_appears_twice",
     {"predict", "--train", "@bad/dup_id.csv", "--query", "@bad/query_a_b.csv", "--ignore", "id"},
     {"bad/dup_id.csv:1:", "--ignore", "\"id\"", "appears 2 times"}},
    // Query columns are matched to the training features by name: a name twice in either file.
    {"train_feature_name_appears_twice",
     {"predict", "--train", "@bad/dup_feature.csv", "--query", "@bad/query_a_b.csv"},
     {"bad/dup_feature.csv:1:3:", "\"a\"", "appears twice", "query_a_b.csv"}},
    {"query_feature_name_appears_twice",
     {"neighbors", "--train", "@bad/two_features.csv", "--query", "@bad/query_dup_feature.csv"},
     {"bad/query_dup_feature.csv:1:3:", "\"a\"", "appears twice"}},
    {"test_file_label_name_appears_twice",
     {"evaluate", "--train", "@bad/two_features.csv", "--test", "@bad/dup_label.csv", "-k", "1"},
     {"bad/dup_label.csv:1:4:", "\"label\"", "appears twice"}},
    // Mixed label types under --task regress: numbers, then a text label.
    {"regress_numbers_then_a_text_label",
     {"predict", "--train", "@bad/mixed_labels.csv", "--query", "@bad/query_a_b.csv", "--task", "regress"},
     {"bad/mixed_labels.csv:3:3:", "\"ten\""}},
    {"evaluate_regress_numbers_then_a_text_label",
     {"evaluate", "--train", "@bad/mixed_labels.csv", "--task", "regress"},
     {"bad/mixed_labels.csv:3:3:", "\"ten\""}},
    {"regress_nan_target",
     {"predict", "--train", "@bad/nan_target.csv", "--query", "@bad/query_a_b.csv", "--task", "regress"},
     {"bad/nan_target.csv:3:3:", "\"nan\""}},
    // Lines of 10 MB that are not valid rows, read in parallel chunks (the file is over 4 MiB) or
    // by one thread; the quoted value is cut to 40 characters.
    {"ten_megabyte_line_of_fields", train_with("GEN/ten_mb_fields.csv"),
     {"ten_mb_fields.csv:3:4:", "expected 3 fields, found 5242881", "(extra value \"1\")"}},
    {"ten_megabyte_cell", train_with("GEN/ten_mb_cell.csv"),
     {"ten_mb_cell.csv:3:2:", "\"" + std::string(40, '7') + "...\""}},
    {"ten_megabyte_cell_read_by_one_thread", train_with("GEN/ten_mb_cell.csv", {"--threads", "1"}),
     {"ten_mb_cell.csv:3:2:", "\"" + std::string(40, '7') + "...\""}},
    {"ten_megabyte_line_without_delimiters", train_with("GEN/ten_mb_no_delimiter.csv"),
     {"ten_mb_no_delimiter.csv:3:1:", "found 1", "\"" + std::string(40, 'z') + "...\""}},
    {"ten_megabyte_single_line_file", train_with("GEN/ten_mb_single_line.csv"),
     {"ten_mb_single_line.csv:1:", "no feature columns", "\"" + std::string(40, 'q') + "...\""}},
    {"ten_megabyte_query_line", {"neighbors", "--train", "@bad/two_features.csv", "--query", "GEN/ten_mb_query.csv"},
     {"ten_mb_query.csv:3:2:", "\"" + std::string(40, '7') + "...\""}},
    {"line_longer_than_the_reader_accepts", train_with("GEN/seventeen_mb_line.csv"),
     {"seventeen_mb_line.csv:3:", "16 MiB"}},
    // Binary data, and bytes that must be escaped in the quoted value.
    {"binary_garbage_with_nul_bytes", train_with("GEN/binary_garbage.bin"),
     {"binary_garbage.bin:3:1:", "NUL byte in \"\\x00\\x00\\x00\\rIHDR\\x00\\x00\\x00\\x10\\xFF\\xFE\""}},
    {"nul_byte_after_a_valid_row", train_with("GEN/nul_in_row.csv"), {"nul_in_row.csv:3:3:", "\"y\\x00junk\""}},
    {"binary_garbage_without_nul_bytes", train_with("GEN/garbage_no_nul.csv", {"--numeric", "0"}),
     {"garbage_no_nul.csv:3:1:", "\"\\x90\\xC3(\"", "\"\\xFF\\xFE\\x01\""}},
    {"cell_with_control_and_non_ascii_bytes", train_with("GEN/control_bytes.csv", {"--numeric", "b"}),
     {"control_bytes.csv:3:2:", "\"\\x01\\xC3\\xA9\\tz\\x7F\""}},
    // Quoted fields: line numbers after a record of two lines, and a quote never closed.
    {"bad_cell_after_a_multi_line_quoted_field", train_with("GEN/after_multiline_quote.csv", {"--numeric", "b"}),
     {"after_multiline_quote.csv:4:2:", "\"abc\""}},
    {"quoted_field_not_closed", train_with("GEN/unclosed_quote.csv"), {"unclosed_quote.csv:3:3:", "not closed"}},
    // Tabular data: each refusal names the file and column or the option, and says how to go on.
    // rnames.csv also has a row-name column, whose note must not join the error line.
    {"missing_cell_without_impute", {"evaluate", "--train", "@tabular/rnames.csv"},
     {"tabular/rnames.csv:3:2:", "missing value in column \"x\"", "(2 cells in 2 columns", "--impute", "--drop-missing"}},
    {"identifier_column", train_with("@tabular/ids.csv"),
     {"tabular/ids.csv:1:1:", "\"name\"", "looks like an identifier", "24 values", "--ignore \"name\"", "--categorical"}},
    {"missing_label", train_with("@tabular/missing_label.csv"),
     {"tabular/missing_label.csv:4:3:", "missing label", "\"label\"", "--drop-missing"}},
    {"regression_target_guessed_as_classes", {"evaluate", "--train", "@tabular/target.csv"},
     {"tabular/target.csv:", "\"price\"", "30 distinct numbers", "--task regress", "--task classify", "--label"}},
    {"fractional_target_guessed_as_classes", {"predict", "--train", "@tabular/fraction_target.csv", "--query", "@line_query.csv", "-k", "1"},
     {"tabular/fraction_target.csv:", "not whole", "--task regress"}},
    {"column_without_values_to_impute", {"evaluate", "--train", "@tabular/empty_column.csv", "--impute", "mean", "-k", "1"},
     {"tabular/empty_column.csv:1:2:", "\"y\"", "no value", "--ignore"}},
    {"query_column_unknown_to_training",
     {"predict", "--train", "@tabular/rnames.csv", "--query", "@tabular/query_extra.csv", "--impute", "mean", "-k", "3"},
     {"tabular/query_extra.csv:1:4:", "\"note\"", "--ignore", "--id"}},
    {"id_missing_from_query",
     {"predict", "--train", "@tabular/rnames.csv", "--query", "@tabular/rnames_query.csv", "--impute", "mean", "-k", "3", "--id", "code"},
     {"option --id", "\"code\"", "rnames_query.csv"}},
    {"impute_unknown", predict_with({"--impute", "avg"}), {"--impute", "\"avg\"", "most_frequent"}},
    {"skip_lines_not_a_count", predict_with({"--skip-lines", "-1"}), {"--skip-lines", "\"-1\""}},
    {"skip_lines_past_the_end", {"evaluate", "--train", "@tabular/rnames.csv", "--skip-lines", "9"},
     {"tabular/rnames.csv:", "--skip-lines 9 passes over every line: the file has 7 lines"}},
    {"categorical_unknown_column", predict_with({"--categorical", "nope"}), {"--categorical", "\"nope\"", "columns: \"x\", \"label\""}},
    {"label_misspelt", predict_with({"--label", "lable"}), {"--label", "\"lable\"", "closest: \"label\""}},
    {"numeric_and_categorical_one_column", predict_with({"--numeric", "x", "--categorical", "x"}), {"--numeric", "\"x\"", "--categorical"}},
    {"inspect_without_a_file", {"inspect"}, {"--file", "knn-cli inspect FILE"}},
    {"inspect_missing_file", {"inspect", "@does_not_exist.csv"}, {"does_not_exist.csv:", "cannot open"}},
    {"inspect_two_files", {"inspect", "@tabular/rnames.csv", "--train", "@tabular/ids.csv"}, {"option --train", "describes one"}},
};

class CliBadInput : public ::testing::TestWithParam<BadCase> {};

// Exit code 2, nothing on stdout, one line on stderr starting "knn-cli: error: ".
void check_error_shape(const CliResult& r) {
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  ASSERT_FALSE(r.err.empty()) << r;
  EXPECT_EQ(r.err.rfind("knn-cli: error: ", 0), 0u) << r;
  EXPECT_EQ(count_lines(r.err), 1u) << "expected exactly one line on stderr\n" << r;
  EXPECT_EQ(r.err.back(), '\n') << r;
}

// The shape, and the line names what is wrong: the needles, with ASCII quotes.
void check_bad(const CliResult& r, const BadCase& c) {
  check_error_shape(r);
  for (const auto& n : c.needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing " << n << " in\n" << r;
  for (unsigned char ch : r.err) EXPECT_LT(ch, 0x80) << "non-ASCII byte in the error line (quotes must be \"...\")\n" << r;
}

TEST_P(CliBadInput, ExitsWithOneErrorLineAndNoOutput) {
  const BadCase& c = GetParam();
  check_bad(cli(expand(c.args)), c);
}

TEST_P(CliBadInput, LeavesNoOutputFile) {
  const BadCase& c = GetParam();
  auto args = expand(c.args);
  const auto o = std::find(args.begin(), args.end(), "-o");
  if (o != args.end()) {
    // The output path is the fault: nothing may appear where it points. A folder stays empty; a
    // missing folder stays missing.
    const fs::path target = *(o + 1);
    const bool folder = fs::is_directory(target);
    const CliResult r = cli(args);
    check_error_shape(r);
    if (folder) EXPECT_TRUE(fs::is_empty(target)) << r;
    else EXPECT_FALSE(fs::exists(target.parent_path())) << r;
    return;
  }
  const fs::path dir = temp_dir() / (std::string("bad_out_") + c.name);
  fs::create_directories(dir);
  const std::string fresh = (dir / "fresh.csv").string(), existing = (dir / "existing.csv").string();
  write_temp(std::string("bad_out_") + c.name + "/existing.csv", "keep me\n");
  for (const auto& path : {fresh, existing}) {
    auto a = args;
    a.insert(a.end(), {"-o", path});
    check_error_shape(cli(a));
  }
  EXPECT_FALSE(fs::exists(fresh)) << "an output file was written for bad input";
  EXPECT_EQ(read_file(existing), "keep me\n") << "an existing output file was changed by bad input";
  std::size_t entries = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++entries;
  EXPECT_EQ(entries, 1u) << "a temporary file was left in " << dir;
}

INSTANTIATE_TEST_SUITE_P(All, CliBadInput, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(CliBadInputProcess, ExitCodeAndStreams) {
  // As a program: exit status 2, one line on stderr, nothing on stdout.
  for (const std::string name : {"k_zero", "non_numeric_cell", "unknown_subcommand", "missing_file", "weights_unknown",
                                  "option_value_with_newline", "binary_garbage_with_nul_bytes",
                                  "ten_megabyte_line_of_fields"}) {
    SCOPED_TRACE(name);
    const auto it = std::find_if(std::begin(kBadCases), std::end(kBadCases), [&](const BadCase& c) { return c.name == name; });
    ASSERT_NE(it, std::end(kBadCases));
    check_bad(cli_process(expand(it->args)), *it);
  }
}

// Runs the built knn-cli as user and group 65534 (nobody), stdout and stderr captured apart and
// standard input /dev/null. Needs root. Between fork and exec only async-signal-safe calls.
CliResult cli_process_unprivileged(const std::vector<std::string>& args) {
  constexpr uid_t kNobody = 65534;
  std::vector<std::string> all{kCli};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = (temp_dir() / "unprivileged_stdout").string();
  const std::string err = (temp_dir() / "unprivileged_stderr").string();
  const int in_fd = ::open("/dev/null", O_RDONLY);
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CliResult r;
  if (in_fd < 0 || out_fd < 0 || err_fd < 0) {
    ADD_FAILURE() << "cannot open the files that capture the output";
    return r;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0 || ::setgroups(0, nullptr) != 0 ||
        ::setresgid(kNobody, kNobody, kNobody) != 0 || ::setresuid(kNobody, kNobody, kNobody) != 0)
      ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in_fd);
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "cannot run " << kCli;
    return r;
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = knn::test::without_fallback_note(read_file(err));
  return r;
}

TEST(CliBadInputProcess, UnreadableFile) {
  // Root reads a file whatever its mode, and CI runs the tests as root: there knn-cli runs as an
  // unprivileged user, so that the mode really stops it. Without root the test runs as is.
  const bool root = ::geteuid() == 0;
  const fs::path dir = temp_dir() / "unreadable";
  fs::create_directories(dir / "out");
  using fs::perms;
  const perms reachable =
      perms::owner_all | perms::group_read | perms::group_exec | perms::others_read | perms::others_exec;
  fs::permissions(temp_dir(), perms::group_exec | perms::others_exec, fs::perm_options::add);
  fs::permissions(dir, reachable);
  fs::permissions(dir / "out", perms::all);  // the unprivileged user may write the output here
  const std::string train = write_temp("unreadable/train.csv", read_file(case_file("line_classify.csv")));
  const std::string query = write_temp("unreadable/query.csv", read_file(case_file("line_query.csv")));
  const perms readable = perms::owner_read | perms::owner_write | perms::group_read | perms::others_read;
  fs::permissions(query, readable);
  const std::string out = (dir / "out" / "predictions.csv").string();
  const std::vector<std::string> args{"predict", "--train", train, "--query", query, "-o", out};
  const auto run = [&] { return root ? cli_process_unprivileged(args) : cli_process(args); };

  // Readable, the same command works for the same user: the failure below comes from the mode.
  fs::permissions(train, readable);
  const CliResult ok = run();
  ASSERT_EQ(ok.code, 0) << ok;
  ASSERT_TRUE(fs::exists(out)) << ok;
  fs::remove(out);

  fs::permissions(train, perms::none);
  const BadCase expected{"unreadable_file", {}, {train + ": cannot open: Permission denied"}};
  check_bad(run(), expected);
  EXPECT_TRUE(fs::is_empty(dir / "out")) << "an output file was left for an unreadable input";
  if (!root) check_bad(cli(args), expected);
  fs::permissions(train, readable);
}

// =============================================================================================
// Input variants that must read exactly as the plain file.

struct Outputs {
  std::string predict, neighbors;
};

Outputs outputs(const std::string& train, const std::string& query, std::vector<std::string> extra = {}) {
  std::vector<std::string> p{"predict", "--train", train, "--query", query, "-k", "3", "--proba", "--weights", "distance"};
  std::vector<std::string> n{"neighbors", "--train", train, "--query", query, "-k", "4"};
  p.insert(p.end(), extra.begin(), extra.end());
  n.insert(n.end(), extra.begin(), extra.end());
  return {cli_ok(p), cli_ok(n)};
}

class CliVariants : public ::testing::Test {
 protected:
  void SetUp() override {
    train_text = read_file(case_file("base_train.csv"));
    query_text = read_file(case_file("base_query.csv"));
    plain = outputs(case_file("base_train.csv"), case_file("base_query.csv"));
  }
  void expect_plain(const Outputs& o, const std::string& what) {
    EXPECT_EQ(o.predict, plain.predict) << what;
    EXPECT_EQ(o.neighbors, plain.neighbors) << what;
  }
  // Applies `f` to every line of a text (without its "\n").
  static std::string map_lines(const std::string& text, const std::function<std::string(const std::string&)>& f) {
    std::string out;
    for (const auto& l : lines_of(text)) out += f(l) + "\n";
    return out;
  }
  std::string train_text, query_text;
  Outputs plain;
};

TEST_F(CliVariants, PlainOutputIsMeaningful) {
  // The baseline itself: 4 queries, several classes predicted, 4 neighbours each.
  const auto rows = rows_of(plain.predict);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"prediction", "p_blue", "p_green", "p_red"}));
  EXPECT_EQ(rows[1][0], "red");
  EXPECT_EQ(rows[2][0], "blue");
  EXPECT_EQ(rows[3][0], "green");
  check_neighbors(plain.neighbors, 4, 4, 7);
}

TEST_F(CliVariants, Utf8ByteOrderMark) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string tr = write_temp("bom_train.csv", bom + train_text), q = write_temp("bom_query.csv", bom + query_text);
  expect_plain(outputs(tr, q), "BOM in both files");
  expect_plain(outputs(tr, case_file("base_query.csv")), "BOM in the training file");
  // Without a header the BOM must not end up in the first cell.
  const std::string nh = write_temp("bom_noheader.csv", bom + train_text.substr(train_text.find('\n') + 1));
  const std::string nq = write_temp("bom_noheader_query.csv", bom + query_text.substr(query_text.find('\n') + 1));
  expect_plain(outputs(nh, nq, {"--no-header"}), "BOM without a header");
}

TEST_F(CliVariants, CrlfLineEnds) {
  const auto crlf = [](const std::string& l) { return l + "\r"; };
  const std::string tr = write_temp("crlf_train.csv", map_lines(train_text, crlf));
  const std::string q = write_temp("crlf_query.csv", map_lines(query_text, crlf));
  ASSERT_NE(read_file(tr).find("\r\n"), std::string::npos);
  expect_plain(outputs(tr, q), "CRLF");
}

TEST_F(CliVariants, NoTrailingNewline) {
  const std::string tr = write_temp("nonl_train.csv", train_text.substr(0, train_text.size() - 1));
  const std::string q = write_temp("nonl_query.csv", query_text.substr(0, query_text.size() - 1));
  ASSERT_NE(read_file(tr).back(), '\n');
  expect_plain(outputs(tr, q), "no trailing newline");
  // Blank lines (also at the end) are skipped.
  expect_plain(outputs(write_temp("blank_train.csv", train_text + "\n\n"), q), "blank lines at the end");
}

TEST_F(CliVariants, QuotedFields) {
  const auto quote_all = [](const std::string& l) {
    std::string out;
    for (const auto& f : split(l, ',')) out += (out.empty() ? "\"" : ",\"") + f + "\"";
    return out;
  };
  const std::string tr = write_temp("quoted_train.csv", map_lines(train_text, quote_all));
  const std::string q = write_temp("quoted_query.csv", map_lines(query_text, quote_all));
  ASSERT_EQ(read_file(tr).substr(0, 6), "\"f1\",\"");
  expect_plain(outputs(tr, q), "every field quoted");
}

TEST_F(CliVariants, QuotedLabelWithCommaAndQuote) {
  // "red" becomes "dark, red" and "blue" becomes 'say "blue"' (quoted, with doubled quotes).
  const auto relabel = [](const std::string& l) {
    std::string r = l;
    const auto pos = r.rfind(',');
    const std::string label = r.substr(pos + 1);
    if (label == "red") r = r.substr(0, pos) + ",\"dark, red\"";
    if (label == "blue") r = r.substr(0, pos) + ",\"say \"\"blue\"\"\"";
    return r;
  };
  const std::string tr = write_temp("quoted_label_train.csv", map_lines(train_text, relabel));
  const Outputs o = outputs(tr, case_file("base_query.csv"));
  // Classes sort by bytes: "dark, red" < "green" < "say \"blue\"". The output quotes them as CSV.
  const auto plain_rows = rows_of(plain.predict);
  std::string expected = "prediction,\"p_dark, red\",p_green,\"p_say \"\"blue\"\"\"\n";
  const std::map<std::string, std::string> renamed{{"red", "\"dark, red\""}, {"blue", "\"say \"\"blue\"\"\""}, {"green", "green"}};
  for (std::size_t i = 1; i < plain_rows.size(); ++i) {
    const auto& r = plain_rows[i];  // prediction, p_blue, p_green, p_red
    expected += renamed.at(r[0]) + "," + r[3] + "," + r[2] + "," + r[1] + "\n";
  }
  EXPECT_EQ(o.predict, expected);
  EXPECT_EQ(o.neighbors, plain.neighbors);
}

TEST_F(CliVariants, SemicolonAndTabDelimiters) {
  const auto semi = [](const std::string& l) {
    std::string r = l;
    std::replace(r.begin(), r.end(), ',', ';');
    return r;
  };
  const auto tab = [](const std::string& l) {
    std::string r = l;
    std::replace(r.begin(), r.end(), ',', '\t');
    return r;
  };
  expect_plain(outputs(write_temp("semi_train.csv", map_lines(train_text, semi)), write_temp("semi_query.csv", map_lines(query_text, semi)),
                       {"--delimiter", ";"}),
               "--delimiter ;");
  expect_plain(outputs(write_temp("tab_train.tsv", map_lines(train_text, tab)), write_temp("tab_query.tsv", map_lines(query_text, tab)),
                       {"--delimiter", "tab"}),
               "--delimiter tab");
}

TEST_F(CliVariants, NoHeaderWithLabelIndex) {
  // Label first, no header row: --no-header --label 0. The query has the two features only, or
  // all three columns in the training file's positions.
  const auto label_first = [](const std::string& l) {
    const auto pos = l.rfind(',');
    return l.substr(pos + 1) + "," + l.substr(0, pos);
  };
  const std::string body = train_text.substr(train_text.find('\n') + 1);
  const std::string tr = write_temp("noheader_train.csv", map_lines(body, label_first));
  const std::string q = write_temp("noheader_query.csv", query_text.substr(query_text.find('\n') + 1));
  expect_plain(outputs(tr, q, {"--no-header", "--label", "0"}), "--no-header --label 0");
  const std::string q3 = write_temp("noheader_query3.csv", map_lines(query_text.substr(query_text.find('\n') + 1),
                                                                      [](const std::string& l) { return "red," + l; }));
  expect_plain(outputs(tr, q3, {"--no-header", "--label", "0"}), "--no-header, query with the label column");
  // Label last without a header: the default, or --label -1, or --label 2.
  const std::string tr_last = write_temp("noheader_last.csv", body);
  expect_plain(outputs(tr_last, q, {"--no-header"}), "--no-header");
  expect_plain(outputs(tr_last, q, {"--no-header", "--label", "-1"}), "--no-header --label -1");
  expect_plain(outputs(tr_last, q, {"--no-header", "--label", "2"}), "--no-header --label 2");
}

TEST_F(CliVariants, LabelByNameNotLast) {
  const auto label_first = [](const std::string& l) {
    const auto pos = l.rfind(',');
    return l.substr(pos + 1) + "," + l.substr(0, pos);
  };
  const std::string tr = write_temp("label_first.csv", map_lines(train_text, label_first));
  expect_plain(outputs(tr, case_file("base_query.csv"), {"--label", "label"}), "--label label");
  expect_plain(outputs(tr, case_file("base_query.csv"), {"--label", "0"}), "--label 0");
}

TEST_F(CliVariants, IgnoreAnIdColumn) {
  // An id column first: "id" in the header, then 1001, 1002, ...; as a feature it would change
  // the neighbours.
  int row = -1;
  const auto with_id = [&row](const std::string& l) { return (row++ < 0 ? std::string("id") : std::to_string(1000 + row)) + "," + l; };
  const std::string tr = write_temp("id_train.csv", map_lines(train_text, with_id));
  row = -1;
  const std::string q = write_temp("id_query.csv", map_lines(query_text, with_id));
  expect_plain(outputs(tr, q, {"--ignore", "id"}), "--ignore id, query with the id column");
  expect_plain(outputs(tr, case_file("base_query.csv"), {"--ignore", "id"}), "--ignore id, query without it");
  expect_plain(outputs(tr, q, {"--ignore", "0"}), "--ignore 0");
  // Without --ignore the id is a feature, and the answers change.
  EXPECT_NE(outputs(tr, q).neighbors, plain.neighbors);
}

TEST_F(CliVariants, QueryWithOrWithoutTheLabelAndInAnyColumnOrder) {
  // The training file itself as queries (label present) against the same rows without labels.
  const std::string without = write_temp("train_no_label.csv", map_lines(train_text, [](const std::string& l) {
                                           return l.substr(0, l.rfind(','));
                                         }));
  const Outputs a = outputs(case_file("base_train.csv"), case_file("base_train.csv"));
  const Outputs b = outputs(case_file("base_train.csv"), without);
  EXPECT_EQ(a.predict, b.predict);
  EXPECT_EQ(a.neighbors, b.neighbors);
  EXPECT_EQ(lines_of(a.predict).size(), 8u);
  // Columns are matched by name: f2 before f1 reads the same.
  const std::string swapped = write_temp("swapped_query.csv", map_lines(query_text, [](const std::string& l) {
                                           const auto p = l.find(',');
                                           return l.substr(p + 1) + "," + l.substr(0, p);
                                         }));
  expect_plain(outputs(case_file("base_train.csv"), swapped), "query columns swapped");
}

TEST_F(CliVariants, TrainFromStandardInput) {
  const std::string cat = "cat " + shell_quote(case_file("base_train.csv")) + " |";
  const CliResult p = cli_process({"predict", "--train", "-", "--query", case_file("base_query.csv"), "-k", "3", "--proba", "--weights",
                             "distance"},
                            cat);
  EXPECT_EQ(p.code, 0) << p;
  EXPECT_EQ(p.err, "") << p;
  EXPECT_EQ(p.out, plain.predict);
  const CliResult n = cli_process({"neighbors", "--train", "-", "--query", case_file("base_query.csv"), "-k", "4"}, cat);
  EXPECT_EQ(n.code, 0) << n;
  EXPECT_EQ(n.out, plain.neighbors);
  // The query from standard input, the training set from a file.
  const CliResult q = cli_process({"neighbors", "--train", case_file("base_train.csv"), "--query", "-", "-k", "4"},
                            "cat " + shell_quote(case_file("base_query.csv")) + " |");
  EXPECT_EQ(q.code, 0) << q;
  EXPECT_EQ(q.out, plain.neighbors);
  // Errors in standard input name it.
  const CliResult bad = cli_process({"predict", "--train", "-", "--query", case_file("base_query.csv"), "--numeric", "f2"},
                              "printf 'f1,f2,label\\n1,x,a\\n' |");
  check_bad(bad, {"stdin", {}, {"<stdin>:2:2:", "\"x\""}});
}

TEST_F(CliVariants, QuotedFieldsWithEmbeddedNewlines) {
  // An ignored "note" column first, whose quoted text spans three lines and holds the delimiter,
  // doubled quotes and a CRLF: every record reads as the plain row.
  int row = -1;
  const auto with_note = [&row](const std::string& l) {
    ++row;
    const std::string note = "\"row " + std::to_string(row) + "\nsecond, line\r\n\"\"third\"\"\"";
    return (row == 0 ? std::string("note") : note) + "," + l;
  };
  const std::string tr = write_temp("note_train.csv", map_lines(train_text, with_note));
  row = -1;
  const std::string q = write_temp("note_query.csv", map_lines(query_text, with_note));
  ASSERT_EQ(count_lines(read_file(tr)), 1u + 7u * 3u);
  expect_plain(outputs(tr, q, {"--ignore", "note"}), "a quoted note of three lines in both files");
  expect_plain(outputs(tr, case_file("base_query.csv"), {"--ignore", "note"}), "a quoted note of three lines");
}

TEST_F(CliVariants, QuotedLabelWithANewline) {
  // "red" becomes "dark\nred": classes sort by bytes as blue, "dark\nred", green, and the output
  // quotes the label as CSV.
  const auto relabel = [](const std::string& l) {
    const auto pos = l.rfind(',');
    return l.substr(pos + 1) == "red" ? l.substr(0, pos) + ",\"dark\nred\"" : l;
  };
  const std::string tr = write_temp("newline_label_train.csv", map_lines(train_text, relabel));
  const Outputs o = outputs(tr, case_file("base_query.csv"));
  const auto plain_rows = rows_of(plain.predict);
  std::string expected = "prediction,p_blue,\"p_dark\nred\",p_green\n";
  for (std::size_t i = 1; i < plain_rows.size(); ++i) {
    const auto& r = plain_rows[i];  // prediction, p_blue, p_green, p_red
    expected += (r[0] == "red" ? "\"dark\nred\"" : r[0]) + "," + r[1] + "," + r[3] + "," + r[2] + "\n";
  }
  EXPECT_EQ(o.predict, expected);
  EXPECT_EQ(o.neighbors, plain.neighbors);
}

TEST_F(CliVariants, ConstantColumn) {
  // A column c = 7 between f1 and f2 in both files. Its range (and variance) is 0, so it is
  // scaled by 1 and every training and query value becomes 7 - 7 = 0: the distances are the plain
  // ones, with every scaling.
  int row = -1;
  const auto with_c = [&row](const std::string& l) {
    const auto p = l.find(',');
    return l.substr(0, p) + (++row == 0 ? ",c," : ",7,") + l.substr(p + 1);
  };
  const std::string tr = write_temp("const_train.csv", map_lines(train_text, with_c));
  row = -1;
  const std::string q = write_temp("const_query.csv", map_lines(query_text, with_c));
  ASSERT_EQ(read_file(tr).substr(0, 20), "f1,c,f2,label\n1.0,7,");
  expect_plain(outputs(tr, q), "a constant column, min-max scaling");
  for (const char* scale : {"standard", "none"}) {
    const Outputs want = outputs(case_file("base_train.csv"), case_file("base_query.csv"), {"--scale", scale});
    const Outputs got = outputs(tr, q, {"--scale", scale});
    EXPECT_EQ(got.predict, want.predict) << scale;
    EXPECT_EQ(got.neighbors, want.neighbors) << scale;
  }
}

TEST_F(CliVariants, DuplicatedRows) {
  // Every training row twice: row i becomes rows 2i and 2i+1 at equal distances, so the k = 8
  // neighbours are the plain k = 4 ones, each twice, the copy after the original. A uniform vote
  // over k = 6 counts each plain neighbour of k = 3 twice: the same shares, bit for bit.
  std::string doubled;
  const auto lines = lines_of(train_text);
  for (std::size_t i = 0; i < lines.size(); ++i) doubled += lines[i] + "\n" + (i ? lines[i] + "\n" : "");
  const std::string tr = write_temp("doubled_train.csv", doubled);
  const std::string q = case_file("base_query.csv");
  std::string expected = "query,rank,index,distance\n";
  for (const auto& r : rows_of(plain.neighbors)) {
    if (r[0] == "query") continue;
    const long rank = std::stol(r[1]), index = std::stol(r[2]);
    for (long copy = 0; copy < 2; ++copy)
      expected += r[0] + "," + std::to_string(2 * rank - 1 + copy) + "," + std::to_string(2 * index + copy) + "," +
                  r[3] + "\n";
  }
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "8"}), expected);
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "6", "--proba"}),
            cli_ok({"predict", "--train", case_file("base_train.csv"), "--query", q, "-k", "3", "--proba"}));
}

TEST_F(CliVariants, SingleClass) {
  // Every label "red": the neighbours do not depend on the labels; every vote is all red.
  const std::string tr = write_temp("one_class_train.csv", map_lines(train_text, [](const std::string& l) {
                                      return l.substr(0, l.rfind(',')) + (l.rfind("f1,", 0) == 0 ? ",label" : ",red");
                                    }));
  const Outputs o = outputs(tr, case_file("base_query.csv"));
  EXPECT_EQ(o.predict, "prediction,p_red\nred,1\nred,1\nred,1\nred,1\n");
  EXPECT_EQ(o.neighbors, plain.neighbors);
  // Cross-validated: every score is exactly 1 in every fold (no NaN from a class never missed).
  const Json j = parse_json(cli_ok({"evaluate", "--train", tr, "-k", "3", "--folds", "3", "--format", "json"}));
  ASSERT_EQ(j["metrics"].size(), 3u);
  for (const auto& [name, score] : j["metrics"].object) {
    EXPECT_EQ(score["mean"].number, 1.0) << name;
    EXPECT_EQ(score["std"].number, 0.0) << name;
  }
}

TEST(CliAwkward, SingleTrainingRowWithKOne) {
  // One training row (3, 4). Min-max: range 0, so the scale is 1 and the offset 3, 4 (standard:
  // mean 3, 4 and deviation 0, the same): the row becomes (0, 0) and a query (x, y) becomes
  // (x - 3, y - 4). The queries (0, 0), (6, 8) and (3, 4) are then at 5, 5 and 0, as unscaled.
  const std::string tr = write_temp("one_row.csv", "x,y,label\n3,4,a\n");
  const std::string tr_regress = write_temp("one_row_regress.csv", "x,y,target\n3,4,2.5\n");
  const std::string q = write_temp("one_row_query.csv", "x,y\n0,0\n6,8\n3,4\n");
  for (const char* scale : {"minmax", "standard", "none"}) {
    SCOPED_TRACE(scale);
    EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "1", "--scale", scale}),
              "query,rank,index,distance\n0,1,0,5\n1,1,0,5\n2,1,0,0\n");
    EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "1", "--scale", scale, "--proba", "--weights",
                      "distance"}),
              "prediction,p_a\na,1\na,1\na,1\n");
    // Distance weights at distance 0 (the third query) and 5: one row, its target either way.
    EXPECT_EQ(cli_ok({"predict", "--train", tr_regress, "--query", q, "-k", "1", "--scale", scale, "--task", "regress",
                      "--weights", "distance"}),
              "prediction\n2.5\n2.5\n2.5\n");
  }
}

TEST(CliAwkward, QueryOffAConstantColumn) {
  // Training rows (0, 5) and (4, 5); query (1, 6). Min-max: x is divided by 4, c has range 0 and
  // is scaled by 1 with offset 5. The query becomes (0.25, 1), the rows (0, 0) and (1, 0):
  // distances sqrt(0.0625 + 1) = sqrt(1.0625) and sqrt(0.5625 + 1) = 1.25.
  const std::string tr = write_temp("const_col.csv", "x,c,label\n0,5,a\n4,5,b\n");
  const std::string q = write_temp("const_col_query.csv", "x,c\n1,6\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "2"}),
            "query,rank,index,distance\n0,1,0," + knn::app::format_double(std::sqrt(1.0625)) + "\n0,2,1,1.25\n");
}

TEST(CliAwkward, AllIdenticalRows) {
  // Five rows (2, 3) labelled a, b, a, b, a with targets 1..5. Every range is 0: the rows become
  // (0, 0), the query (2, 3) becomes (0, 0) and (5, 7) becomes (3, 4). All rows tie, so the
  // neighbours are rows 0, 1, 2, ... in index order, at 0 and at 5.
  const std::string tr = write_temp("identical.csv", "x,y,label\n2,3,a\n2,3,b\n2,3,a\n2,3,b\n2,3,a\n");
  const std::string tr_regress = write_temp("identical_regress.csv", "x,y,target\n2,3,1\n2,3,2\n2,3,3\n2,3,4\n2,3,5\n");
  const std::string q = write_temp("identical_query.csv", "x,y\n2,3\n5,7\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "5"}),
            "query,rank,index,distance\n0,1,0,0\n0,2,1,0\n0,3,2,0\n0,4,3,0\n0,5,4,0\n"
            "1,1,0,5\n1,2,1,5\n1,3,2,5\n1,4,3,5\n1,5,4,5\n");
  // k = 3: rows 0, 1, 2 vote a, b, a. k = 5: a three times of five.
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "3", "--proba"}),
            "prediction,p_a,p_b\na,0.6666666666666666,0.3333333333333333\na,0.6666666666666666,0.3333333333333333\n");
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "5", "--proba"}),
            "prediction,p_a,p_b\na,0.6,0.4\na,0.6,0.4\n");
  // The mean of 1..5; with distance weights the first query has all five at distance 0, which
  // then count alone and equally. (The second query's weights, 1/5 each, do not sum exactly: its
  // value is left to the rounding tests of the weights.)
  const std::vector<std::string> args{"predict", "--train", tr_regress, "--query", q, "-k", "5", "--task", "regress"};
  EXPECT_EQ(cli_ok(args), "prediction\n3\n3\n");
  auto distance = args;
  distance.insert(distance.end(), {"--weights", "distance"});
  EXPECT_EQ(cli_ok(distance).substr(0, 13), "prediction\n3\n");
}

TEST(CliAwkward, FeaturesThatDifferOnlyInTheLastFloatBit) {
  // As float32, 1.0000001 is 1 + 2^-23 (0x3F800001) and 0.99999994 is 1 - 2^-24 (0x3F7FFFFF),
  // the two neighbours of 1. Distances are computed in double from the floats: 2^-23 =
  // 1.1920928955078125e-07, 2^-24 = 5.960464477539063e-08 and their sum 1.7881393432617188e-07.
  // The rows are in neither ascending nor descending order, so index order cannot pass for the
  // right one.
  const std::string tr = write_temp("last_bit.csv", "x,label\n1.0000001,b\n1,a\n0.99999994,c\n");
  const std::string q = write_temp("last_bit_query.csv", "x\n1\n1.0000001\n");
  const std::string unscaled = cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "3", "--scale", "none"});
  EXPECT_EQ(unscaled,
            "query,rank,index,distance\n"
            "0,1,1,0\n0,2,2,5.960464477539063e-08\n0,3,0,1.1920928955078125e-07\n"
            "1,1,0,0\n1,2,1,1.1920928955078125e-07\n1,3,2,1.7881393432617188e-07\n");
  EXPECT_EQ(cli_ok({"predict", "--train", tr, "--query", q, "-k", "1", "--scale", "none"}), "prediction\na\nb\n");
  // Min-max: the range is 3 * 2^-24, so the rows scale to 1, 1/3 and 0, and 1/3 rounds to the
  // float 0.3333333432674408; the differences of those floats are exact in double.
  EXPECT_EQ(cli_ok({"neighbors", "--train", tr, "--query", q, "-k", "3"}),
            "query,rank,index,distance\n"
            "0,1,1,0\n0,2,2,0.3333333432674408\n0,3,0,0.6666666567325592\n"
            "1,1,0,0\n1,2,1,0.6666666567325592\n1,3,2,1\n");
  // The same floats written out in full decimal read the same, bit for bit.
  const std::string exact = write_temp("last_bit_exact.csv",
                                       "x,label\n1.00000011920928955078125,b\n1,a\n0.999999940395355224609375,c\n");
  const std::string q_exact = write_temp("last_bit_exact_query.csv", "x\n1.0\n1.00000011920928955078125\n");
  EXPECT_EQ(cli_ok({"neighbors", "--train", exact, "--query", q_exact, "-k", "3", "--scale", "none"}), unscaled);
}

TEST(CliTinyValues, UnderflowReadsAsZero) {
  // Cells are read as float32, correctly rounded: 1e-50 and 1e-400 are finite numbers whose
  // nearest float is 0 (only values beyond float's range are refused).
  const std::string tr = write_temp("tiny.csv", "x,label\n1e-50,a\n1e-400,b\n1,a\n");
  const std::string q = write_temp("tiny_query.csv", "x\n0\n");
  const CliResult r = cli({"neighbors", "--train", tr, "--query", q, "-k", "3", "--scale", "none"});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "query,rank,index,distance\n0,1,0,0\n0,2,1,0\n0,3,2,1\n") << r;
}

// =============================================================================================
// The program itself.

TEST(CliProcess, PredictMatchesInProcessRun) {
  const std::vector<std::string> args{"predict", "--train", data_file("iris.csv"), "--query", data_file("iris.csv"), "-k", "5", "--proba"};
  const CliResult r = cli_process(args);
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, cli_ok(args));
  EXPECT_EQ(count_lines(r.out), 151u);
}

TEST(CliProcess, EvaluateAndNeighborsExitZero) {
  const CliResult e = cli_process({"evaluate", "--train", data_file("wine.csv"), "-k", "5", "--device", "cpu"});
  EXPECT_EQ(e.code, 0) << e;
  EXPECT_EQ(e.err, "") << e;
  EXPECT_NE(e.out.find("accuracy"), std::string::npos) << e;
  const CliResult n = cli_process({"neighbors", "--train", case_file("line_regress.csv"), "--query", case_file("line_query_3.csv"), "-k", "2"});
  EXPECT_EQ(n.code, 0) << n;
  EXPECT_EQ(n.out, "query,rank,index,distance\n0,1,2,0.125\n0,2,3,0.125\n");
}

TEST(CliProcess, VersionAndHelp) {
  const CliResult v = cli_process({"--version"});
  EXPECT_EQ(v.code, 0) << v;
  EXPECT_EQ(v.out.rfind("knn-cli ", 0), 0u) << v;
  EXPECT_EQ(count_lines(v.out), 1u) << v;
  EXPECT_EQ(v.err, "");
  for (const char* cmd : {"predict", "evaluate", "neighbors"}) {
    const CliResult h = cli({cmd, "--help"});
    EXPECT_EQ(h.code, 0) << h;
    EXPECT_NE(h.out.find("--train"), std::string::npos) << h;
    EXPECT_NE(h.out.find(std::string("knn-cli ") + cmd), std::string::npos) << h;
    EXPECT_EQ(h.err, "");
  }
}

}  // namespace

// Tabular files as R and pandas write them: row names left out with a note, categories one-hot,
// missing cells filled, identifiers carried, and the notes printed after the output.
TEST(CliTabular, RowNamesCategoriesMissingCellsAndIds) {
  const std::string train = case_file("tabular/rnames.csv"), query = case_file("tabular/rnames_query.csv");
  const CliResult p = cli({"predict", "--train", train, "--query", query, "-k", "3", "--impute", "mean", "--proba", "--id", "0"});
  ASSERT_EQ(p.code, 0) << p;
  // Query 1 (x = 1, red) is nearest rows 1 (1.5, red), 5 (0.5, green) and 3 (2.5, red): a, a, a.
  EXPECT_EQ(p.out.substr(0, p.out.find('\n')), ",prediction,p_a,p_b") << p;
  EXPECT_NE(p.out.find("\n1,a,1,0\n"), std::string::npos) << p;
  // The row names are the identifier here, so no note says they were left out.
  EXPECT_EQ(p.err.find("has no name in the header"), std::string::npos) << p;
  const CliResult plain = cli({"predict", "--train", train, "--query", query, "-k", "3", "--impute", "mean"});
  EXPECT_NE(plain.err.find("note: column 1 of " + train + " has no name in the header"), std::string::npos) << plain;
  EXPECT_NE(plain.err.find("; --id 0 carries them to the output"), std::string::npos) << plain;
  EXPECT_EQ(plain.out, "prediction\na\na\n") << plain;
  // evaluate prints scores, not rows: the same note without --id.
  const CliResult scores = cli({"evaluate", "--train", train, "-k", "1", "--folds", "2", "--impute", "mean"});
  ASSERT_EQ(scores.code, 0) << scores;
  EXPECT_NE(scores.err.find("note: column 1 of " + train + " has no name in the header (row names"), std::string::npos) << scores;
  EXPECT_EQ(scores.err.find("--id"), std::string::npos) << scores;
  EXPECT_NE(p.err.find("note: 1 cell of " + query + " holds a category the training rows lack (in \"colour\"): encoded as all zeros"),
            std::string::npos)
      << p;
  const std::string json = cli({"predict", "--train", train, "--query", query, "-k", "3", "--impute", "mean", "--format", "json",
                                "--id", "0"})
                               .out;
  EXPECT_NE(json.find("\"ids\""), std::string::npos) << json;
}

// Files that are not what they seem, as public data sets ship them: a title line above the
// header (scikit-learn's copy of the Boston housing data), and no header at all (UCI's iris.data).
// The run goes on, and the notes say what was guessed and which option undoes it.
TEST(CliTabular, NotesForAHeaderOfNumbersAndNumbersReadAsCategories) {
  std::string titled = "20,3,,\nx,y,z,label\n", headless;
  for (int i = 0; i < 20; ++i) {
    const std::string row = std::to_string(i % 10) + "," + std::to_string(i % 7) + ".5," + std::to_string(i * 3) + "," + (i % 2 ? "a" : "b") + "\n";
    titled += row;
    headless += row;
  }
  const std::string t = write_temp("titled.csv", titled), h = write_temp("headless.csv", headless);
  const CliResult r = cli({"evaluate", "--train", t, "-k", "3"});
  ASSERT_EQ(r.code, 0) << r;
  // Column 3's name is empty but it is not a leading column: no word of row names.
  EXPECT_NE(r.err.find("note: column 3 of " + t + " has no name in the header: left out of the features"), std::string::npos) << r;
  EXPECT_NE(r.err.find("note: the header row of " + t + " names its feature columns with numbers (\"20\", \"3\"): if the file has no "
                       "header row, give --no-header"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find("note: column \"20\" of " + t + " is read as categories for 1 text (\"x\") among 10 distinct numbers: "
                       "--numeric \"20\" stops the run at it, naming its line; --na-values makes it a missing value"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find("note: column \"3\" of " + t + " is read as categories for 1 text (\"y\") among 7"), std::string::npos) << r;
  // inspect gives the same guesses beside its table, where column 3 has no name, not row names.
  const CliResult in = cli({"inspect", t});
  ASSERT_EQ(in.code, 0) << in;
  EXPECT_NE(in.out.find("\ncolumn role "), std::string::npos) << in;
  EXPECT_NE(in.out.find("\n(3)    no name "), std::string::npos) << in;
  EXPECT_EQ(in.out.find("row names"), std::string::npos) << in;
  EXPECT_NE(in.err.find("note: column \"20\" of " + t + " is read as categories"), std::string::npos) << in;
  EXPECT_NE(in.err.find("note: the header row of " + t), std::string::npos) << in;
  // What the notes offer: --numeric names the stray line.
  const CliResult numeric = cli({"evaluate", "--train", t, "--numeric", "20"});
  EXPECT_EQ(numeric.code, 2) << numeric;
  EXPECT_NE(numeric.err.find(t + ":2:1: not a finite number: \"x\""), std::string::npos) << numeric;

  const CliResult headerless = cli({"evaluate", "--train", h, "-k", "3"});
  ASSERT_EQ(headerless.code, 0) << headerless;
  EXPECT_NE(headerless.err.find("note: the header row of " + h + " names its feature columns with numbers (\"0\", \"0.5\", \"0\")"),
            std::string::npos)
      << headerless;
  const CliResult fixed = cli({"evaluate", "--train", h, "-k", "3", "--no-header"});
  ASSERT_EQ(fixed.code, 0) << fixed;
  EXPECT_EQ(fixed.err.find("note:"), std::string::npos) << fixed;
  EXPECT_NE(fixed.out.find("(20 rows, 3 features, 2 classes)"), std::string::npos) << fixed;
  // The title line: the note names --skip-lines, which reads the file as if it had none.
  EXPECT_NE(r.err.find("; if a title line stands above the header, --skip-lines 1 passes over it"), std::string::npos) << r;
  // A text title, one name, over a header of more: the second line has more fields than the
  // first, and the error asks whether the first is a title; --skip-lines 1 reads the file.
  const std::string text_title = write_temp("text_title.csv", "Cars 1993\nx,type\n1,a\n2,b\n3,a\n4,b\n");
  cli_refused({"evaluate", "--train", text_title, "--label", "type", "-k", "1", "--folds", "2"},
              text_title + ":2:2: expected 1 field, found 2 (extra value \"type\"); line 1 (the header) has 1: a "
                           "title line above the header? (--skip-lines passes over lines at the top of each file read)");
  // A text title over a file of one column: the label is not found, or is the only column, and
  // the error names --skip-lines.
  const std::string one_column = write_temp("one_column_title.csv", "Cars 1993\ntype\na\nb\na\nb\n");
  cli_refused({"evaluate", "--train", one_column, "--label", "type", "-k", "1", "--folds", "2"},
              "no column named \"type\" in " + one_column + " (columns: \"Cars 1993\"); its header row holds one name: "
                                                           "a title line above the header? (--skip-lines passes over lines at the top of each file read)");
  cli_refused({"evaluate", "--train", one_column, "-k", "1", "--folds", "2"},
              one_column + ":1: no feature columns (only the label \"Cars 1993\"); its header row holds one name");
  EXPECT_EQ(cli({"evaluate", "--train", text_title, "--label", "type", "-k", "1", "--folds", "2", "--skip-lines", "1"}).code, 0);
  // A title with a comma, over a header of more names: the second line is refused with the
  // question, training and query file alike; two lines skipped read a data row as the header.
  const std::string wide_title = write_temp("wide_title.csv", "Survey, 1992\nx,y,type\n1,5,a\n2,6,b\n3,7,a\n4,8,b\n");
  cli_refused({"evaluate", "--train", wide_title, "--label", "type", "-k", "1", "--folds", "2"},
              wide_title + ":2:3: expected 2 fields, found 3 (extra value \"type\"); line 1 (the header) has 2: a title "
                           "line above the header? (--skip-lines passes over lines at the top of each file read)");
  const std::string plain = write_temp("plain.csv", "x,y,type\n1,5,a\n2,6,b\n3,7,a\n4,8,b\n");
  cli_refused({"predict", "--train", plain, "--label", "type", "--query", wide_title, "-k", "1"},
              wide_title + ":2:3: expected 2 fields, found 3 (extra value \"type\"); line 1 (the header) has 2: a title");
  cli_refused({"evaluate", "--train", wide_title, "--label", "type", "-k", "1", "--folds", "2", "--skip-lines", "2"},
              "its header row holds numbers among its names: --skip-lines 2 passes over lines of every file read, "
              "and may have passed over this one's header");
  const CliResult skipped = cli({"evaluate", "--train", t, "-k", "3", "--skip-lines", "1"});
  ASSERT_EQ(skipped.code, 0) << skipped;
  EXPECT_EQ(skipped.err.find("note:"), std::string::npos) << skipped;
  const std::string untitled = write_temp("untitled.csv", titled.substr(titled.find('\n') + 1));
  std::string plain_out = cli({"evaluate", "--train", untitled, "-k", "3"}).out;
  plain_out.replace(plain_out.find(untitled), untitled.size(), t);  // the summary names the file
  EXPECT_EQ(skipped.out, plain_out) << skipped;
  // A query file with the title, read against a model of the file without: the error says what
  // may be wrong; with --skip-lines beside --model the query file reads.
  const std::string model = (knn::test::temp_dir() / "untitled.knn").string();
  ASSERT_EQ(cli({"fit", "--train", untitled, "-k", "3", "-o", model}).code, 0);
  const CliResult titled_query = cli({"predict", "--model", model, "--query", t});
  EXPECT_EQ(titled_query.code, 2) << titled_query;
  EXPECT_NE(titled_query.err.find(t + ":1: no column \"x\""), std::string::npos) << titled_query;
  EXPECT_NE(titled_query.err.find("its header row holds numbers only: a title line above the header? (--skip-lines"), std::string::npos)
      << titled_query;
  const CliResult query_skipped = cli({"predict", "--model", model, "--query", t, "--skip-lines", "1"});
  ASSERT_EQ(query_skipped.code, 0) << query_skipped;
  EXPECT_EQ(query_skipped.out, cli({"predict", "--model", model, "--query", untitled}).out);
  // Messages about the header name its line of the file, blank lines after the title counted.
  const std::string twice = write_temp("title_then_twice.csv", "title\n\nx,x,label\n1,2,a\n3,4,b\n");
  EXPECT_NE(cli({"evaluate", "--train", twice, "--skip-lines", "1", "--label", "x"}).err.find(twice + ":3: column name \"x\""),
            std::string::npos);
  // A count that passes over this file's header: the note says the count is every file's.
  const CliResult too_many = cli({"evaluate", "--train", untitled, "-k", "3", "--skip-lines", "1"});
  EXPECT_NE(too_many.err.find("--skip-lines 1 passes over the first line of every file the command reads: check that this file has "
                              "that many above its header"),
            std::string::npos)
      << too_many;

  // No such notes for a file with names, for categories given as such, or for a column of
  // texts with a few numbers in it.
  EXPECT_EQ(cli({"evaluate", "--train", data_file("iris.csv")}).err.find("note:"), std::string::npos);
  EXPECT_EQ(cli({"evaluate", "--train", t, "--categorical", "20,3"}).err.find("is read as categories"), std::string::npos);
  // A header a program wrote: pandas' positions for an array's columns, with its row names.
  std::string positions = ",0,1,label\n";
  for (int i = 0; i < 20; ++i) positions += std::to_string(i) + "," + std::to_string(i % 5) + "," + std::to_string(i % 3) + "," + (i % 2 ? "a" : "b") + "\n";
  EXPECT_EQ(cli({"evaluate", "--train", write_temp("positions.csv", positions), "-k", "3"}).err.find("header row"), std::string::npos);
  // Hexadecimal is text to the reader, so a column of it is no column of numbers.
  std::string hex = "h,x,label\n";
  for (int i = 0; i < 20; ++i) hex += "0x0" + std::to_string(i % 9) + "," + std::to_string(i) + "," + (i % 2 ? "a" : "b") + "\n";
  hex += "none,3,a\n";
  EXPECT_EQ(cli({"evaluate", "--train", write_temp("hex.csv", hex), "-k", "3"}).err.find("is read as categories"), std::string::npos);
  std::string mixed = "size,x,label\n";
  for (int i = 0; i < 20; ++i) mixed += std::string(i % 4 ? "small" : "3") + "," + std::to_string(i) + "," + (i % 2 ? "a" : "b") + "\n";
  EXPECT_EQ(cli({"evaluate", "--train", write_temp("mixed.csv", mixed), "-k", "3"}).err.find("note:"), std::string::npos);
}

// A file of another separator than --delimiter reads as one column: the errors that meet it (no
// feature, no such label, a second line wider than the header) name the separator its lines
// share, and with it the file reads.
TEST(CliTabular, AFileOfAnotherSeparatorIsNamedSo) {
  std::string spaces, semicolons = "x;y;type\n", decimal_commas = "x;y;type\n";
  for (int i = 0; i < 12; ++i) {
    spaces += std::to_string(i) + " " + std::to_string(i % 4) + " " + std::to_string(i % 2) + "\n";
    semicolons += std::to_string(i) + ";" + std::to_string(i % 3) + ";" + (i % 2 ? "a" : "b") + "\n";
    decimal_commas += std::to_string(i) + ",5;" + std::to_string(i % 3) + ";" + (i % 2 ? "a" : "b") + "\n";
  }
  const std::string sp = write_temp("spaces.csv", spaces), sc = write_temp("semicolons.csv", semicolons),
                    dc = write_temp("decimal_commas.csv", decimal_commas);
  cli_refused({"evaluate", "--train", sp, "--no-header", "-k", "3"},
              sp + ":1: no feature columns (only the label \"0\"); its first 5 lines each hold 3 fields separated by spaces: "
                   "give --delimiter ' '");
  cli_refused({"evaluate", "--train", sc, "--label", "type", "-k", "3"},
              "no column named \"type\" in " + sc + " (columns: \"x;y;type\"); its header row holds one name: its first 5 lines "
                   "each hold 3 fields separated by semicolons: give --delimiter ';'");
  cli_refused({"evaluate", "--train", sc, "-k", "3"},
              sc + ":1: no feature columns (only the label \"x;y;type\"); its header row holds one name: its first 5 lines each "
                   "hold 3 fields separated by semicolons: give --delimiter ';'");
  cli_refused({"evaluate", "--train", dc, "-k", "3"},
              dc + ":2:2: expected 1 field, found 2 (extra value \"5;0;b\"); line 1 (the header) has 1: its first 5 lines each "
                   "hold 3 fields separated by semicolons: give --delimiter ';' and --decimal ',' for its decimal commas");
  const std::string plain = write_temp("plain_for_query.csv", "x,y,type\n1,2,a\n3,4,b\n5,6,a\n");
  cli_refused({"predict", "--train", plain, "--query", sc, "-k", "1"},
              "; its header row holds one name: its first 5 lines each hold 3 fields separated by semicolons: give --delimiter ';'");
  EXPECT_EQ(cli({"evaluate", "--train", sp, "--no-header", "--delimiter", " ", "-k", "3", "--folds", "2"}).code, 0);
  EXPECT_EQ(cli({"evaluate", "--train", sc, "--delimiter", ";", "-k", "3", "--folds", "2"}).code, 0);
}

// Numbers with a decimal comma: read as categories, with a note, until --decimal ',' reads them;
// then every answer is that of the same file with points, a model file's included.
TEST(CliTabular, DecimalCommasAreNumbersWithDecimal) {
  std::string points = "x,y,height,type\n", commas = "x;y;height;type\n";
  for (int i = 0; i < 30; ++i) {
    const std::string row = std::to_string(i % 7) + "." + std::to_string(i % 4 + 1) + "," + std::to_string(i % 5) + ".25," +
                            std::to_string(150 + i) + ".5," + (i % 3 ? "a" : "b");
    points += row + "\n";
    std::string semi = row;
    for (char& c : semi) c = c == ',' ? ';' : c == '.' ? ',' : c;
    commas += semi + "\n";
  }
  const std::string p = write_temp("points.csv", points), c = write_temp("commas.csv", commas);
  // `args`, "FILE" standing for the file read (training and query file alike).
  const auto same = [&](const std::vector<std::string>& args) {
    std::vector<std::string> with_points = args, with_commas = args;
    std::replace(with_points.begin(), with_points.end(), std::string("FILE"), p);
    std::replace(with_commas.begin(), with_commas.end(), std::string("FILE"), c);
    with_commas.insert(with_commas.end(), {"--delimiter", ";", "--decimal", ","});
    const CliResult a = cli(with_points), b = cli(with_commas);
    ASSERT_EQ(a.code, 0) << a;
    ASSERT_EQ(b.code, 0) << b;
    std::string out = b.out;
    if (const auto at = out.find(c); at != std::string::npos) out.replace(at, c.size(), p);  // the summary names the file
    EXPECT_EQ(out, a.out) << b;
    EXPECT_EQ(b.err, a.err) << b;
  };
  same({"evaluate", "--train", "FILE", "--label", "type", "-k", "3"});
  same({"evaluate", "--train", "FILE", "--label", "height", "--task", "regress", "-k", "3", "--format", "json"});
  same({"predict", "--train", "FILE", "--label", "type", "-k", "3", "--query", "FILE", "--proba"});
  same({"neighbors", "--train", "FILE", "--label", "type", "-k", "3", "--query", "FILE"});
  // Read at the semicolons alone, the columns are categories, and a note says why.
  const CliResult categories = cli({"evaluate", "--train", c, "--delimiter", ";", "--label", "type", "--ignore", "height", "-k", "3"});
  ASSERT_EQ(categories.code, 0) << categories;
  EXPECT_NE(categories.err.find("note: columns \"x\", \"y\" of " + c + " are read as categories, but their values are numbers with a decimal "
                                "comma (\"0,1\", \"0,2\", \"0,3\", ...): --decimal ',' reads them as numbers\n"),
            std::string::npos)
      << categories;
  const CliResult one_column = cli({"evaluate", "--train", c, "--delimiter", ";", "--label", "type", "--ignore", "height,y", "-k", "3"});
  EXPECT_NE(one_column.err.find("note: column \"x\" of " + c + " is read as categories, but its values are numbers with a decimal comma"),
            std::string::npos)
      << one_column;
  // Without its header, the first row's names are numbers by the file's mark, and a note says so.
  const std::string headerless = write_temp("commas_headerless.csv", commas.substr(commas.find('\n') + 1));
  const CliResult first_row = cli({"evaluate", "--train", headerless, "--delimiter", ";", "--decimal", ",", "-k", "3"});
  ASSERT_EQ(first_row.code, 0) << first_row;
  EXPECT_NE(first_row.err.find("note: the header row of " + headerless + " names its feature columns with numbers (\"0,1\", \"0,25\", \"150,5\")"),
            std::string::npos)
      << first_row;
  // A model file does not keep the mark: the query file's is given beside --model.
  const std::string model = (temp_dir() / "commas.knn").string();
  ASSERT_EQ(cli({"fit", "--train", c, "--delimiter", ";", "--decimal", ",", "--label", "type", "-k", "3", "-o", model}).code, 0);
  const CliResult from_model = cli({"predict", "--model", model, "--query", c, "--decimal", ","});
  const CliResult from_train = cli({"predict", "--train", p, "--label", "type", "-k", "3", "--query", p});
  ASSERT_EQ(from_model.code, 0) << from_model;
  EXPECT_EQ(from_model.out, from_train.out);
  cli_refused({"predict", "--model", model, "--query", c},
              c + ":2:1: not a finite number: \"0,1\" in column \"x\", a numeric column in " + c + " (a decimal comma: --decimal ',' reads it)");
  cli_refused({"evaluate", "--train", p, "--decimal", ","},
              "option --decimal: ',' is the delimiter too: give the files' field separator with --delimiter (';' where numbers have "
              "decimal commas, as spreadsheets write them)");
  cli_refused({"evaluate", "--train", c, "--delimiter", ";", "--decimal", "x"}, "option --decimal: \"x\" is not a decimal mark: give '.' or ','");
  cli_refused({"evaluate", "--train", c, "--delimiter", ";", "--decimal", ",,"}, "option --decimal: \",,\" is not a single character");
}

TEST(CliTabular, DroppedRowsKeepTheFilesRowNumbers) {
  const std::string train = case_file("tabular/rnames.csv"), query = case_file("tabular/rnames_query.csv");
  const CliResult n = cli({"neighbors", "--train", train, "--query", query, "-k", "2", "--drop-missing"});
  ASSERT_EQ(n.code, 0) << n;
  // Rows 1 and 3 (0-based) have a missing cell and are dropped; query 0 (1, red) is nearest rows
  // 0 (1.5, red) and 2 (2.5, red), named by their rows in the file, not by their places (0, 1).
  EXPECT_NE(n.out.find("\n0,1,0,"), std::string::npos) << n;
  EXPECT_NE(n.out.find("\n0,2,2,"), std::string::npos) << n;
  EXPECT_NE(n.err.find("note: dropped 2 rows with a missing value from " + train + " (--drop-missing); 4 remain"), std::string::npos) << n;
  // With --impute the missing cells are filled: only rows without a label would be dropped.
  const CliResult kept = cli({"neighbors", "--train", train, "--query", query, "-k", "2", "--drop-missing", "--impute", "mean"});
  ASSERT_EQ(kept.code, 0) << kept;
  EXPECT_EQ(kept.err.find("dropped"), std::string::npos) << kept;
}

// Where --impute fills the features, a dropped row lacked its label: the note and the summary say
// so rather than "a missing value", which the user had asked to be filled.
TEST(CliTabular, RowsDroppedForALabelSaySo) {
  const std::string train = write_temp("label_gaps.csv", "x,colour,label\n1.5,red,a\nNA,blue,b\n2.5,red,NA\n3,NA,b\n0.5,green,a\n4,blue,b\n"
                                                         "2,red,a\n1,blue,b\n");
  const CliResult imputed = cli({"evaluate", "--train", train, "-k", "2", "--folds", "2", "--drop-missing", "--impute", "median"});
  ASSERT_EQ(imputed.code, 0) << imputed;
  EXPECT_NE(imputed.err.find("note: dropped 1 row with a missing label from " + train + " (--drop-missing); 7 remain"), std::string::npos)
      << imputed;
  EXPECT_NE(imputed.out.find("\ndropped   1 row with a missing label\n"), std::string::npos) << imputed;
  const CliResult dropped = cli({"evaluate", "--train", train, "-k", "2", "--folds", "2", "--drop-missing"});
  ASSERT_EQ(dropped.code, 0) << dropped;
  EXPECT_NE(dropped.err.find("note: dropped 3 rows with a missing value from " + train + " (--drop-missing); 5 remain"), std::string::npos)
      << dropped;
  EXPECT_NE(dropped.out.find("\ndropped   3 rows with a missing value\n"), std::string::npos) << dropped;
}

TEST(CliTabular, IdentifierColumnsKeptOrLeftOutOnRequest) {
  const std::string ids = case_file("tabular/ids.csv");
  EXPECT_EQ(cli({"evaluate", "--train", ids, "--ignore", "NAME", "-k", "3", "--folds", "2"}).code, 0);
  EXPECT_EQ(cli({"evaluate", "--train", ids, "--categorical", "name", "-k", "3", "--folds", "2"}).code, 0);
  const CliResult s = cli({"evaluate", "--train", ids, "--ignore", "name", "-k", "3", "--folds", "2"});
  EXPECT_NE(s.out.find("  left out  name\n"), std::string::npos) << s;
  EXPECT_NE(s.out.find("  numeric   1: x\n"), std::string::npos) << s;
}

TEST(CliTabular, InspectDescribesTheColumns) {
  const CliResult t = cli({"inspect", case_file("tabular/rnames.csv")});
  ASSERT_EQ(t.code, 0) << t;
  EXPECT_NE(t.out.find("features  2 columns (1 numeric, 1 categorical), 4 once one-hot encoded"), std::string::npos) << t;
  EXPECT_NE(t.out.find("missing   2 cells in 2 columns"), std::string::npos) << t;
  EXPECT_NE(t.out.find("row names"), std::string::npos) << t;
  // --train names the file as the other commands name theirs: the same table.
  EXPECT_EQ(cli({"inspect", "--train", case_file("tabular/rnames.csv")}).out, t.out);
  const CliResult j = cli({"inspect", case_file("tabular/ids.csv"), "--format", "json"});
  ASSERT_EQ(j.code, 0) << j;
  EXPECT_NE(j.out.find("\"identifier\": true"), std::string::npos) << j;
  EXPECT_NE(j.out.find("\"rows\": 24"), std::string::npos) << j;
}
