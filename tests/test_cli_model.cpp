// knn-cli fit and --model: a model fitted once answers predict and neighbors with the bytes that
// the same command with --train gives (CSV and JSON, probabilities, categories, missing cells,
// dropped rows, identifiers, regression); options that conflict with the model, and model files
// that are damaged, foreign or of the wrong kind, are one error line with exit code 2 and no
// output; fit writes its model whole or not at all. In-process through knn::cli::run, and a few
// runs of the built program.
#include <gtest/gtest.h>

#include "app_runner.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "cli.hpp"
#include "knn/model.hpp"
#include "model_bytes.hpp"

namespace {

namespace fs = std::filesystem;
using knn::test::AppResult;
using knn::test::Bytes;

const std::string kSource = KNN_SOURCE_DIR;
const std::string kCli = KNN_CLI_PATH;
using Args = std::vector<std::string>;

std::string data_file(const std::string& name) { return kSource + "/data/" + name; }
std::string case_file(const std::string& name) { return kSource + "/tests/cli_cases/" + name; }
std::string mpi_file(const std::string& name) { return kSource + "/tests/mpi/" + name; }
std::string temp_path(const std::string& name) { return (knn::test::temp_dir() / name).string(); }

AppResult cli(const Args& args) { return knn::test::run_app(knn::cli::run, "knn-cli", args); }

Args operator+(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Fits a model file of `train` with the fit's options, once per distinct command; its path.
std::string fitted(const std::string& train, const Args& options) {
  static std::map<Args, std::string> made;
  const Args fit = Args{"fit", "--train", train} + options;
  if (const auto it = made.find(fit); it != made.end()) return it->second;
  const std::string path = temp_path("model_" + std::to_string(made.size()) + ".knn");
  const AppResult r = cli(fit + Args{"-o", path});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "") << "fit printed on standard output\n" << r;
  made[fit] = path;
  return path;
}

// ---------------------------------------------------------------------------------------------
// The same bytes as --train.

struct Same {
  const char* name;
  std::string command;  // predict or neighbors
  std::string train, query;
  Args fit;     // options of the model: given to fit, and to the command with --train
  Args output;  // options of the output: given to the command either way
};

void PrintTo(const Same& c, std::ostream* os) { *os << c.name; }

// The options of the model as `command` takes them: neighbors takes no --task or --weights (they
// choose how neighbours vote), which only fit is given then.
Args model_args(const std::string& command, const Args& fit) {
  if (command != "neighbors") return fit;
  Args out;
  for (std::size_t i = 0; i < fit.size(); ++i) {
    if (fit[i] == "--task" || fit[i] == "--weights") ++i;
    else out.push_back(fit[i]);
  }
  return out;
}

const std::string kIris = data_file("iris.csv"), kIrisNew = kSource + "/docs/examples/iris-new.csv";
const std::string kSurvey = data_file("survey.csv");
const std::string kTabular = mpi_file("tabular_train.csv"), kTabularQuery = mpi_file("tabular_query.csv");

const Same kSame[] = {
    {"iris_proba_csv", "predict", kIris, kIrisNew, {"-k", "7", "--weights", "distance"}, {"--proba"}},
    {"iris_proba_json", "predict", kIris, kIris, {"-k", "7", "--weights", "distance"}, {"--proba", "--format", "json"}},
    {"iris_neighbors_csv", "neighbors", kIris, kIrisNew, {"-k", "3", "--metric", "l1"}, {}},
    {"iris_neighbors_json", "neighbors", kIris, kIris, {"-k", "4", "--scale", "standard"}, {"--format", "json"}},
    {"wine_cosine_unscaled", "predict", data_file("wine.csv"), data_file("wine.csv"), {"--metric", "cosine", "--scale", "none"}, {"--format", "csv"}},
    {"survey_impute_proba", "predict", kSurvey, kSurvey, {"--label", "Exer", "--impute", "mean"}, {"--proba"}},
    {"survey_impute_json", "predict", kSurvey, kSurvey, {"--label", "Sex", "--impute", "median", "--drop-missing", "--weights", "gaussian:0.5"}, {"--format", "json", "--proba"}},
    {"survey_neighbors", "neighbors", kSurvey, kSurvey, {"--label", "Exer", "--impute", "most_frequent", "-k", "6"}, {"--format", "json"}},
    // Rows dropped (their file rows kept in the neighbours), an identifier column, categories
    // the training rows lack, a query cell filled.
    {"tabular_ids_neighbors", "neighbors", kTabular, kTabularQuery, {"-k", "7", "--impute", "most_frequent", "--drop-missing", "--id", "0"}, {}},
    {"tabular_ids_neighbors_json", "neighbors", kTabular, kTabularQuery, {"-k", "7", "--impute", "most_frequent", "--drop-missing", "--id", "0"}, {"--format", "json"}},
    {"tabular_ids_proba", "predict", kTabular, kTabularQuery, {"-k", "5", "--impute", "median", "--drop-missing", "--id", "0"}, {"--proba"}},
    {"tabular_categorical_forced", "predict", kTabular, kTabularQuery, {"--impute", "mean", "--drop-missing", "--categorical", "x2"}, {"--format", "json"}},
    {"diabetes_regress_csv", "predict", data_file("diabetes.csv"), mpi_file("diabetes_query.csv"),
     {"--task", "regress", "-k", "15", "--weights", "distance", "--scale", "standard"}, {}},
    {"diabetes_regress_json", "predict", data_file("diabetes.csv"), mpi_file("diabetes_query.csv"), {"--task", "regress", "-k", "9"}, {"--format", "json"}},
    {"diabetes_neighbors", "neighbors", data_file("diabetes.csv"), mpi_file("diabetes_query.csv"), {"--task", "regress", "-k", "9"}, {}},
    {"iris_weighted_neighbors", "neighbors", kIris, kIrisNew, {"-k", "5", "--weights", "distance"}, {"--format", "json"}},
    // Row names, an ignored column of the query file only, numeric labels.
    {"rnames_query_only_ignore", "predict", case_file("tabular/rnames.csv"), case_file("tabular/query_extra.csv"),
     {"--impute", "mean", "-k", "3", "--ignore", "note"}, {"--proba"}},
    {"numeric_class_order", "predict", case_file("numeric_labels.csv"), case_file("numeric_labels_query.csv"), {"-k", "2"}, {"--proba"}},
    {"no_header", "neighbors", case_file("bad/noheader_train.csv"), case_file("bad/noheader_train.csv"), {"--no-header", "-k", "2"}, {}},
};

class CliModelSame : public ::testing::TestWithParam<Same> {};

TEST_P(CliModelSame, ModelAnswersAsTrain) {
  const Same& c = GetParam();
  const std::string model = fitted(c.train, c.fit);
  const AppResult with_train = cli(Args{c.command, "--train", c.train, "--query", c.query} + model_args(c.command, c.fit) + c.output);
  const AppResult with_model = cli(Args{c.command, "--model", model, "--query", c.query} + c.output);
  ASSERT_EQ(with_train.code, 0) << with_train;
  ASSERT_EQ(with_model.code, 0) << with_model;
  ASSERT_FALSE(with_train.out.empty());
  EXPECT_EQ(with_model.out, with_train.out);
  // Options of the fit given again, with their values, agree with the model.
  const AppResult repeated = cli(Args{c.command, "--model", model, "--query", c.query} + model_args(c.command, c.fit) + c.output);
  EXPECT_EQ(repeated.code, 0) << repeated;
  EXPECT_EQ(repeated.out, with_train.out);
}

INSTANTIATE_TEST_SUITE_P(All, CliModelSame, ::testing::ValuesIn(kSame),
                         [](const ::testing::TestParamInfo<Same>& info) { return std::string(info.param.name); });

TEST(CliModel, KFromOneToTheTrainingRowsIsARunOption) {
  const std::string model = fitted(kIris, {"-k", "5", "--weights", "distance"});
  for (const std::string k : {"1", "9", "150"}) {
    SCOPED_TRACE("k " + k);
    const AppResult with_train = cli({"predict", "--train", kIris, "--query", kIris, "-k", k, "--weights", "distance", "--proba"});
    const AppResult with_model = cli({"predict", "--model", model, "--query", kIris, "-k", k, "--proba"});
    ASSERT_EQ(with_model.code, 0) << with_model;
    EXPECT_EQ(with_model.out, with_train.out);
  }
  const AppResult json = cli({"neighbors", "--model", model, "--query", kIrisNew, "-k", "2", "--format", "json"});
  EXPECT_EQ(json.out.rfind("{\"k\": 2,", 0), 0u) << json;
}

TEST(CliModel, RunOptionsAreTheRunsOwn) {
  const std::string model = fitted(kIris, {"-k", "5"});
  const AppResult plain = cli({"neighbors", "--model", model, "--query", kIris});
  const AppResult run = cli({"neighbors", "--model", model, "--query", kIris, "--threads", "1", "--device", "cpu", "--precision", "tf32"});
  ASSERT_EQ(run.code, 0) << run;
  EXPECT_EQ(run.out, plain.out);
}

TEST(CliModel, FitSaysWhatItWroteOnStandardErrorOnly) {
  const std::string path = temp_path("summary.knn");
  const AppResult r = cli({"fit", "--train", kIris, "-k", "7", "-o", path});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "wrote " + path + ": classify, 150 rows of " + kIris + ", 4 features (4 columns once encoded), 3 classes, k 7\n");
  EXPECT_EQ(knn::load_model(path)->kind(), knn::ModelKind::classifier);
  const std::string reg = temp_path("summary_regress.knn");
  const AppResult rr = cli({"fit", "--train", kSurvey, "--label", "Height", "--task", "regress", "--impute", "mean", "--drop-missing", "-o", reg});
  ASSERT_EQ(rr.code, 0) << rr;
  EXPECT_EQ(rr.err.rfind("wrote " + reg + ": regress, 209 rows of " + kSurvey + ", 11 features (23 columns once encoded), k 5\nnote: ", 0), 0u)
      << rr;
  EXPECT_EQ(knn::load_model(reg)->kind(), knn::ModelKind::regressor);
}

TEST(CliModel, ModelFromStandardInput) {
  const std::string model = fitted(kIris, {"-k", "7"});
  const AppResult piped = knn::test::run_process(kCli, {"predict", "--model", "-", "--query", kIrisNew, "--proba"},
                                                  "cat " + knn::test::shell_quote(model) + " |");
  const AppResult direct = cli({"predict", "--model", model, "--query", kIrisNew, "--proba"});
  EXPECT_EQ(piped.code, 0) << piped;
  EXPECT_EQ(piped.out, direct.out);
}

TEST(CliModel, HelpNamesFitAndModel) {
  const AppResult fit = cli({"fit", "--help"});
  EXPECT_EQ(fit.code, 0);
  EXPECT_NE(fit.out.find("--train FILE -o MODEL"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("knn-cli predict --model iris.knn"), std::string::npos) << fit.out;
  EXPECT_EQ(fit.out.find("--query FILE"), std::string::npos) << "fit reads no query file\n" << fit.out;
  EXPECT_EQ(fit.out.find("--format"), std::string::npos) << "fit writes a model file only\n" << fit.out;
  for (const std::string cmd : {"predict", "neighbors"}) {
    const AppResult h = cli({cmd, "--help"});
    EXPECT_NE(h.out.find("(--train FILE | --model MODEL) --query FILE"), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("--model MODEL"), std::string::npos) << h.out;
  }
  EXPECT_NE(cli({"--help"}).out.find("knn-cli fit"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Refusals: one line, exit code 2, nothing on standard output, no output file.

void expect_refused(const AppResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  EXPECT_EQ(r.err.rfind("knn-cli: error: ", 0), 0u) << r;
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing " << n << " in\n" << r;
}

// A command with -o: it must fail and leave the output absent.
void expect_refused_without_output(Args args, const std::vector<std::string>& needles) {
  const std::string out = temp_path("refused_output.csv");
  fs::remove(out);
  expect_refused(cli(args + Args{"-o", out}), needles);
  EXPECT_FALSE(fs::exists(out)) << "an output file was written";
}

struct Conflict {
  const char* name;
  Args given;
  std::vector<std::string> needles;
};

void PrintTo(const Conflict& c, std::ostream* os) { *os << c.name; }

// The model: tabular_train.csv, -k 5 --weights distance --impute median --drop-missing --id 0.
const Args kTabularFit{"-k", "5", "--weights", "distance", "--impute", "median", "--drop-missing", "--id", "0"};

const Conflict kConflicts[] = {
    {"weights", {"--weights", "uniform"}, {"option --weights: \"uniform\" conflicts with the model in", "fitted with \"distance\""}},
    {"metric", {"--metric", "l1"}, {"option --metric: \"l1\"", "fitted with \"l2\""}},
    {"scale", {"--scale", "standard"}, {"option --scale: \"standard\"", "fitted with \"minmax\""}},
    {"no_normalize", {"--no-normalize"}, {"option --no-normalize: conflicts with the model", "fitted without it"}},
    {"impute", {"--impute", "mean"}, {"option --impute: \"mean\"", "fitted with \"median\""}},
    {"task", {"--task", "regress"}, {"option --task: \"regress\"", "fitted with \"classify\""}},
    {"label", {"--label", "size"}, {"option --label: \"size\"", "fitted with \"\""}},
    {"ignore", {"--ignore", "x1"}, {"option --ignore: \"x1\"", "fitted with \"\""}},
    {"categorical", {"--categorical", "x2"}, {"option --categorical: \"x2\""}},
    {"numeric", {"--numeric", "x2"}, {"option --numeric: \"x2\""}},
    {"na_values", {"--na-values", "NA"}, {"option --na-values: \"NA\"", "fitted with \",NA,N/A,NaN,nan,?,null,NULL\""}},
    {"delimiter", {"--delimiter", ";"}, {"option --delimiter: \";\"", "fitted with \",\""}},
    {"no_header", {"--no-header"}, {"option --no-header: conflicts with the model", "fitted without it"}},
    {"id", {"--id", "x1"}, {"option --id: \"x1\"", "fitted with \"0\""}},
    {"train_and_model", {"--train", kTabular}, {"option --model: conflicts with --train"}},
    {"k_above_the_rows", {"-k", "239"}, {"option --k: \"239\" is larger than the 238 training rows"}},
    {"k_zero", {"-k", "0"}, {"option --k: \"0\""}},
    {"proba_of_a_regressor_needs_classify", {"--proba", "--task", "regress"}, {"option --task"}},
};

class CliModelConflict : public ::testing::TestWithParam<Conflict> {};

TEST_P(CliModelConflict, IsOneLineNamingTheOptionAndTheModelsValue) {
  const Conflict& c = GetParam();
  const std::string model = fitted(kTabular, kTabularFit);
  expect_refused_without_output(Args{"predict", "--model", model, "--query", kTabularQuery} + c.given, c.needles);
}

INSTANTIATE_TEST_SUITE_P(All, CliModelConflict, ::testing::ValuesIn(kConflicts),
                         [](const ::testing::TestParamInfo<Conflict>& info) { return std::string(info.param.name); });

TEST(CliModelRefusals, AnIdentifierMustBeOneWhenFitted) {
  // Without --id at the fit, a query file's own column may be carried; a column of the training
  // file may not: the model holds it as a feature.
  const std::string model = fitted(case_file("tabular/rnames.csv"), {"--impute", "mean", "-k", "3", "--ignore", "note"});
  const AppResult carried = cli({"predict", "--model", model, "--query", case_file("tabular/query_extra.csv"), "--id", "note"});
  const AppResult trained = cli({"predict", "--train", case_file("tabular/rnames.csv"), "--impute", "mean", "-k", "3", "--ignore", "note",
                                 "--query", case_file("tabular/query_extra.csv"), "--id", "note"});
  ASSERT_EQ(carried.code, 0) << carried;
  EXPECT_EQ(carried.out, trained.out);
  const std::string plain = fitted(case_file("tabular/rnames.csv"), {"--impute", "mean", "-k", "3"});
  const AppResult with_id = cli({"predict", "--model", plain, "--query", case_file("tabular/query_extra.csv"), "--id", "note"});
  const AppResult with_id_train = cli({"predict", "--train", case_file("tabular/rnames.csv"), "--impute", "mean", "-k", "3",
                                       "--query", case_file("tabular/query_extra.csv"), "--id", "note"});
  ASSERT_EQ(with_id.code, 0) << with_id;
  EXPECT_EQ(with_id.out, with_id_train.out);
  EXPECT_EQ(with_id.out.rfind("note,prediction\n", 0), 0u) << with_id.out;
  expect_refused_without_output({"predict", "--model", plain, "--query", case_file("tabular/query_extra.csv"), "--id", "colour"},
                                {"option --id: \"colour\" names a column of", "rnames.csv, which was read without --id"});
}

TEST(CliModel, RowNamesLeftOutAtTheFitMayIdentifyTheQueries) {
  // The training file's unnamed first column (row names) is neither a feature nor the label: a
  // model fitted without --id may carry the query file's row names, as --train --id 0 does.
  const std::string model = fitted(case_file("tabular/rnames.csv"), {"--impute", "mean", "-k", "3"});
  const AppResult carried = cli({"predict", "--model", model, "--query", case_file("tabular/rnames_query.csv"), "--id", "0"});
  const AppResult trained = cli({"predict", "--train", case_file("tabular/rnames.csv"), "--impute", "mean", "-k", "3", "--query",
                                 case_file("tabular/rnames_query.csv"), "--id", "0"});
  ASSERT_EQ(carried.code, 0) << carried;
  ASSERT_EQ(trained.code, 0) << trained;
  EXPECT_EQ(carried.out, trained.out);
  EXPECT_EQ(carried.out.rfind(",prediction\n", 0), 0u) << carried.out;
}

TEST(CliModelRefusals, NeitherTrainNorModel) {
  expect_refused_without_output({"predict", "--query", kIrisNew}, {"option --train: is required by knn-cli predict (or --model"});
  expect_refused_without_output({"neighbors", "--query", kIrisNew}, {"option --train: is required by knn-cli neighbors"});
  const std::string model = fitted(kIris, {});
  expect_refused_without_output({"predict", "--model", "-", "--query", "-"}, {"standard input"});
  expect_refused_without_output({"predict", "--model", model}, {"option --query: is required"});
}

// Models the library makes and knn-cli cannot answer with.
TEST(CliModelRefusals, ModelsWithoutLabelsOrColumns) {
  knn::CsvOptions o;
  const knn::Dataset iris = knn::load_csv(kIris, o);
  knn::NearestNeighbors nn;
  nn.fit(iris);
  const std::string neighbors = temp_path("neighbors_only.knn");
  nn.save(neighbors);
  expect_refused_without_output({"predict", "--model", neighbors, "--query", kIrisNew},
                                {neighbors + ": holds a nearest-neighbours model without labels"});
  const AppResult answered = cli({"neighbors", "--model", neighbors, "--query", kIrisNew});
  EXPECT_EQ(answered.out, cli({"neighbors", "--train", kIris, "--query", kIrisNew}).out);
  knn::KnnClassifier on_matrix;
  on_matrix.fit(iris.features, iris.labels);
  const std::string matrix = temp_path("matrix.knn");
  on_matrix.save(matrix);
  expect_refused_without_output({"predict", "--model", matrix, "--query", kIrisNew}, {matrix + ": holds a model fitted on a matrix"});
}

TEST(CliModelRefusals, DamagedForeignAndNewerFiles) {
  const std::string model = fitted(kIris, {"-k", "3"});
  const Bytes good = read_bytes(model);
  Bytes cut(good.begin(), good.begin() + 1000);
  Bytes flipped = good;
  flipped[2000] ^= 0x10;
  Bytes newer = good;
  knn::test::set_field(newer, knn::test::kVersionField, 2, 4);
  knn::test::reseal(newer);
  const std::string truncated = temp_path("truncated.knn"), corrupted = temp_path("corrupted.knn"), newer_file = temp_path("newer.knn");
  write_bytes(truncated, cut);
  write_bytes(corrupted, flipped);
  write_bytes(newer_file, newer);
  const Args query{"--query", kIrisNew};
  expect_refused_without_output(Args{"predict", "--model", truncated} + query,
                                {truncated + ": truncated model file: 1000 bytes of the " + std::to_string(good.size())});
  expect_refused_without_output(Args{"neighbors", "--model", corrupted} + query, {corrupted + ": corrupted model file: its checksum does not match"});
  expect_refused_without_output(Args{"predict", "--model", newer_file} + query, {newer_file + ": model file format version 2 is newer"});
  expect_refused_without_output(Args{"predict", "--model", kIris} + query, {kIris + ": not a model file"});
  expect_refused_without_output(Args{"predict", "--model", temp_path("absent.knn")} + query, {"absent.knn: cannot open"});
  expect_refused_without_output(Args{"predict", "--model", kSource + "/data"} + query, {"/data: is a directory, not a model file"});
  // As a program: exit status 2 and one line.
  const AppResult process = knn::test::run_process(kCli, Args{"predict", "--model", corrupted} + query);
  expect_refused(process, {"corrupted model file"});
}

TEST(CliModelRefusals, FitWritesWholeOrNothing) {
  const std::string kept = temp_path("kept.knn");
  knn::test::write_temp("kept.knn", "keep me\n");
  const std::string fresh = temp_path("fresh.knn");
  const auto refused = [&](const Args& args, const std::vector<std::string>& needles) {
    for (const std::string& out : {fresh, kept}) {
      SCOPED_TRACE(out);
      expect_refused(cli(args + Args{"-o", out}), needles);
    }
    EXPECT_FALSE(fs::exists(fresh));
    EXPECT_EQ(knn::test::read_file(kept), "keep me\n");
  };
  refused({"fit", "--train", case_file("line_classify.csv"), "--task", "regress"}, {"line_classify.csv:2:2:", "\"a\""});
  refused({"fit", "--train", case_file("line_classify.csv"), "-k", "6"}, {"option --k: \"6\" is larger than the 5 training rows"});
  refused({"fit", "--train", case_file("tabular/rnames.csv")}, {"missing value", "--impute"});
  refused({"fit", "--train", case_file("bad/ragged_long.csv")}, {"ragged_long.csv:3:4:"});
  refused({"fit", "--train", kIris, "--weights", "bogus"}, {"--weights", "\"bogus\""});
  expect_refused(cli({"fit", "--train", kIris}), {"option --output: is required by knn-cli fit"});
  expect_refused(cli({"fit", "--train", kIris, "-o", "-"}), {"option --output: a model file is binary"});
  expect_refused(cli({"fit", "--train", kIris, "-o", temp_path("no_such_folder/m.knn")}), {"no_such_folder"});
  EXPECT_FALSE(fs::exists(temp_path("no_such_folder")));
  expect_refused(cli({"fit", "--train", kIris, "--query", kIrisNew, "-o", fresh}), {"unknown option \"--query\""});
  expect_refused(cli({"fit", "--train", kIris, "--format", "json", "-o", fresh}), {"unknown option \"--format\""});
  EXPECT_FALSE(fs::exists(fresh));
  std::size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(knn::test::temp_dir()))
    temporaries += e.path().filename().string().find(".tmp-") != std::string::npos;
  EXPECT_EQ(temporaries, 0u) << "a temporary file was left behind";
}

// An option of another subcommand is refused with the subcommands that take it; one no
// subcommand takes, with the help alone. neighbors lists neither --task nor --weights.
TEST(CliOptions, AnotherSubcommandsOptionIsNamedSo) {
  expect_refused(cli({"neighbors", "--train", kIris, "--query", kIris, "--weights", "distance"}),
                 {"unknown option \"--weights\" (predict, evaluate and fit take it, not neighbors; see knn-cli neighbors --help)"});
  expect_refused(cli({"neighbors", "--train", kIris, "--query", kIris, "--task", "regress"}),
                 {"unknown option \"--task\" (predict, evaluate and fit take it, not neighbors;"});
  expect_refused(cli({"evaluate", "--train", kIris, "--model", "iris.knn"}),
                 {"unknown option \"--model\" (predict and neighbors take it, not evaluate; see knn-cli evaluate --help)"});
  expect_refused(cli({"predict", "--train", kIris, "--query", kIris, "--loo=1"}), {"unknown option \"--loo=1\" (evaluate takes it, not predict;"});
  expect_refused(cli({"predict", "--train", kIris, "--query", kIris, "--wieghts", "distance"}),
                 {"unknown option \"--wieghts\" (see knn-cli predict --help)"});
  const AppResult help = cli({"neighbors", "--help"});
  ASSERT_EQ(help.code, 0) << help;
  EXPECT_EQ(help.out.find("--weights"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("--task"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("rows whose nearest training rows to find"), std::string::npos) << help.out;
}

}  // namespace
