// Model files (docs/model-format.md): every model saved to a file and to bytes and loaded back
// answers as the fitted model did, bit for bit, for matrices and data sets (categories, missing
// cells, dropped rows, identifiers); saving a loaded model gives the same bytes; and a file that is
// truncated at any length, has any single bit flipped, is foreign, is of a newer version, or has
// header or metadata sizes that lie (checksums recomputed) is refused with one error line that
// names it, without a crash or a large allocation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/model.hpp"
#include "model_bytes.hpp"
#include "allocation_watch.hpp"  // no allocation of a gigabyte
#include "test_util.hpp"


namespace {

namespace fs = std::filesystem;
using knn::test::Bytes;

const std::string kSource = KNN_SOURCE_DIR;

std::string data_file(const std::string& name) { return kSource + "/data/" + name; }
std::string case_file(const std::string& name) { return kSource + "/tests/cli_cases/" + name; }

// The message of the knn::Error that `f` throws; fails the test when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const knn::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no knn::Error thrown";
  return "";
}

void expect_one_line(const std::string& message) {
  EXPECT_FALSE(message.empty());
  for (unsigned char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "not one line of printable ASCII: " << message;
}

Bytes load_bytes(const Bytes& b) {
  const auto m = knn::load_model(b.data(), b.size());
  return m->save();
}

// Saves `model` to a file and to bytes, loads both, and checks that the loaded models save the
// same bytes again and that `same(loaded)` holds for each.
template <class Model, class Same>
void round_trip(const Model& model, const std::string& name, Same&& same) {
  const Bytes bytes = model.save();
  const std::string path = (knn::test::temp_dir() / (name + ".knn")).string();
  model.save(path);
  std::ifstream f(path, std::ios::binary);
  const Bytes from_file{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ASSERT_EQ(from_file, bytes) << "the file holds other bytes than save() gives";
  const Model from_path = Model::load(path);
  const Model from_bytes = Model::load(bytes.data(), bytes.size());
  EXPECT_EQ(from_path.save(), bytes) << "saving a loaded model changed its bytes";
  EXPECT_EQ(from_bytes.save(), bytes);
  const auto any = knn::load_model(bytes.data(), bytes.size());
  EXPECT_EQ(any->kind(), model.kind());
  EXPECT_EQ(from_bytes.kind(), model.kind());
  same(from_path);
  same(from_bytes);
}

void expect_same_neighbors(const knn::Neighbors& a, const knn::Neighbors& b) {
  EXPECT_EQ(a.index, b.index);
  ASSERT_EQ(a.distance.size(), b.distance.size());
  EXPECT_EQ(0, std::memcmp(a.distance.data(), b.distance.data(), a.distance.size() * sizeof(double)));
}

void expect_same_matrix(const knn::Matrix& a, const knn::Matrix& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)));
}

void expect_same_doubles(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
}

// Random features with string labels: classes "c0".."c4".
struct RandomSet {
  knn::Matrix train, query;
  std::vector<std::string> labels;
  std::vector<double> targets;
};

RandomSet random_set(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  RandomSet s;
  s.train = knn::test::random_matrix(300, 7, rng, -3.0f, 5.0f);
  s.query = knn::test::random_matrix(40, 7, rng, -4.0f, 6.0f);
  for (std::size_t i = 0; i < s.train.rows; ++i) {
    s.labels.push_back("c" + std::to_string(rng() % 5));
    s.targets.push_back(std::uniform_real_distribution<double>(-10, 10)(rng));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Round trips.

TEST(ModelFileRoundTrip, ClassifierOnAMatrix) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RandomSet s = random_set(seed);
  for (const char* weights : {"uniform", "distance", "gaussian:0.7"})
    for (knn::Scaling scaling : {knn::Scaling::minmax, knn::Scaling::standard, knn::Scaling::none}) {
      SCOPED_TRACE(std::string(weights) + " " + knn::to_string(scaling));
      knn::ModelParams p;
      p.k = 9;
      p.weights = knn::Weights::parse(weights);
      p.metric = knn::Metric::l1;
      p.scaling = scaling;
      knn::KnnClassifier fitted(p);
      fitted.fit(s.train, s.labels);
      round_trip(fitted, "classifier_matrix", [&](const knn::KnnClassifier& m) {
        EXPECT_EQ(m.classes(), fitted.classes());
        EXPECT_EQ(m.predict(s.query), fitted.predict(s.query));
        expect_same_doubles(m.predict_proba(s.query), fitted.predict_proba(s.query));
        expect_same_neighbors(m.kneighbors(s.query), fitted.kneighbors(s.query));
        EXPECT_EQ(m.params().k, 9u);
        EXPECT_EQ(m.params().weights.to_string(), fitted.params().weights.to_string());
        EXPECT_EQ(m.params().metric, knn::Metric::l1);
        EXPECT_EQ(m.params().scaling, scaling);
        EXPECT_EQ(m.scaler().offset(), fitted.scaler().offset());
        EXPECT_EQ(m.scaler().scale(), fitted.scaler().scale());
        EXPECT_TRUE(m.layout().column_names.empty()) << "a model fitted on a matrix has no CSV columns";
      });
    }
}

TEST(ModelFileRoundTrip, RegressorAndNeighborsOnAMatrix) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RandomSet s = random_set(seed);
  knn::ModelParams p;
  p.k = 6;
  p.weights = knn::Weights::parse("inverse:0.3");
  p.metric = knn::Metric::cosine;
  p.scaling = knn::Scaling::standard;
  knn::KnnRegressor reg(p);
  reg.fit(s.train, s.targets);
  round_trip(reg, "regressor_matrix", [&](const knn::KnnRegressor& m) {
    expect_same_doubles(m.predict(s.query), reg.predict(s.query));
    expect_same_neighbors(m.kneighbors(s.query), reg.kneighbors(s.query));
  });
  knn::NearestNeighbors nn(p);
  nn.fit(s.train);
  round_trip(nn, "neighbors_matrix", [&](const knn::NearestNeighbors& m) {
    expect_same_neighbors(m.kneighbors(s.query), nn.kneighbors(s.query));
  });
}

// survey.csv: row names, categorical columns, 107 missing cells filled by the imputation.
TEST(ModelFileRoundTrip, ClassifierOnADataSetWithCategoriesAndMissingCells) {
  knn::CsvOptions o;
  o.label = "Exer";
  o.query_file_follows = true;
  const knn::Dataset train = knn::load_csv(data_file("survey.csv"), o);
  for (knn::Impute impute : {knn::Impute::mean, knn::Impute::median, knn::Impute::most_frequent}) {
    SCOPED_TRACE(knn::to_string(impute));
    knn::ModelParams p;
    p.k = 7;
    p.impute = impute;
    p.weights = knn::Weights::parse("distance");
    knn::KnnClassifier fitted(p);
    fitted.fit(train);
    const knn::Dataset query = knn::load_query_csv(data_file("survey.csv"), o, train);
    round_trip(fitted, "classifier_survey", [&](const knn::KnnClassifier& m) {
      // The query file read against the loaded model's layout is the same data set.
      const knn::Dataset again = knn::load_query_csv(data_file("survey.csv"), m.layout().options, m.layout());
      expect_same_matrix(again.features, query.features);
      EXPECT_EQ(again.feature_types, query.feature_types);
      expect_same_matrix(m.encode(query), fitted.encode(query));
      EXPECT_EQ(m.predict(query), fitted.predict(query));
      expect_same_doubles(m.predict_proba(m.encode(query)), fitted.predict_proba(fitted.encode(query)));
      expect_same_neighbors(m.kneighbors(query), fitted.kneighbors(query));
      EXPECT_EQ(m.preprocessor().column_names(), fitted.preprocessor().column_names());
      EXPECT_EQ(m.preprocessor().impute(), impute);
      EXPECT_EQ(m.layout().column_names, train.column_names);
      EXPECT_EQ(m.layout().unnamed_columns, train.unnamed_columns);
      EXPECT_EQ(m.layout().label_name, "Exer");
      EXPECT_EQ(m.layout().options.label, "Exer");
      EXPECT_TRUE(m.layout().file_rows.empty());
    });
  }
}

// Rows dropped for a missing value, an identifier column, the file's rows kept in the layout.
TEST(ModelFileRoundTrip, DroppedRowsAndIdentifiers) {
  knn::CsvOptions o;
  o.drop_missing = true;
  o.drop_missing_features = false;  // imputed: only the rows without a label are dropped
  o.id = "0";
  const std::string train_file = kSource + "/tests/mpi/tabular_train.csv", query_file = kSource + "/tests/mpi/tabular_query.csv";
  const knn::Dataset train = knn::load_csv(train_file, o);
  ASSERT_GT(train.dropped_rows, 0u);
  knn::ModelParams p;
  p.k = 5;
  p.impute = knn::Impute::most_frequent;
  knn::NearestNeighbors fitted(p);
  fitted.fit(train);
  EXPECT_EQ(fitted.layout().file_rows, train.file_rows);
  const knn::Dataset query = knn::load_query_csv(query_file, o, train);
  ASSERT_TRUE(query.has_ids());
  round_trip(fitted, "neighbors_dropped", [&](const knn::NearestNeighbors& m) {
    EXPECT_EQ(m.layout().file_rows, train.file_rows);
    EXPECT_EQ(m.layout().options.id, "0");
    EXPECT_TRUE(m.layout().options.drop_missing);
    const knn::Dataset again = knn::load_query_csv(query_file, m.layout().options, m.layout());
    EXPECT_EQ(again.ids, query.ids);
    expect_same_neighbors(m.kneighbors(again), fitted.kneighbors(query));
  });
}

TEST(ModelFileRoundTrip, RegressorOnADataSet) {
  knn::CsvOptions o;
  const knn::Dataset train = knn::load_csv(data_file("diabetes.csv"), o);
  knn::ModelParams p;
  p.k = 15;
  p.weights = knn::Weights::parse("distance");
  p.scaling = knn::Scaling::standard;
  knn::KnnRegressor fitted(p);
  fitted.fit(train);
  const knn::Dataset query = knn::load_query_csv(kSource + "/tests/mpi/diabetes_query.csv", o, train);
  round_trip(fitted, "regressor_diabetes", [&](const knn::KnnRegressor& m) {
    expect_same_doubles(m.predict(query), fitted.predict(query));
  });
}

// Bytes handed over at any address (a Python buffer need not be aligned as floats).
TEST(ModelFileRoundTrip, BytesAtAnyAlignment) {
  const RandomSet s = random_set(9);
  knn::KnnRegressor fitted;
  fitted.fit(s.train, s.targets);
  const Bytes bytes = fitted.save();
  for (std::size_t shift = 0; shift < 4; ++shift) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    Bytes moved(shift, 0);
    moved.insert(moved.end(), bytes.begin(), bytes.end());
    const knn::KnnRegressor m = knn::KnnRegressor::load(moved.data() + shift, bytes.size());
    expect_same_doubles(m.predict(s.query), fitted.predict(s.query));
    EXPECT_EQ(m.save(), bytes);
  }
}

TEST(ModelFileRoundTrip, KCanChangeAfterLoading) {
  const RandomSet s = random_set(7);
  knn::ModelParams p;
  p.k = 4;
  knn::KnnClassifier fitted(p);
  fitted.fit(s.train, s.labels);
  const Bytes bytes = fitted.save();
  knn::KnnClassifier m = knn::KnnClassifier::load(bytes.data(), bytes.size());
  p.k = 300;
  knn::KnnClassifier all(p);
  all.fit(s.train, s.labels);
  m.set_k(300);
  EXPECT_EQ(m.predict(s.query), all.predict(s.query));
  expect_same_doubles(m.predict_proba(s.query), all.predict_proba(s.query));
  for (std::size_t k : {std::size_t{0}, std::size_t{301}}) {
    try {
      m.set_k(k);
      ADD_FAILURE() << "k " << k << " accepted";
    } catch (const knn::Error& e) {
      EXPECT_EQ(e.parameter_name(), "k") << e.what();
    }
  }
  EXPECT_EQ(m.params().k, 300u) << "a refused k changed the model";
}

TEST(ModelFileRoundTrip, KindsAreCheckedOnLoad) {
  const RandomSet s = random_set(3);
  knn::KnnClassifier c;
  c.fit(s.train, s.labels);
  const Bytes bytes = c.save();
  const std::string message = error_of([&] { knn::KnnRegressor::load(bytes.data(), bytes.size()); });
  EXPECT_NE(message.find("<buffer>: holds a classifier model, not a regressor model"), std::string::npos) << message;
  const std::string path = (knn::test::temp_dir() / "kinds.knn").string();
  c.save(path);
  const std::string named = error_of([&] { knn::NearestNeighbors::load(path); });
  EXPECT_EQ(named.rfind(path + ": holds a classifier", 0), 0u) << named;
  EXPECT_NE(error_of([] { knn::KnnClassifier().save(); }).find("not fitted"), std::string::npos);
}

TEST(ModelFileRoundTrip, FilesAreWrittenWholeOrNotAtAll) {
  const RandomSet s = random_set(5);
  knn::NearestNeighbors m;
  m.fit(s.train);
  const std::string missing = (knn::test::temp_dir() / "no_such_folder" / "m.knn").string();
  expect_one_line(error_of([&] { m.save(missing); }));
  EXPECT_FALSE(fs::exists(fs::path(missing).parent_path()));
  const std::string folder = (knn::test::temp_dir() / "a_folder").string();
  fs::create_directories(folder);
  const std::string dir_error = error_of([&] { knn::load_model(folder); });
  EXPECT_EQ(dir_error, folder + ": is a directory, not a model file");
  const std::string absent = error_of([&] { knn::load_model(folder + "/absent.knn"); });
  EXPECT_NE(absent.find("absent.knn: cannot open"), std::string::npos) << absent;
}

// ---------------------------------------------------------------------------------------------
// Damaged, foreign and newer files.

// A small classifier's file: a categorical feature, missing cells filled, a layout.
Bytes small_model() {
  knn::CsvOptions o;
  o.query_file_follows = true;
  const knn::Dataset train = knn::load_csv(case_file("tabular/rnames.csv"), o);
  knn::ModelParams p;
  p.k = 2;
  p.impute = knn::Impute::most_frequent;
  knn::KnnClassifier m(p);
  m.fit(train);
  return m.save();
}

std::string load_error(const Bytes& b) {
  return error_of([&] { knn::load_model(b.data(), b.size()); });
}

TEST(ModelFileDamage, TheSmallModelLoads) {
  const Bytes b = small_model();
  ASSERT_GT(b.size(), 256u);
  EXPECT_EQ(load_bytes(b), b);
  EXPECT_EQ(knn::test::get_field(b, knn::test::kRowsOffsetField, 8) % 64, 0u);
  EXPECT_EQ(knn::test::get_field(b, knn::test::kRowsOffsetField, 8) + knn::test::get_field(b, knn::test::kRowsSizeField, 8), b.size())
      << "the rows end the file";
}

TEST(ModelFileDamage, EveryTruncationIsRefused) {
  const Bytes b = small_model();
  for (std::size_t n = 0; n < b.size(); ++n) {
    const Bytes cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string m = load_error(cut);
    SCOPED_TRACE("length " + std::to_string(n) + ": " + m);
    expect_one_line(m);
    EXPECT_EQ(m.rfind("<buffer>: ", 0), 0u);
    EXPECT_TRUE(m.find(n == 0 ? "empty file" : "truncated model file") != std::string::npos);
  }
}

TEST(ModelFileDamage, EverySingleBitFlipFailsTheChecksum) {
  const Bytes b = small_model();
  for (std::size_t i = 0; i < b.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      Bytes flipped = b;
      flipped[i] ^= static_cast<std::uint8_t>(1u << bit);
      const std::string m = load_error(flipped);
      if (m.find("checksum does not match") == std::string::npos || m.rfind("<buffer>: corrupted model file: ", 0) != 0)
        ADD_FAILURE() << "byte " << i << " bit " << bit << ": " << m;
    }
}

TEST(ModelFileDamage, ForeignFilesAreNotModelFiles) {
  const std::string csv = "x,label\n0,a\n1,b\n";
  const Bytes png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  Bytes random(4096);
  std::mt19937 rng(11);
  for (auto& v : random) v = static_cast<std::uint8_t>(rng());
  for (const Bytes& b : {Bytes(csv.begin(), csv.end()), png, random, Bytes{'a'}}) {
    const std::string m = load_error(b);
    EXPECT_EQ(m, "<buffer>: not a model file (it does not begin with the model file signature)");
  }
  const std::string path = case_file("line_classify.csv");
  EXPECT_EQ(error_of([&] { knn::load_model(path); }), path + ": not a model file (it does not begin with the model file signature)");
}

TEST(ModelFileDamage, NewerVersionsAreRefusedAsSuch) {
  Bytes b = small_model();
  knn::test::set_field(b, knn::test::kVersionField, 2, 4);
  knn::test::reseal(b);
  EXPECT_EQ(load_error(b), "<buffer>: model file format version 2 is newer than this libknn reads (up to 1); read it with a newer libknn");
  knn::test::set_field(b, knn::test::kVersionField, 0, 4);
  knn::test::reseal(b);
  EXPECT_EQ(load_error(b), "<buffer>: corrupted model file: format version 0");
}

TEST(ModelFileDamage, BytesAfterTheEndAreRefused) {
  Bytes b = small_model();
  b.push_back(0);
  const std::string m = load_error(b);
  EXPECT_NE(m.find("corrupted model file: 1 bytes after its end"), std::string::npos) << m;
}

// Header fields and metadata counts that lie, with both checksums made to match: refused as
// corrupt, before anything is allocated by them.
TEST(ModelFileDamage, SizesThatLieAreRefused) {
  const Bytes good = small_model();
  using knn::test::set_field;
  struct Lie {
    const char* what;
    std::size_t at, bytes;
    std::uint64_t value;
    const char* found;  // in the message: the check past the checksums that refuses it
  };
  const std::uint64_t huge = std::uint64_t{1} << 40, most = ~std::uint64_t{0};
  // The metadata: k (8), weights (4 + 8), metric, scaling, impute (4 each), the preprocessing's
  // impute (4), the feature count (8), then the first feature's name length.
  const std::size_t meta = knn::test::kModelHeader, features = meta + 36, first_name = features + 8;
  const Lie lies[] = {
      {"rows", knn::test::kRowsField, 8, huge, "1099511627776 rows of 4 columns do not fit"},
      {"rows at the most", knn::test::kRowsField, 8, most, "rows of 4 columns do not fit"},
      {"no rows", knn::test::kRowsField, 8, 0, "no training rows"},
      {"columns", knn::test::kColumnsField, 8, huge, "6 rows of 1099511627776 columns do not fit"},
      {"columns at the most", knn::test::kColumnsField, 8, most, "columns do not fit"},
      {"metadata size", knn::test::kMetaSizeField, 8, huge, "the metadata section"},
      {"metadata size at the most", knn::test::kMetaSizeField, 8, most, "the metadata section"},
      {"labels offset", knn::test::kLabelsOffsetField, 8, 8, "the labels section"},
      {"labels size", knn::test::kLabelsSizeField, 8, huge, "the labels section"},
      {"rows offset", knn::test::kRowsOffsetField, 8, most - 63, "the rows section"},
      {"rows size", knn::test::kRowsSizeField, 8, huge, "the rows section"},
      {"kind", knn::test::kKindField, 4, 7, "unknown model kind 7"},
      {"reserved byte", 100, 1, 1, "reserved header byte 100"},
      {"k", meta, 8, most, "k 18446744073709551615 is not from 1 to the 6 rows"},
      {"weights", meta + 8, 4, 99, "weights: unknown value 99"},
      {"feature count", features, 8, huge, "features: 1099511627776 entries pass the end of the metadata"},
      {"feature count at the most", features, 8, most, "features: 18446744073709551615 entries pass"},
      {"feature name length", first_name, 8, most, "feature name: 18446744073709551615 bytes pass"},
      {"feature name length past the metadata", first_name, 8, 1 << 20, "feature name: 1048576 bytes pass"},
  };
  for (const Lie& lie : lies) {
    Bytes b = good;
    set_field(b, lie.at, lie.value, lie.bytes);
    knn::test::reseal(b);
    const std::string m = load_error(b);
    SCOPED_TRACE(std::string(lie.what) + ": " + m);
    expect_one_line(m);
    EXPECT_EQ(m.rfind("<buffer>: corrupted model file: ", 0), 0u);
    EXPECT_NE(m.find(lie.found), std::string::npos);
  }
}

// The fuzz target's seeds are model files of this format version.
TEST(ModelFileDamage, FuzzSeedsLoad) {
  std::size_t seeds = 0;
  for (const auto& e : fs::directory_iterator(kSource + "/tests/fuzz/corpus/model")) {
    std::ifstream f(e.path(), std::ios::binary);
    const Bytes b{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    SCOPED_TRACE(e.path().string());
    EXPECT_EQ(load_bytes(b), b);
    ++seeds;
  }
  EXPECT_GE(seeds, 3u);
}

}  // namespace

// A model of more than one checksum part (the body's CRC-32 is taken in parts on several threads
// and joined): the header holds zlib's CRC-32 of the whole body in one pass, and the file loads.
TEST(ModelFileChecksum, LargeBodiesHoldTheOnePassCrc) {
  const std::size_t rows = 40000, cols = 70;  // about 11 MB of rows: two parts and a remainder
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  knn::Matrix x(rows, cols);
  for (float& v : x.values) v = u(rng);
  std::vector<double> y(rows);
  for (std::size_t i = 0; i < rows; ++i) y[i] = x(i, 0);
  knn::KnnRegressor m;
  m.fit(x, y);
  const Bytes b = m.save();
  ASSERT_GT(b.size(), std::size_t{16} << 20 >> 1);
  const uLong one_pass = crc32_z(crc32_z(0, Z_NULL, 0), b.data() + knn::test::kModelHeader, b.size() - knn::test::kModelHeader);
  EXPECT_EQ(knn::test::get_field(b, knn::test::kBodyCrcField, 4), one_pass);
  EXPECT_NO_THROW(knn::load_model(b.data(), b.size()));
}
