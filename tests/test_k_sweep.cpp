// k-sweep: the table's shape, agreement with knn::evaluate run for one k at a time (and with the
// models fold by fold, and with knn-cli evaluate), agreement with scikit-learn on the same folds
// (tests/k_sweep/expected, see its README.md), the JSON document, the best-k line, the plot, and
// the bad-input contract: exit code 2, one "k-sweep: error:" line, nothing written.
// Most tests call knn::sweep::run in-process; one runs the built binary for its exit code and
// streams.
#include <gtest/gtest.h>

#include "app_runner.hpp"
#include "csv_table.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "knn/knn.hpp"
#include "output_writer.hpp"
#include "sweep.hpp"

#ifndef KNN_SOURCE_DIR
#error "KNN_SOURCE_DIR must be defined as the repository root"
#endif
#ifndef KNN_SWEEP_PATH
#error "KNN_SWEEP_PATH must be defined as the path of the built k-sweep"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kSource = KNN_SOURCE_DIR;
const std::string kSweep = KNN_SWEEP_PATH;
#ifdef KNN_CLI_PATH
const std::string kCli = KNN_CLI_PATH;
#else
const std::string kCli;
#endif
const char* const kAllWeights = "uniform,distance,gaussian,inverse,subtract";

std::string data_file(const std::string& name) { return kSource + "/data/" + name; }
std::string expected_file(const std::string& name) { return kSource + "/tests/k_sweep/expected/" + name; }

using knn::test::temp_dir;
using knn::test::write_temp;

std::string temp_path(const std::string& name) { return (temp_dir() / name).string(); }

using knn::test::read_file;
using knn::test::shell_quote;

// ---------------------------------------------------------------------------------------------
// Running k-sweep

using Outcome = knn::test::AppResult;

Outcome sweep(const std::vector<std::string>& args) { return knn::test::run_app(knn::sweep::run, "k-sweep", args); }

// The table of a run that must succeed with nothing on stderr but the best-k line.
std::string sweep_ok(const std::vector<std::string>& args) {
  const Outcome r = sweep(args);
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.err.rfind("best: k = ", 0), 0u) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  return r.out;
}

// A program as a subprocess; stdout and stderr captured apart.
Outcome process(const std::string& program, const std::vector<std::string>& args) {
  return knn::test::run_process(program, args);
}

using knn::test::ScopedEnv;

bool gnuplot_available() {
  if (std::getenv("KNN_GNUPLOT") && *std::getenv("KNN_GNUPLOT")) return true;
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

// ---------------------------------------------------------------------------------------------
// Reading tables

using knn::test::parse_table;
using knn::test::read_table;
using knn::test::split;
using knn::test::Table;

const std::string kClassifyHeader =
    "k,accuracy_mean,accuracy_std,balanced_accuracy_mean,balanced_accuracy_std,f1_macro_mean,f1_macro_std";
const std::string kRegressHeader = "k,rmse_mean,rmse_std,mae_mean,mae_std,r2_mean,r2_std";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// ---------------------------------------------------------------------------------------------
// A random data file: 6 features of mixed scales (one integer-valued, so exact distance ties
// happen), a class label and a numeric target.

std::string random_csv(std::uint64_t seed, std::size_t rows) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> klass(0, 2), small(0, 5);
  std::ostringstream s;
  s << "f1,f2,f3,f4,f5,f6,class,target\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const int c = klass(rng);
    const double f1 = normal(rng) + 0.9 * c, f2 = 100.0 * normal(rng) + 40.0 * c, f3 = small(rng) + c;
    const double f4 = std::exp(0.4 * normal(rng)), f5 = 0.001 * normal(rng), f6 = normal(rng) - 0.5 * c;
    const double target = 3.0 * f1 + 0.01 * f2 - f3 + 2.0 * std::sin(f6) + 0.3 * normal(rng);
    char line[512];
    std::snprintf(line, sizeof line, "%.5f,%.3f,%d,%.6f,%.7f,%.4f,%s,%.6f\n", f1, f2, static_cast<int>(f3), f4, f5, f6,
                  c == 0 ? "red" : c == 1 ? "green" : "blue", target);
    s << line;
  }
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Output shape

TEST(KSweepOutput, ClassificationHeaderAndOneRowPerK) {
  const Table t = parse_table(sweep_ok({"--data", data_file("iris.csv")}));
  ASSERT_EQ(t.header, split(kClassifyHeader, ','));
  ASSERT_EQ(t.rows.size(), 30u);  // default --k 1:30
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.at(i, "k"), std::to_string(i + 1));
}

// --train, knn-cli evaluate's name for the data, is the same as --data.
TEST(KSweepOutput, TrainIsAnotherNameForData) {
  const std::string wine = data_file("wine.csv");
  EXPECT_EQ(sweep_ok({"--train", wine, "--k", "1:9"}), sweep_ok({"--data", wine, "--k", "1:9"}));
}

// Row names (an unnamed leading column) are left out with a note that, in a table of scores,
// offers no --id: nothing would carry it.
TEST(KSweepOutput, RowNamesNoteOffersNoId) {
  std::string text = ",x,label\n";
  for (int i = 0; i < 12; ++i) text += "r" + std::to_string(i) + "," + std::to_string(i) + (i < 6 ? ",low\n" : ",high\n");
  const std::string data = write_temp("sweep_row_names.csv", text);
  const Outcome r = sweep({"--data", data, "--k", "1:3", "--folds", "2"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("note: column 1 of " + data + " has no name in the header (row names"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("--id"), std::string::npos) << r;
}

// k-sweep gives the same note as knn-cli evaluate for a class of one row.
TEST(KSweepOutput, SingleRowClassGetsANote) {
  std::string text = "x,label\n";
  for (int i = 0; i < 10; ++i) text += std::to_string(i) + (i < 5 ? ",low\n" : ",high\n");
  text += "50,alone\n";
  const std::string data = write_temp("sweep_single_row_class.csv", text);
  const Outcome r = sweep({"--data", data, "--k", "1:3", "--folds", "2"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("note: 1 class of " + data + " has a single row (\"alone\")"), std::string::npos) << r;
}

TEST(KSweepOutput, RegressionHeader) {
  const Table t = parse_table(sweep_ok({"--data", data_file("diabetes.csv"), "--task", "regress", "--k", "1:99:2"}));
  ASSERT_EQ(t.header, split(kRegressHeader, ','));
  ASSERT_EQ(t.rows.size(), 50u);
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.at(i, "k"), std::to_string(2 * i + 1));
}

TEST(KSweepOutput, CombinationColumnsWhenSeveralAreSwept) {
  // Several weight functions and metrics: weights,metric first, metrics outermost, then weights,
  // then k; one row per k per combination.
  const Table t = parse_table(sweep_ok(
      {"--data", data_file("wine.csv"), "--k", "1:12", "--weights", "uniform,distance,gaussian:0.5", "--metric", "l2,l1"}));
  ASSERT_EQ(t.header, split("weights,metric," + kClassifyHeader, ','));
  ASSERT_EQ(t.rows.size(), 2u * 3u * 12u);
  const char* weights[] = {"uniform", "distance", "gaussian:0.5"};
  const char* metrics[] = {"l2", "l1"};
  std::size_t i = 0;
  for (const char* m : metrics)
    for (const char* w : weights)
      for (int k = 1; k <= 12; ++k, ++i) {
        EXPECT_EQ(t.at(i, "weights"), w);
        EXPECT_EQ(t.at(i, "metric"), m);
        EXPECT_EQ(t.at(i, "k"), std::to_string(k));
      }
  // One weight function and several metrics also adds the columns; one of each does not.
  EXPECT_EQ(first_line(sweep_ok({"--data", data_file("diabetes.csv"), "--task", "regress", "--k", "3", "--metric", "l1,cosine"})),
            "weights,metric," + kRegressHeader);
  EXPECT_EQ(first_line(sweep_ok({"--data", data_file("iris.csv"), "--k", "3", "--weights", "distance", "--metric", "l1"})),
            kClassifyHeader);
}

TEST(KSweepOutput, KListForms) {
  const auto ks = [](const std::vector<std::string>& k_args) {
    std::vector<std::string> args{"--data", data_file("iris.csv")};
    args.insert(args.end(), k_args.begin(), k_args.end());
    const Table t = parse_table(sweep_ok(args));
    std::string seen;
    for (std::size_t i = 0; i < t.rows.size(); ++i) seen += (i ? "," : "") + t.at(i, "k");
    return seen;
  };
  EXPECT_EQ(ks({"--k", "1,3,5,7"}), "1,3,5,7");
  EXPECT_EQ(ks({"--k", "7,3,3,1"}), "1,3,7");  // sorted, duplicates dropped
  EXPECT_EQ(ks({"--k", "4:10:3"}), "4,7,10");  // stop included
  EXPECT_EQ(ks({"--k", "5:5"}), "5");
  EXPECT_EQ(ks({"--k=2:4"}), "2,3,4");
  EXPECT_EQ(ks({"-k", "9"}), "9");
  EXPECT_EQ(ks({"--k", "120"}), "120");  // the largest allowed: 4 of 5 folds of 150 rows
}

// Found by fuzzing: a range ending at 2^64 - 1 once made the k loop wrap and never end. Now
// the list is counted, and k beyond the training rows is the usual error.
TEST(KSweepOutput, KRangeAtTheTopOfUint64EndsInAnError) {
  for (const std::string k : {"18446744073709551615:18446744073709551615", "18446744073709551610:18446744073709551615:4"}) {
    const Outcome r = sweep({"--data", data_file("iris.csv"), "--k", k});
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_NE(r.err.find("--k"), std::string::npos) << r;
  }
}

// Found by fuzzing: an argument that starts with "--" but holds raw bytes reached the user in the
// option parser's own words, with typographic quotes and the bytes unescaped.
TEST(KSweepOutput, MalformedOptionIsQuotedInAscii) {
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--weig\x98\x8bhts", "uniform"});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("\"--weig\\x98\\x8Bhts\""), std::string::npos) << r;
  for (unsigned char c : r.err) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << r;
}

TEST(KSweepOutput, EmptyLabelNameIsAnError) {
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--label", ""});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--label"), std::string::npos) << r;
  EXPECT_EQ(r.out, "") << r;
}

// The best row by the rule of EvalResult::best: highest accuracy or lowest RMSE, ties to the
// smaller k (then the earlier row).
std::size_t best_row(const Table& t, bool classify) {
  const std::string col = classify ? "accuracy_mean" : "rmse_mean";
  std::size_t best = 0;
  for (std::size_t i = 1; i < t.rows.size(); ++i) {
    const double a = t.number(i, col), b = t.number(best, col);
    if ((classify ? a > b : a < b) || (a == b && std::stoul(t.at(i, "k")) < std::stoul(t.at(best, "k")))) best = i;
  }
  return best;
}

TEST(KSweepOutput, BestLineOnStderr) {
  {
    const Outcome r = sweep({"--data", data_file("iris.csv"), "--k", "1:50"});
    ASSERT_EQ(r.code, 0) << r;
    const Table t = parse_table(r.out);
    const std::size_t b = best_row(t, true);
    EXPECT_EQ(r.err, "best: k = " + t.at(b, "k") + ", accuracy " + t.at(b, "accuracy_mean") + " (std " +
                         t.at(b, "accuracy_std") + "), weights uniform, metric l2\n");
    EXPECT_EQ(t.at(b, "k"), "15");  // iris: accuracy 0.9667 first reached at k = 15 (k = 15..19 tie)
  }
  {
    const Outcome r = sweep({"--data", data_file("diabetes.csv"), "--task", "regress", "--weights", "uniform,distance"});
    ASSERT_EQ(r.code, 0) << r;
    const Table t = parse_table(r.out);
    const std::size_t b = best_row(t, false);
    EXPECT_EQ(r.err, "best: k = " + t.at(b, "k") + ", rmse " + t.at(b, "rmse_mean") + " (std " + t.at(b, "rmse_std") +
                         "), weights " + t.at(b, "weights") + ", metric " + t.at(b, "metric") + "\n");
  }
  {
    // A tie between k values goes to the smaller k: with a k list of equal scores the first wins.
    const Outcome r = sweep({"--data", data_file("iris.csv"), "--k", "15,16,17,18,19"});
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_EQ(r.err.rfind("best: k = 15, ", 0), 0u) << r;
  }
  {
    // Leave-one-out gives one pooled score a k: no std to show.
    const Outcome r = sweep({"--data", data_file("iris.csv"), "--k", "1:9", "--loo"});
    ASSERT_EQ(r.code, 0) << r;
    const Table t = parse_table(r.out);
    const std::size_t b = best_row(t, true);
    EXPECT_EQ(r.err, "best: k = " + t.at(b, "k") + ", accuracy " + t.at(b, "accuracy_mean") + ", weights uniform, metric l2\n");
  }
}

TEST(KSweepOutput, OutputFileHoldsWhatStdoutWould) {
  const std::vector<std::string> base{"--data", data_file("wine.csv"), "--k", "1:20", "--weights", "uniform,distance"};
  const std::string stdout_text = sweep_ok(base);
  for (const std::string format : {"csv", "json"}) {
    const std::string path = temp_path("table." + format);
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--format", format, "-o", path});
    const Outcome r = sweep(args);
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_EQ(r.out, "");
    if (format == "csv") EXPECT_EQ(read_file(path), stdout_text);
    else EXPECT_EQ(read_file(path).rfind("{\"settings\": {", 0), 0u);
  }
}

TEST(KSweepOutput, RunsRepeatExactlyAndTheSeedPicksTheFolds) {
  const std::vector<std::string> base{"--data", data_file("wine.csv"), "--weights", kAllWeights};
  const std::string a = sweep_ok(base), b = sweep_ok(base);
  EXPECT_EQ(a, b);
  std::vector<std::string> seeded = base;
  seeded.insert(seeded.end(), {"--seed", "42"});
  EXPECT_EQ(sweep_ok(seeded), a);  // 42 is the default
  seeded.back() = "7";
  EXPECT_NE(sweep_ok(seeded), a);
  std::vector<std::string> threaded = base;
  threaded.insert(threaded.end(), {"--threads", "1"});
  EXPECT_EQ(sweep_ok(threaded), a);
}

TEST(KSweepOutput, NoProgressWhenStderrIsNotATerminal) {
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--loo", "--k", "1:5"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r;
}

// ---------------------------------------------------------------------------------------------
// JSON

TEST(KSweepJson, Structure) {
  const std::string path = temp_path("wine.json");
  const Outcome r = sweep({"--data", data_file("wine.csv"), "--k", "1:10", "--weights", "uniform,distance", "--metric", "l2,l1",
                       "--format", "json", "-o", path, "--folds", "4", "--seed", "11"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string json = read_file(path);
  // By string: the document's parts, one object per row plus the best one.
  for (const char* part : {"{\"settings\": {\"data\": ", "\"task\": \"classify\"", "\"validation\": \"k-fold\"",
                           "\"folds\": 4", "\"stratified\": true", "\"seed\": 11", "\"test\": null", "\"scale\": \"minmax\"",
                           "\"k\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "\"weights\": [\"uniform\", \"distance\"]",
                           "\"metrics\": [\"l2\", \"l1\"]", "\"scores\": [\"accuracy\", \"balanced_accuracy\", \"f1_macro\"]",
                           "\"classes\": [\"class_0\", \"class_1\", \"class_2\"]", "\"best\": {", "\"rows\": ["})
    EXPECT_NE(json.find(part), std::string::npos) << part << "\n" << json;
  std::size_t objects = 0;
  for (std::size_t at = json.find("{\"weights\": "); at != std::string::npos; at = json.find("{\"weights\": ", at + 1)) ++objects;
  EXPECT_EQ(objects, 2u * 2u * 10u + 1u);
  EXPECT_EQ(json.back(), '\n');

  // By a JSON parser, when Debian's Python is there.
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3: checked by string only";
  const std::string check = write_temp("check_json.py", R"PY(
import json, sys
d = json.load(open(sys.argv[1]))
s = d["settings"]
assert s["data"].endswith("data/wine.csv") and s["task"] == "classify" and s["rows"] == 178, s
assert s["validation"] == "k-fold" and s["folds"] == 4 and s["seed"] == 11 and s["stratified"] is True, s
assert s["test"] is None and s["scale"] == "minmax" and s["k"] == list(range(1, 11)), s
assert s["weights"] == ["uniform", "distance"] and s["metrics"] == ["l2", "l1"], s
assert d["scores"] == ["accuracy", "balanced_accuracy", "f1_macro"], d["scores"]
rows = d["rows"]
assert len(rows) == 40, len(rows)
keys = ["weights", "metric", "k"] + [n + sfx for n in d["scores"] for sfx in ("_mean", "_std")]
for r in rows:
    assert list(r) == keys, list(r)
    assert all(isinstance(r[k], float) or isinstance(r[k], int) for k in keys[3:]), r
order = [(r["metric"], r["weights"], r["k"]) for r in rows]
assert order == [(m, w, k) for m in ("l2", "l1") for w in ("uniform", "distance") for k in range(1, 11)], order
best = max(rows, key=lambda r: (r["accuracy_mean"], -r["k"]))
assert d["best"]["accuracy_mean"] == best["accuracy_mean"] and d["best"]["k"] == best["k"], (d["best"], best)
print("ok")
)PY");
  const Outcome py = process("/usr/bin/python3", {check, path});
  EXPECT_EQ(py.code, 0) << py;
  EXPECT_EQ(py.out, "ok\n") << py;
}

TEST(KSweepJson, LeaveOneOutAndTestSettings) {
  const std::string loo = sweep_ok({"--data", data_file("iris.csv"), "--loo", "--k", "1:3", "--format", "json"});
  EXPECT_NE(loo.find("\"validation\": \"leave-one-out\", \"folds\": 150, \"stratified\": false, \"seed\": null"), std::string::npos) << loo;
  const std::string test = sweep_ok({"--data", data_file("diabetes.csv"), "--test", data_file("diabetes.csv"), "--task", "regress",
                                     "--k", "1:3", "--format", "json", "--no-normalize"});
  EXPECT_NE(test.find("\"validation\": \"test file\", \"folds\": 1, \"stratified\": false, \"seed\": null, \"test\": \""),
            std::string::npos) << test;
  EXPECT_NE(test.find("\"scale\": \"none\""), std::string::npos) << test;
  EXPECT_NE(test.find("\"rmse_mean\": 0, \"rmse_std\": 0"), std::string::npos) << test;  // k = 1 on the training rows
}

// ---------------------------------------------------------------------------------------------
// Agreement with knn::evaluate, one k at a time

// Runs k-sweep on `data_path` with `args` and checks every row against knn::evaluate for that k,
// weight function and metric alone, with the same folds: every mean and std printed the same.
void expect_rows_match_evaluate(const std::string& data_path, const std::vector<std::string>& args,
                                const knn::EvalOptions& base, const knn::CsvOptions& csv = {}) {
  std::vector<std::string> all{"--data", data_path};
  all.insert(all.end(), args.begin(), args.end());
  const Table t = parse_table(sweep_ok(all));
  ASSERT_FALSE(t.rows.empty());
  const bool combos = t.header.front() == "weights";
  const knn::Dataset data = knn::load_csv(data_path, csv);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    knn::EvalOptions eo = base;
    eo.ks = {std::stoul(t.at(i, "k"))};
    if (combos) {
      eo.weights = {knn::Weights::parse(t.at(i, "weights"))};
      eo.metrics = {knn::parse_metric(t.at(i, "metric"))};
    }
    ASSERT_EQ(eo.weights.size(), 1u);
    ASSERT_EQ(eo.metrics.size(), 1u);
    const knn::EvalResult res = knn::evaluate(data, eo);
    ASSERT_EQ(res.rows.size(), 1u);
    for (std::size_t s = 0; s < res.score_names.size(); ++s) {
      const auto& name = res.score_names[s];
      EXPECT_EQ(t.at(i, name + "_mean"), knn::app::format_double(res.rows[0].scores[s].mean))
          << data_path << " row " << i << " k " << eo.ks[0] << " " << eo.weights[0].to_string() << " " << name;
      EXPECT_EQ(t.at(i, name + "_std"), knn::app::format_double(res.rows[0].scores[s].std))
          << data_path << " row " << i << " k " << eo.ks[0] << " " << eo.weights[0].to_string() << " " << name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, t.rows.size());
}

knn::EvalOptions eval_options(knn::Task task) {
  knn::EvalOptions eo;
  eo.task = task;
  eo.backend.device = knn::Device::cpu;
  return eo;
}

TEST(KSweepAgreement, MatchesEvaluateOnDataFilesForEveryWeightFunction) {
  for (const char* name : {"iris.csv", "wine.csv", "breast_cancer.csv"}) {
    SCOPED_TRACE(name);
    expect_rows_match_evaluate(data_file(name), {"--weights", kAllWeights, "--device", "cpu"}, eval_options(knn::Task::classify));
  }
  SCOPED_TRACE("diabetes.csv");
  expect_rows_match_evaluate(data_file("diabetes.csv"), {"--task", "regress", "--weights", kAllWeights, "--device", "cpu"},
                             eval_options(knn::Task::regress));
}

TEST(KSweepAgreement, MatchesEvaluateWithParametersMetricsAndScalings) {
  knn::EvalOptions eo = eval_options(knn::Task::classify);
  eo.scaling = knn::Scaling::standard;
  eo.folds.folds = 7;
  eo.folds.seed = 123456789;
  expect_rows_match_evaluate(data_file("wine.csv"),
                             {"--weights", "gaussian:0.3,inverse:2,subtract:0.8", "--metric", "l2,l1,cosine", "--scale", "standard",
                              "--folds", "7", "--seed", "123456789", "--k", "1:40:3", "--device", "cpu"},
                             eo);
  knn::EvalOptions er = eval_options(knn::Task::regress);
  er.scaling = knn::Scaling::none;
  expect_rows_match_evaluate(data_file("diabetes.csv"),
                             {"--task", "regress", "--no-normalize", "--weights", "distance,gaussian:25", "--metric", "l1",
                              "--k", "2,9,33,64", "--device", "cpu"},
                             er);
}

TEST(KSweepAgreement, MatchesEvaluateOnRandomFiles) {
  for (const std::uint64_t seed : {std::uint64_t{20240611}, static_cast<std::uint64_t>(std::random_device{}())}) {
    SCOPED_TRACE("random data seed " + std::to_string(seed));
    const std::string path = write_temp("random_" + std::to_string(seed) + ".csv", random_csv(seed, 157));
    knn::CsvOptions by_class;
    by_class.label = "class";
    by_class.ignore = {"target"};
    expect_rows_match_evaluate(path, {"--label", "class", "--ignore", "target", "--weights", kAllWeights, "--metric", "l2,l1,cosine",
                                      "--k", "1:60", "--device", "cpu"},
                               eval_options(knn::Task::classify), by_class);
    knn::CsvOptions by_target;
    by_target.label = "target";
    by_target.ignore = {"class"};
    expect_rows_match_evaluate(path, {"--label", "target", "--ignore", "class", "--task", "regress", "--weights", kAllWeights,
                                      "--metric", "l2,l1", "--k", "1:60", "--device", "cpu"},
                               eval_options(knn::Task::regress), by_target);
  }
}

TEST(KSweepAgreement, MatchesEvaluateWithLeaveOneOutAndTestFile) {
  knn::EvalOptions loo = eval_options(knn::Task::classify);
  loo.folds.kind = knn::FoldSpec::Kind::loo;
  expect_rows_match_evaluate(data_file("iris.csv"), {"--loo", "--weights", kAllWeights, "--k", "1:25", "--device", "cpu"}, loo);

  // --test: the training rows of a data set against the others; std is 0.
  const std::string text = read_file(data_file("diabetes.csv"));
  std::vector<std::string> lines = split(text, '\n');
  if (lines.back().empty()) lines.pop_back();
  std::string train = lines[0] + "\n", test = lines[0] + "\n";
  for (std::size_t i = 1; i < lines.size(); ++i) (i % 3 == 0 ? test : train) += lines[i] + "\n";
  const std::string train_path = write_temp("diabetes_train.csv", train), test_path = write_temp("diabetes_test.csv", test);
  const knn::Dataset train_data = knn::load_csv(train_path, {});
  const knn::Dataset test_data = knn::load_query_csv(test_path, {}, train_data);
  knn::EvalOptions eo = eval_options(knn::Task::regress);
  eo.folds.kind = knn::FoldSpec::Kind::test;
  eo.folds.test = &test_data;
  expect_rows_match_evaluate(train_path, {"--test", test_path, "--task", "regress", "--weights", kAllWeights, "--device", "cpu"}, eo);
  const Table t = parse_table(sweep_ok({"--data", train_path, "--test", test_path, "--task", "regress"}));
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.at(i, "rmse_std"), "0");
}

// An independent path: the folds from knn::assign_folds, a model fitted per fold (scaler, search,
// vote or mean of knn::KnnClassifier / KnnRegressor), scores by knn's metrics, mean and population
// std over the folds computed here.
TEST(KSweepAgreement, MatchesModelsFittedFoldByFold) {
  const std::uint64_t seed = 99;
  const std::string path = write_temp("random_models.csv", random_csv(seed, 211));
  for (const bool classify : {true, false}) {
    SCOPED_TRACE(classify ? "classify" : "regress");
    knn::CsvOptions csv;
    csv.label = classify ? "class" : "target";
    csv.ignore = {classify ? "target" : "class"};
    const knn::Dataset data = knn::load_csv(path, csv);
    const Table t = parse_table(sweep_ok({"--data", path, "--label", csv.label, "--ignore", csv.ignore[0], "--task",
                                          classify ? "classify" : "regress", "--weights", kAllWeights, "--k", "1:40"}));
    knn::LabelEncoder enc;
    std::vector<int> ids;
    if (classify) {
      enc.fit(data.labels);
      ids = enc.encode(data.labels);
    }
    const std::vector<int> fold = knn::assign_folds(data.size(), classify ? &ids : nullptr, 5, knn::default_fold_seed);
    const std::vector<double> y = classify ? std::vector<double>{} : knn::numeric_targets(data);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      knn::ModelParams p;
      p.k = std::stoul(t.at(i, "k"));
      p.weights = knn::Weights::parse(t.at(i, "weights"));
      p.backend.device = knn::Device::cpu;
      std::vector<double> per_fold;
      for (int f = 0; f < 5; ++f) {
        std::vector<std::size_t> tr, te;
        for (std::size_t r = 0; r < data.size(); ++r) (fold[r] == f ? te : tr).push_back(r);
        const knn::Matrix xtr = knn::take_rows(data.features, tr), xte = knn::take_rows(data.features, te);
        if (classify) {
          std::vector<std::string> ltr, lte;
          for (std::size_t r : tr) ltr.push_back(data.labels[r]);
          for (std::size_t r : te) lte.push_back(data.labels[r]);
          knn::KnnClassifier m(p);
          m.fit(xtr, ltr);
          per_fold.push_back(m.score(xte, lte));
        } else {
          std::vector<double> ytr, yte;
          for (std::size_t r : tr) ytr.push_back(y[r]);
          for (std::size_t r : te) yte.push_back(y[r]);
          knn::KnnRegressor m(p);
          m.fit(xtr, ytr);
          per_fold.push_back(knn::rmse(yte, m.predict(xte)));
        }
      }
      double mean = 0.0, var = 0.0;
      for (double v : per_fold) mean += v;
      mean /= 5.0;
      for (double v : per_fold) var += (v - mean) * (v - mean);
      const double sd = std::sqrt(var / 5.0);
      const std::string what = "row " + std::to_string(i) + " k " + t.at(i, "k") + " " + t.at(i, "weights");
      if (classify) {
        EXPECT_EQ(t.at(i, "accuracy_mean"), knn::app::format_double(mean)) << what;
        EXPECT_NEAR(t.number(i, "accuracy_std"), sd, 1e-15) << what;
      } else {
        EXPECT_NEAR(t.number(i, "rmse_mean"), mean, 1e-12 * mean) << what;
        EXPECT_NEAR(t.number(i, "rmse_std"), sd, 1e-9 * mean) << what;
      }
    }
  }
}

TEST(KSweepAgreement, MatchesKnnCliEvaluate) {
  if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "knn-cli is not built";
  struct Case {
    std::string file, task, weights;
  };
  const Case cases[] = {{"iris.csv", "classify", "uniform"},   {"wine.csv", "classify", "distance"},
                        {"iris.csv", "classify", "gaussian"},  {"diabetes.csv", "regress", "inverse"},
                        {"diabetes.csv", "regress", "subtract"}, {"diabetes.csv", "regress", "uniform"}};
  // On the CPU every score is the same bit for bit. On the GPU (where there is one) class
  // predictions are the CPU's, so classification scores still are; weighted means agree with the
  // CPU's within 1e-9 relative (docs/design.md#reproducibility), and the sweep's running sums over 25 neighbours add in
  // another order than one k's, so regression scores agree within that.
  std::vector<std::string> devices = {"cpu"};
  if (knn::cuda_available()) devices.push_back("cuda");
  for (const std::string& device : devices)
    for (const Case& c : cases) {
      SCOPED_TRACE(c.file + " " + c.weights + " --device " + device);
      const bool exact = device == "cpu" || c.task == "classify";
      const Table t = parse_table(
          sweep_ok({"--data", data_file(c.file), "--task", c.task, "--weights", c.weights, "--k", "1:25", "--device", device}));
      for (const std::size_t k : {1, 2, 7, 13, 25}) {
        const Outcome r = process(kCli, {"evaluate", "--train", data_file(c.file), "--task", c.task, "--weights", c.weights, "-k",
                                         std::to_string(k), "--format", "csv", "--device", device});
        ASSERT_EQ(r.code, 0) << r;
        const Table e = parse_table(r.out);  // score,mean,std
        ASSERT_EQ(e.rows.size(), 3u) << r;
        for (std::size_t s = 0; s < e.rows.size(); ++s)
          for (const char* part : {"mean", "std"}) {
            const std::string swept = t.at(k - 1, e.at(s, "score") + "_" + part), one = e.at(s, part);
            if (exact) {
              EXPECT_EQ(swept, one) << "k " << k << " " << part;
            } else {
              const double a = std::stod(swept), b = std::stod(one);
              EXPECT_LE(std::fabs(a - b), 1e-9 * std::max(std::fabs(a), std::fabs(b))) << "k " << k << " " << part << ": " << swept
                                                                                       << " against " << one;
            }
          }
      }
    }
}

// ---------------------------------------------------------------------------------------------
// --save-folds

TEST(KSweepFolds, SavedFoldsAreTheLibrarysAssignment) {
  const std::string path = temp_path("wine_folds.csv");
  sweep_ok({"--data", data_file("wine.csv"), "--k", "1", "--folds", "6", "--seed", "5", "--save-folds", path});
  const Table t = read_table(path);
  ASSERT_EQ(t.header, (std::vector<std::string>{"row", "fold"}));
  const knn::Dataset data = knn::load_csv(data_file("wine.csv"), {});
  knn::LabelEncoder enc;
  enc.fit(data.labels);
  const std::vector<int> ids = enc.encode(data.labels);
  const std::vector<int> fold = knn::assign_folds(data.size(), &ids, 6, 5);
  ASSERT_EQ(t.rows.size(), data.size());
  std::map<std::string, std::vector<int>> per_class;  // stratified: each class spread evenly
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    EXPECT_EQ(t.at(i, "row"), std::to_string(i));
    EXPECT_EQ(t.at(i, "fold"), std::to_string(fold[i]));
    auto& counts = per_class[data.labels[i]];
    counts.resize(6);
    counts[static_cast<std::size_t>(fold[i])]++;
  }
  for (const auto& [label, counts] : per_class) {
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*hi - *lo, 1) << label;
  }

  // Regression: shuffled without classes. Leave-one-out: every row its own fold.
  const std::string reg = temp_path("diabetes_folds.csv");
  sweep_ok({"--data", data_file("diabetes.csv"), "--task", "regress", "--k", "1", "--save-folds", reg});
  const std::vector<int> rf = knn::assign_folds(442, nullptr, 5, knn::default_fold_seed);
  std::string expect = "row,fold\n";
  for (std::size_t i = 0; i < rf.size(); ++i) expect += std::to_string(i) + "," + std::to_string(rf[i]) + "\n";
  EXPECT_EQ(read_file(reg), expect);
  const std::string loo = temp_path("iris_loo_folds.csv");
  sweep_ok({"--data", data_file("iris.csv"), "--loo", "--k", "1", "--save-folds", loo});
  const Table l = read_table(loo);
  ASSERT_EQ(l.rows.size(), 150u);
  for (std::size_t i = 0; i < l.rows.size(); ++i) EXPECT_EQ(l.at(i, "fold"), std::to_string(i));
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit code 2, one error line that names the option or file and quotes the value,
// nothing on stdout and no output, plot or folds file.

TEST(KSweepErrors, BadInputWritesNothing) {
  const std::string wrong_columns = write_temp("wrong_columns.csv", "a,b,label\n1,2,x\n3,4,y\n");
  const std::string bad_cell = write_temp("bad_cell.csv", "x,y,label\n1,2,a\n3,1e99,b\n5,6,a\n7,8,b\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;  // part of the error line
  };
  const std::string iris = data_file("iris.csv");
  const std::vector<Case> cases = {
      {{"--data", iris, "--k", "0"}, "option --k: \"0\""},
      {{"--data", iris, "--k", "5:1"}, "option --k: \"5:1\": stop is smaller than start"},
      {{"--data", iris, "--k", "a:b"}, "option --k: \"a:b\""},
      {{"--data", iris, "--k", "1,x"}, "option --k: \"1,x\""},
      {{"--data", iris, "--k", "1..15"}, "option --k: \"1..15\" is not a whole number >= 1 (k values are a list such as 1,3,5 or a range "
                                         "START:STOP[:STEP] such as 1:15)"},
      {{"--data", iris, "--k", "1:500"}, "the largest allowed k is 120"},
      {{"--data", iris, "--loo", "--k", "150"}, "the largest allowed k is 149"},
      {{"--data", iris, "--weights", "bad"}, "option --weights: unknown weight function \"bad\""},
      {{"--data", iris, "--weights", "uniform,gaussian:-1"}, "option --weights: parameter \"-1\""},
      {{"--data", iris, "--weights", "uniform,uniform"}, "option --weights: \"uniform,uniform\" names \"uniform\" twice"},
      {{"--data", iris, "--metric", "l3"}, "option --metric:"},
      {{"--data", iris, "--plot", temp_path("x.gif")}, "option --plot: \"" + temp_path("x.gif").substr(0, 39)},
      {{"--data", iris, "--plot", temp_path("plot")}, "unknown image type \"\""},
      {{"--data", iris, "--folds", "1"}, "option --folds: \"1\" is not a whole number >= 2"},
      {{"--data", iris, "--folds", "151"}, "option --folds: \"151\""},
      {{"--data", iris, "--folds", "3", "--loo"}, "option --folds: choose one of --folds, --loo and --test"},
      {{"--data", iris, "--test", wrong_columns}, wrong_columns},
      {{"--data", bad_cell}, bad_cell + ":3:2: not a finite number: \"1e99\""},
      {{"--data", data_file("missing.csv")}, "missing.csv"},
      {{"--data", iris, "--task", "cluster"}, "option --task: unknown task \"cluster\""},
      {{"--data", iris, "--task", "regress"}, "iris.csv"},
      {{"--data", iris, "--scale", "log"}, "option --scale:"},
      {{"--data", iris, "--format", "xml"}, "option --format: unknown format \"xml\""},
      {{"--data", iris, "--seed", "-1"}, "option --seed: \"-1\""},
      {{"--data", iris, "--threads", "0"}, "option --threads: \"0\""},
      {{"--data", iris, "--device", "tpu"}, "option --device: unknown device \"tpu\""},
      {{"--data", iris, "--label", "nope"}, "nope"},
      {{"--data", iris, "--save-folds", temp_path("no_such_folder/f.csv")}, "option --save-folds:"},
      {{"--data", iris, "--test", iris, "--save-folds", temp_path("f.csv")}, "option --save-folds:"},
      {{"--data", iris, "--bogus"}, "unknown option \"--bogus\""},
      {{"--data", iris, "--k"}, "option \"--k\" needs a value"},
      {{"--data", iris, "stray"}, "unexpected argument \"stray\""},
      {{"--k", "3"}, "option --data: is required"},
      {{"--data", iris, "--train", iris}, "option --train: names the data as --data does"},
  };
  for (const Case& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    SCOPED_TRACE(shown);
    for (const char* p : {"out.csv", "plot.svg", "folds.csv"}) fs::remove(temp_path(p));
    // Every output asked for (the case's own options last, so that a value-less one stays last).
    const auto has = [&](const char* option) { return std::find(c.args.begin(), c.args.end(), option) != c.args.end(); };
    std::vector<std::string> args{"-o", temp_path("out.csv")};
    if (!has("--save-folds") && !has("--test")) args.insert(args.end(), {"--save-folds", temp_path("folds.csv")});
    if (!has("--plot") && gnuplot_available()) args.insert(args.end(), {"--plot", temp_path("plot.svg")});
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Outcome r = sweep(args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_EQ(r.err.rfind("k-sweep: error: ", 0), 0u) << r;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "expected: " << c.message << "\n" << r;
    for (const char* p : {"out.csv", "plot.svg", "folds.csv"}) EXPECT_FALSE(fs::exists(temp_path(p))) << p;
  }
}

TEST(KSweepErrors, ExistingOutputIsLeftAloneOnError) {
  const std::string out = write_temp("kept.csv", "old contents\n");
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--k", "1:500", "-o", out});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_EQ(read_file(out), "old contents\n");
}

TEST(KSweepErrors, PlotWithoutGnuplot) {
  ScopedEnv env("KNN_GNUPLOT", temp_path("no_gnuplot_here"));
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--plot", temp_path("p.svg"), "-o", temp_path("t.csv")});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_EQ(r.err.rfind("k-sweep: error: option --plot: ", 0), 0u) << r;
  EXPECT_NE(r.err.find("gnuplot"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(temp_path("p.svg")));
  EXPECT_FALSE(fs::exists(temp_path("t.csv")));
  // Without --plot, gnuplot is not needed.
  sweep_ok({"--data", data_file("iris.csv"), "--k", "1:3"});
}

TEST(KSweepErrors, FailingGnuplotWritesNothing) {
  if (!fs::exists("/bin/false")) GTEST_SKIP() << "no /bin/false";
  ScopedEnv env("KNN_GNUPLOT", "/bin/false");
  const Outcome r = sweep({"--data", data_file("iris.csv"), "--plot", temp_path("f.png"), "-o", temp_path("t2.csv"),
                       "--save-folds", temp_path("f2.csv")});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_EQ(r.err.rfind("k-sweep: error: option --plot: gnuplot \"/bin/false\" failed", 0), 0u) << r;
  for (const char* p : {"f.png", "t2.csv", "f2.csv"}) EXPECT_FALSE(fs::exists(temp_path(p))) << p;
}

TEST(KSweepErrors, TheProgramsExitCodeAndStreams) {
  const Outcome bad = process(kSweep, {"--data", data_file("iris.csv"), "--k", "1:500"});
  EXPECT_EQ(bad.code, 2) << bad;
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err,
            "k-sweep: error: option --k: \"500\" is larger than the 120 training rows of the smallest fold; the largest "
            "allowed k is 120\n");
  const Outcome good = process(kSweep, {"--data", data_file("iris.csv"), "--k", "1:5"});
  EXPECT_EQ(good.code, 0) << good;
  EXPECT_EQ(good.out, sweep_ok({"--data", data_file("iris.csv"), "--k", "1:5"}));
  EXPECT_EQ(good.err.rfind("best: k = ", 0), 0u) << good;
  const Outcome help = process(kSweep, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--save-folds"), std::string::npos);
  EXPECT_EQ(help.err, "");
}

// ---------------------------------------------------------------------------------------------
// --plot

TEST(KSweepPlot, SvgAndPng) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string svg = temp_path("iris.svg"), png = temp_path("iris.PNG");
  sweep_ok({"--data", data_file("iris.csv"), "--k", "1:50", "--plot", svg, "-o", temp_path("iris_table.csv")});
  const std::string s = read_file(svg);
  EXPECT_NE(s.find("<svg"), std::string::npos);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_NE(s.find("iris.csv"), std::string::npos);      // the title names the data file
  EXPECT_NE(s.find("best k = 15"), std::string::npos);   // the best k is labelled
  EXPECT_NE(s.find("k (number of neighbours)"), std::string::npos);
  EXPECT_NE(s.find("accuracy"), std::string::npos);
  sweep_ok({"--data", data_file("diabetes.csv"), "--task", "regress", "--weights", "uniform,distance", "--plot", png, "-o",
            temp_path("diabetes_table.csv")});
  const std::string p = read_file(png);
  ASSERT_GT(p.size(), 8u);
  EXPECT_EQ(p.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Nothing is left behind next to the image.
  for (const auto& e : fs::directory_iterator(temp_dir()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

// ---------------------------------------------------------------------------------------------
// scikit-learn on the same folds (tests/k_sweep/expected, made by make_expected.py)

struct SklearnCase {
  const char* name;
  const char* task;
  const char* score;  // accuracy | rmse
};
const SklearnCase kSklearnCases[] = {{"iris", "classify", "accuracy"}, {"wine", "classify", "accuracy"}, {"diabetes", "regress", "rmse"}};

bool same_score(const std::string& score, double got, double want) {
  if (score == "accuracy") return got == want;
  return std::fabs(got - want) <= 1e-9 * std::fabs(want);
}

TEST(KSweepSklearn, SavedFoldsEqualTheScriptsFolds) {
  for (const SklearnCase& c : kSklearnCases) {
    const std::string path = temp_path(std::string(c.name) + "_saved_folds.csv");
    sweep_ok({"--data", data_file(std::string(c.name) + ".csv"), "--task", c.task, "--k", "1", "--save-folds", path});
    EXPECT_EQ(read_file(path), read_file(expected_file(std::string(c.name) + "-folds.csv"))) << c.name;
  }
}

TEST(KSweepSklearn, MeansOverFolds) {
  std::size_t compared = 0, total = 0;
  for (const SklearnCase& c : kSklearnCases) {
    SCOPED_TRACE(c.name);
    const Table got = parse_table(sweep_ok({"--data", data_file(std::string(c.name) + ".csv"), "--task", c.task, "--weights",
                                            "uniform,distance", "--k", "1:30"}));
    std::map<std::pair<std::string, std::string>, std::size_t> row_of;
    for (std::size_t i = 0; i < got.rows.size(); ++i) row_of[{got.at(i, "weights"), got.at(i, "k")}] = i;
    const Table want = read_table(expected_file(std::string(c.name) + "-means.csv"));
    ASSERT_EQ(want.rows.size(), 60u);
    const std::string col = std::string(c.score) + "_mean";
    std::size_t here = 0;
    for (std::size_t i = 0; i < want.rows.size(); ++i) {
      ++total;
      if (want.at(i, "tied") == "1") continue;
      const auto it = row_of.find({want.at(i, "weights"), want.at(i, "k")});
      ASSERT_NE(it, row_of.end()) << want.at(i, "weights") << " k " << want.at(i, "k");
      EXPECT_TRUE(same_score(c.score, got.number(it->second, col), want.number(i, col)))
          << want.at(i, "weights") << " k " << want.at(i, "k") << ": k-sweep " << got.at(it->second, col) << ", scikit-learn "
          << want.at(i, col);
      ++compared, ++here;
    }
    EXPECT_GT(here, 0u);
  }
  EXPECT_GT(compared * 10, total * 7) << compared << " of " << total << " compared";
}

// Each fold on its own: k-sweep --test with the fold's training rows as --data and its held-out
// rows as --test (both in file order, as in the fold), against scikit-learn's score of that fold.
TEST(KSweepSklearn, EveryFoldOnItsOwn) {
  std::size_t compared = 0, total = 0;
  for (const SklearnCase& c : kSklearnCases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> lines = split(read_file(data_file(std::string(c.name) + ".csv")), '\n');
    if (lines.back().empty()) lines.pop_back();
    const Table folds = read_table(expected_file(std::string(c.name) + "-folds.csv"));
    ASSERT_EQ(folds.rows.size() + 1, lines.size());
    const Table want = read_table(expected_file(std::string(c.name) + "-per-fold.csv"));
    std::size_t here = 0;
    for (int f = 0; f < 5; ++f) {
      std::string train = lines[0] + "\n", test = lines[0] + "\n";
      for (std::size_t r = 0; r < folds.rows.size(); ++r) (folds.at(r, "fold") == std::to_string(f) ? test : train) += lines[r + 1] + "\n";
      const std::string tag = std::string(c.name) + "_fold" + std::to_string(f);
      const std::string train_path = write_temp(tag + "_train.csv", train), test_path = write_temp(tag + "_test.csv", test);
      const Table got = parse_table(sweep_ok({"--data", train_path, "--test", test_path, "--task", c.task, "--weights",
                                              "uniform,distance", "--k", "1:30"}));
      std::map<std::pair<std::string, std::string>, std::size_t> row_of;
      for (std::size_t i = 0; i < got.rows.size(); ++i) row_of[{got.at(i, "weights"), got.at(i, "k")}] = i;
      const std::string col = std::string(c.score) + "_mean";
      for (std::size_t i = 0; i < want.rows.size(); ++i) {
        if (want.at(i, "fold") != std::to_string(f)) continue;
        ++total;
        if (want.at(i, "tied") == "1") continue;
        const std::size_t g = row_of.at({want.at(i, "weights"), want.at(i, "k")});
        EXPECT_EQ(got.at(g, std::string(c.score) + "_std"), "0");
        EXPECT_TRUE(same_score(c.score, got.number(g, col), want.number(i, c.score)))
            << "fold " << f << " " << want.at(i, "weights") << " k " << want.at(i, "k") << ": k-sweep " << got.at(g, col)
            << ", scikit-learn " << want.at(i, c.score);
        ++compared, ++here;
      }
    }
    EXPECT_GT(here, 150u);  // of 300 per case
  }
  EXPECT_GT(compared * 10, total * 8) << compared << " of " << total << " compared";
}

}  // namespace
