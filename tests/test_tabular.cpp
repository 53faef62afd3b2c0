// Tabular input: column types, missing cells, row names and identifiers, column names, the fitted
// preprocessing (imputation and one-hot encoding), scaling that keeps one-hot columns, and models
// and evaluation on data sets with categorical and missing cells.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/evaluation.hpp"
#include "knn/model.hpp"
#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"
#include "test_util.hpp"

namespace {

using knn::ColumnType;
using knn::test::write_temp;
using Strings = std::vector<std::string>;

/// Writes a file of this test's own and returns its path.
std::string file(const std::string& name, const std::string& text) { return write_temp("tabular/" + name, text); }

knn::Dataset load(const std::string& path, const knn::CsvOptions& o = {}) { return knn::load_csv(path, o); }

/// An error's message with each parameter it mentions shown as <name>, so that a test can tell a
/// parameter's mention from the same word in running text.
std::string marked(const knn::Error& e) {
  return e.message([](std::string_view n) { return "<" + std::string(n) + ">"; },
                   [](std::string_view n) { return "parameter <" + std::string(n) + ">"; });
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const knn::Error& e) {
    return marked(e);
  }
  return "no error";
}

/// The same floats bit for bit (NaN for a missing cell compares equal to itself here).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

knn::Matrix matrix(std::size_t rows, std::size_t cols, std::vector<float> values) {
  knn::Matrix m(rows, cols);
  m.values = std::move(values);
  return m;
}

knn::ModelParams cpu_params(std::size_t k, knn::Scaling scaling, knn::Impute impute) {
  knn::ModelParams p;
  p.k = k;
  p.scaling = scaling;
  p.impute = impute;
  p.backend.device = knn::Device::cpu;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Column types

TEST(TabularTypes, TextCellMakesAColumnCategoricalAndQuotesAreNotPartOfAValue) {
  const auto d = load(file("types.csv", "a,b,c,label\n1,x,\"5\",p\n2,NA,3,q\n-0.5,\"y z\",\"-2.25\",r\n"));
  ASSERT_EQ(d.feature_names, (Strings{"a", "b", "c"}));
  EXPECT_EQ(d.feature_types, (std::vector<ColumnType>{ColumnType::numeric, ColumnType::categorical, ColumnType::numeric}));
  ASSERT_EQ(d.levels.size(), 3u);
  EXPECT_TRUE(d.levels[0].empty());
  EXPECT_EQ(d.levels[1], (Strings{"x", "y z"}));
  EXPECT_TRUE(d.levels[2].empty());
  EXPECT_EQ(d.features(0, 0), 1.0f);
  EXPECT_EQ(d.features(2, 0), -0.5f);
  EXPECT_EQ(d.features(0, 1), 0.0f);
  EXPECT_TRUE(std::isnan(d.features(1, 1)));
  EXPECT_EQ(d.features(2, 1), 1.0f);
  EXPECT_EQ(d.features(0, 2), 5.0f);
  EXPECT_EQ(d.features(1, 2), 3.0f);
  EXPECT_EQ(d.features(2, 2), -2.25f);
  EXPECT_TRUE(d.has_missing());
}

TEST(TabularTypes, CategoricalAndNumericOverridesByNameOrIndex) {
  const std::string path = file("overrides.csv", "a,b,c,label\n1,x,7,p\n2,y,7.5,q\n10,x,8,r\n");
  knn::CsvOptions by_name;
  by_name.categorical = {"a"};
  const auto d = load(path, by_name);
  EXPECT_EQ(d.feature_types, (std::vector<ColumnType>{ColumnType::categorical, ColumnType::categorical, ColumnType::numeric}));
  EXPECT_EQ(d.levels[0], (Strings{"1", "10", "2"}));  // byte order, not numeric order
  EXPECT_EQ(d.features(0, 0), 0.0f);
  EXPECT_EQ(d.features(1, 0), 2.0f);
  EXPECT_EQ(d.features(2, 0), 1.0f);

  knn::CsvOptions by_index;
  by_index.categorical = {"0", "-2"};  // a, and c counted from the end
  const auto e = load(path, by_index);
  EXPECT_EQ(e.feature_types, (std::vector<ColumnType>{ColumnType::categorical, ColumnType::categorical, ColumnType::categorical}));
  EXPECT_EQ(e.levels[2], (Strings{"7", "7.5", "8"}));
  EXPECT_EQ(e.features.values, (std::vector<float>{0, 0, 0, 2, 1, 1, 1, 0, 2}));

  knn::CsvOptions numeric_text;
  numeric_text.numeric = {"1"};  // b, which holds text
  EXPECT_EQ(error_of([&] { load(path, numeric_text); }),
            path + ":2:2: not a finite number: \"x\" in column \"b\", which <numeric> reads as numbers");
  numeric_text.numeric = {"B"};  // the same column by name, in another case
  EXPECT_EQ(error_of([&] { load(path, numeric_text); }),
            path + ":2:2: not a finite number: \"x\" in column \"b\", which <numeric> reads as numbers");

  knn::CsvOptions both;
  both.categorical = {"c"};
  both.numeric = {"c"};
  EXPECT_EQ(error_of([&] { load(path, both); }), "parameter <numeric>: \"c\" is also given to <categorical>");
}

TEST(TabularTypes, NonFiniteNumbersAreErrorsInColumnsReadAsNumbers) {
  for (const char* bad : {"inf", "-inf", "1e999"}) {
    const std::string path = file("inf.csv", std::string("a,b,label\n1,2,x\n3,") + bad + ",y\n");
    EXPECT_EQ(error_of([&] { load(path); }),
              path + ":3:2: not a finite number: \"" + bad + "\" in column \"b\"")
        << bad;
    knn::CsvOptions numbers;
    numbers.numeric = {"b"};
    EXPECT_EQ(error_of([&] { load(path, numbers); }),
              path + ":3:2: not a finite number: \"" + bad + "\" in column \"b\"")
        << bad;
    // Read as categories, the same cell is one more text.
    knn::CsvOptions text;
    text.categorical = {"b"};
    const auto d = load(path, text);
    Strings expected{"2", bad};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(d.levels[1], expected) << bad;
  }
}

TEST(TabularTypes, LevelsAreSortedInByteOrderAndCodesMatchTheTexts) {
  const auto d = load(file("levels.csv", "c,label\nb,p\nB,q\na,p\n10,q\n9,p\nb,q\n"));
  ASSERT_EQ(d.feature_types, (std::vector<ColumnType>{ColumnType::categorical}));
  EXPECT_EQ(d.levels[0], (Strings{"10", "9", "B", "a", "b"}));
  EXPECT_EQ(d.features.values, (std::vector<float>{4, 2, 3, 0, 1, 4}));
  const Strings texts{"b", "B", "a", "10", "9", "b"};
  for (std::size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(d.levels[0][static_cast<std::size_t>(d.features(i, 0))], texts[i]) << i;
}

std::string big_typed_csv(bool quoted_header, std::size_t rows, std::size_t text_row, std::size_t na_row) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> u(-99999, 99999);
  std::string s = quoted_header ? "\"f0\",f1,f2,f3,f4,f5,c,label\n" : "f0,f1,f2,f3,f4,f5,c,label\n";
  for (std::size_t i = 0; i < rows; ++i) {
    for (int j = 0; j < 6; ++j) s += std::to_string(u(rng) / 100.0) + ",";
    s += i == text_row ? std::string("zz") : i == na_row ? std::string("NA") : std::to_string(1 + i % 3);
    s += i % 2 ? ",yes\n" : ",no\n";
  }
  return s;
}

TEST(TabularTypes, TextLateInALargeParallelFileMakesTheColumnCategorical) {
  // Over 4 MiB without quotes: the first read is parallel, and the text cell is in its last chunk.
  // The quoted header makes the second file one that is read in order.
  constexpr std::size_t rows = 70000, text_row = rows - 3, na_row = 100;
  const std::string fast = file("big_text.csv", big_typed_csv(false, rows, text_row, na_row));
  const std::string slow = file("big_text_quoted.csv", big_typed_csv(true, rows, text_row, na_row));
  ASSERT_GT(std::filesystem::file_size(fast), 4u << 20);
  const auto a = load(fast);
  const auto b = load(slow);
  ASSERT_EQ(a.size(), rows);
  ASSERT_EQ(a.dims(), 7u);
  std::vector<ColumnType> types(7, ColumnType::numeric);
  types[6] = ColumnType::categorical;
  EXPECT_EQ(a.feature_types, types);
  EXPECT_EQ(a.levels[6], (Strings{"1", "2", "3", "zz"}));
  for (std::size_t i = 0; i < rows; ++i) {
    const float code = a.features(i, 6);
    if (i == na_row) EXPECT_TRUE(std::isnan(code));
    else if (i == text_row) EXPECT_EQ(code, 3.0f);
    else if (code != static_cast<float>(i % 3)) ADD_FAILURE() << "row " << i << ": code " << code;
  }
  EXPECT_EQ(a.lines.back(), rows + 1);
  EXPECT_EQ(a.feature_types, b.feature_types);
  EXPECT_EQ(a.levels, b.levels);
  EXPECT_TRUE(same_bits(a.features.values, b.features.values));
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.lines, b.lines);
}

// ---------------------------------------------------------------------------------------------
// Missing values

TEST(TabularMissing, DefaultTokensAreMissing) {
  EXPECT_EQ(knn::default_na_values(), (Strings{"", "NA", "N/A", "NaN", "nan", "?", "null", "NULL"}));
  const auto d = load(file("na.csv", "a,b,label\n,1,p\nNA,2,p\n N/A ,3,p\nNaN,4,p\nnan,5,q\n?,6,q\nnull,7,q\nNULL,8,q\n1.5,9,q\n"));
  ASSERT_EQ(d.size(), 9u);
  EXPECT_EQ(d.feature_types, (std::vector<ColumnType>{ColumnType::numeric, ColumnType::numeric}));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_TRUE(std::isnan(d.features(i, 0))) << i;
  EXPECT_EQ(d.features(8, 0), 1.5f);
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(d.features(i, 1), static_cast<float>(i + 1));
}

TEST(TabularMissing, CustomTokensReplaceTheDefaults) {
  knn::CsvOptions o;
  o.na_values = {"-999"};
  const auto d = load(file("na_custom.csv", "a,b,label\n-999,x,p\n2,,q\n-999.0,NA,r\n -999 ,x,s\n"), o);
  EXPECT_EQ(d.feature_types, (std::vector<ColumnType>{ColumnType::numeric, ColumnType::categorical}));
  EXPECT_TRUE(std::isnan(d.features(0, 0)));
  EXPECT_EQ(d.features(1, 0), 2.0f);
  EXPECT_EQ(d.features(2, 0), -999.0f);  // a number, not the token's text
  EXPECT_TRUE(std::isnan(d.features(3, 0)));
  // The empty cell and NA are text now.
  EXPECT_EQ(d.levels[1], (Strings{"", "NA", "x"}));
  EXPECT_EQ(d.features(0, 1), 2.0f);
  EXPECT_EQ(d.features(1, 1), 0.0f);
  EXPECT_EQ(d.features(2, 1), 1.0f);
  EXPECT_FALSE(std::isnan(d.features(3, 1)));

  knn::CsvOptions numbers = o;
  numbers.numeric = {"a"};
  const auto n = load(file("na_custom_numeric.csv", "a,label\n-999,p\n4,q\n"), numbers);
  EXPECT_TRUE(std::isnan(n.features(0, 0)));
  EXPECT_EQ(n.features(1, 0), 4.0f);
}

TEST(TabularMissing, MissingLabelIsAnErrorNamingTheRow) {
  const std::string empty = file("nolabel.csv", "a,label\n1,x\n2,\n3,y\n");
  EXPECT_EQ(error_of([&] { load(empty); }),
            empty + ":3:2: missing label \"\" in column \"label\" (rows with a missing label can be dropped with <drop_missing>)");
  const std::string na = file("nalabel.csv", "a,label\n1,x\n2,y\n3,NA\n");
  EXPECT_EQ(error_of([&] { load(na); }),
            na + ":4:2: missing label \"NA\" in column \"label\" (rows with a missing label can be dropped with <drop_missing>)");
  knn::CsvOptions lenient;
  lenient.lenient = true;
  const auto d = load(na, lenient);
  EXPECT_EQ(d.labels, (Strings{"x", "y", ""}));
  EXPECT_EQ(d.missing_labels, (std::vector<std::size_t>{2}));
}

TEST(TabularMissing, DropMissingDropsRowsAndRecordsWhichWereKept) {
  knn::CsvOptions o;
  o.drop_missing = true;
  const auto d = load(file("drop.csv", "a,b,label\n1,x,p\nNA,y,q\n3,?,r\n4,z,\n5,w,s\n6,x,t\n"), o);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.dropped_rows, 3u);
  EXPECT_EQ(d.labels, (Strings{"p", "s", "t"}));
  EXPECT_EQ(d.lines, (std::vector<std::size_t>{2, 6, 7}));
  EXPECT_EQ(d.file_rows, (std::vector<std::size_t>{0, 4, 5}));
  EXPECT_EQ(d.file_row(0), 0u);
  EXPECT_EQ(d.file_row(1), 4u);
  EXPECT_EQ(d.file_row(2), 5u);
  EXPECT_FALSE(d.has_missing());
  EXPECT_EQ(d.features(0, 0), 1.0f);
  EXPECT_EQ(d.features(1, 0), 5.0f);
  EXPECT_EQ(d.features(2, 0), 6.0f);
  const auto text = [&](std::size_t row) { return d.levels[1].at(static_cast<std::size_t>(d.features(row, 1))); };
  EXPECT_EQ(text(0), "x");
  EXPECT_EQ(text(1), "w");
  EXPECT_EQ(text(2), "x");

  // Nothing to drop: every row kept, each its own file row.
  const auto all = load(file("drop_none.csv", "a,label\n1,p\n2,q\n"), o);
  EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(all.dropped_rows, 0u);
  EXPECT_EQ(all.file_row(1), 1u);

  const std::string gone = file("drop_all.csv", "a,label\nNA,p\n2,\n");
  EXPECT_EQ(error_of([&] { load(gone, o); }), gone + ": no data rows left once rows with a missing value are dropped");
}

// ---------------------------------------------------------------------------------------------
// Row names and identifiers

TEST(TabularIds, UnnamedColumnIsLeftOutOfTheFeatures) {
  // R's write.csv: a first column of row names under an empty, quoted header.
  const auto d = load(file("rnames.csv", "\"\",\"a\",\"b\",\"label\"\n\"1\",0.5,2,\"x\"\n\"2\",1.5,4,\"y\"\n"));
  EXPECT_EQ(d.column_names, (Strings{"", "a", "b", "label"}));
  EXPECT_EQ(d.feature_names, (Strings{"a", "b"}));
  EXPECT_EQ(d.feature_columns, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(d.unnamed_columns, (std::vector<std::size_t>{0}));
  EXPECT_EQ(d.features.values, (std::vector<float>{0.5f, 2, 1.5f, 4}));
  EXPECT_EQ(d.labels, (Strings{"x", "y"}));
  // pandas' to_csv writes the same column with an unquoted empty name; so may the query file.
  const auto q = knn::load_query_csv(file("rnames_q.csv", ",b,a\n0,8,7\n"), {}, d);
  EXPECT_EQ(q.unnamed_columns, (std::vector<std::size_t>{0}));
  EXPECT_EQ(q.features.values, (std::vector<float>{7, 8}));
}

TEST(TabularIds, IdColumnIsKeptBesideTheRowsAndIsNoFeature) {
  knn::CsvOptions o;
  o.id = "name";
  const auto d = load(file("ids.csv", "name,a,label\nr1,1,x\nr2,2,y\n"), o);
  EXPECT_TRUE(d.has_ids());
  EXPECT_EQ(d.id_name, "name");
  EXPECT_EQ(d.id_column, 0u);
  EXPECT_EQ(d.ids, (Strings{"r1", "r2"}));
  EXPECT_EQ(d.feature_names, (Strings{"a"}));
  const auto q = knn::load_query_csv(file("ids_q.csv", "a,name\n5,q1\n6,q2\n"), o, d);
  EXPECT_EQ(q.ids, (Strings{"q1", "q2"}));
  EXPECT_EQ(q.id_column, 1u);
  EXPECT_EQ(q.features.values, (std::vector<float>{5, 6}));
}

TEST(TabularIds, IdMayBeInTheQueryFileOnly) {
  knn::CsvOptions o;
  o.id = "name";
  const auto d = load(file("ids_train.csv", "a,label\n1,x\n2,y\n"), o);
  EXPECT_FALSE(d.has_ids());
  EXPECT_TRUE(d.ids.empty());
  EXPECT_EQ(d.feature_names, (Strings{"a"}));
  const auto q = knn::load_query_csv(file("ids_only_q.csv", "name,a\nq1,5\nq2,6\n"), o, d);
  EXPECT_TRUE(q.has_ids());
  EXPECT_EQ(q.id_name, "name");
  EXPECT_EQ(q.ids, (Strings{"q1", "q2"}));
  EXPECT_EQ(q.features.values, (std::vector<float>{5, 6}));
}

TEST(TabularIds, QueryOnlyColumnNamedByIgnore) {
  const std::string train = file("ign_train.csv", "a,label\n1,x\n2,y\n");
  knn::CsvOptions o;
  o.ignore = {"note"};
  // Without a query file to follow, the name must be a column of the training file.
  EXPECT_EQ(error_of([&] { load(train, o); }),
            "parameter <ignore>: no column named \"note\" in " + train + " (columns: \"a\", \"label\")");
  o.query_file_follows = true;
  const auto d = load(train, o);
  EXPECT_EQ(d.ignore_elsewhere, (Strings{"note"}));
  EXPECT_EQ(d.feature_names, (Strings{"a"}));
  const auto q = knn::load_query_csv(file("ign_q.csv", "note,a\nhello,5\n"), o, d);
  EXPECT_EQ(q.dims(), 1u);
  EXPECT_EQ(q.features.values, (std::vector<float>{5}));
  // The query file must then have it.
  const std::string lacking = file("ign_q2.csv", "a\n5\n");
  EXPECT_EQ(error_of([&] { knn::load_query_csv(lacking, o, d); }),
            "parameter <ignore>: no column named \"note\" in " + train + " or " + lacking + " (columns: \"a\")");
}

TEST(TabularIds, UnknownQueryColumnIsAnError) {
  const std::string train = file("unk_train.csv", "a,label\n1,x\n2,y\n");
  const auto d = load(train);
  const std::string q = file("unk_q.csv", "a,extra\n5,1\n");
  EXPECT_EQ(error_of([&] { knn::load_query_csv(q, {}, d); }),
            q + ":1:2: column \"extra\" is not a column of " + train +
                " (leave it out with <ignore>, or carry it to the output with <id>)");
  knn::CsvOptions o;
  o.ignore = {"extra"};
  EXPECT_EQ(knn::load_query_csv(q, o, d).features.values, (std::vector<float>{5}));
}

// ---------------------------------------------------------------------------------------------
// Identifier refusal

std::string names_csv(std::size_t rows, bool duplicate) {
  std::string s = "name,a,label\n";
  for (std::size_t i = 0; i < rows; ++i)
    s += "n" + std::to_string(duplicate && i == rows - 1 ? 0 : i) + "," + std::to_string(i % 3) + (i % 2 ? ",x\n" : ",y\n");
  return s;
}

TEST(TabularIdentifier, AllDistinctCategoricalColumnIsRefused) {
  const std::string path = file("ident20.csv", names_csv(20, false));
  EXPECT_EQ(error_of([&] { load(path); }),
            path + ":1:1: column \"name\" looks like an identifier: its 20 values are all different; leave it out with "
                   "<ignore> \"name\" (or keep it as categories with <categorical>)");
  knn::CsvOptions forced;
  forced.categorical = {"name"};
  EXPECT_EQ(load(path, forced).levels[0].size(), 20u);
  forced.categorical = {"0"};
  EXPECT_EQ(load(path, forced).levels[0].size(), 20u);
  knn::CsvOptions lenient;
  lenient.lenient = true;
  EXPECT_EQ(load(path, lenient).feature_types[0], ColumnType::categorical);
  knn::CsvOptions ignored;
  ignored.ignore = {"name"};
  EXPECT_EQ(load(path, ignored).feature_names, (Strings{"a"}));
}

TEST(TabularIdentifier, SmallFilesAndRepeatedValuesAreNotRefused) {
  const auto small = load(file("ident19.csv", names_csv(19, false)));
  EXPECT_EQ(small.levels[0].size(), 19u);
  const auto repeated = load(file("ident_dup.csv", names_csv(25, true)));
  EXPECT_EQ(repeated.levels[0].size(), 24u);
}

// ---------------------------------------------------------------------------------------------
// Column names

TEST(TabularNames, OtherCaseMatchesWhenUnambiguous) {
  const std::string path = file("case.csv", "Species,sepal,Petal\na,1,2\nb,3,4\n");
  knn::CsvOptions o;
  o.label = "species";
  o.ignore = {"PETAL"};
  const auto d = load(path, o);
  EXPECT_EQ(d.label_name, "Species");
  EXPECT_EQ(d.label_column, 0u);
  EXPECT_EQ(d.feature_names, (Strings{"sepal"}));
  EXPECT_EQ(d.labels, (Strings{"a", "b"}));

  const std::string two = file("case2.csv", "Ab,aB,c\n1,2,x\n3,4,y\n");
  knn::CsvOptions exact;
  exact.label = "aB";  // an exact match wins over the other case
  EXPECT_EQ(load(two, exact).label_column, 1u);
  knn::CsvOptions ambiguous;
  ambiguous.label = "ab";
  EXPECT_EQ(error_of([&] { load(two, ambiguous); }),
            "parameter <label>: no column named \"ab\" in " + two + " (columns: \"Ab\", \"aB\", \"c\"; closest: \"Ab\")");
}

TEST(TabularNames, UnknownNameListsTheColumnsAndTheClosest) {
  const std::string path = file("closest.csv", "sepal_length,petal_length,Species\n1,2,a\n3,4,b\n");
  knn::CsvOptions o;
  o.label = "Specie";
  EXPECT_EQ(error_of([&] { load(path, o); }),
            "parameter <label>: no column named \"Specie\" in " + path +
                " (columns: \"sepal_length\", \"petal_length\", \"Species\"; closest: \"Species\")");
  knn::CsvOptions ign;
  ign.ignore = {"zzzzzzzzz"};  // too far from every name for a suggestion
  EXPECT_EQ(error_of([&] { load(path, ign); }),
            "parameter <ignore>: no column named \"zzzzzzzzz\" in " + path +
                " (columns: \"sepal_length\", \"petal_length\", \"Species\")");
}

// ---------------------------------------------------------------------------------------------
// Preprocessor

float fill_of(const std::string& path, knn::Impute how) {
  knn::Preprocessor p(how);
  p.fit(load(path));
  EXPECT_TRUE(p.features().at(0).has_fill);
  return p.features().at(0).fill;
}

TEST(TabularPreprocessor, NumericFillValues) {
  // Present values 1, 2, 4, 10: an even count, all equally frequent.
  const std::string even = file("fill_even.csv", "x,label\n1,a\n2,a\nNA,b\n4,b\n10,b\n");
  EXPECT_EQ(fill_of(even, knn::Impute::mean), 4.25f);
  EXPECT_EQ(fill_of(even, knn::Impute::median), 3.0f);
  EXPECT_EQ(fill_of(even, knn::Impute::most_frequent), 1.0f);
  // Present values 10, 1, 4, 10, 2: an odd count, 10 the most frequent.
  const std::string odd = file("fill_odd.csv", "x,label\n10,a\n1,a\nNA,b\n4,b\n10,b\n2,a\n");
  EXPECT_EQ(fill_of(odd, knn::Impute::mean), static_cast<float>(27.0 / 5.0));
  EXPECT_EQ(fill_of(odd, knn::Impute::median), 4.0f);
  EXPECT_EQ(fill_of(odd, knn::Impute::most_frequent), 10.0f);
  // A tie between 3 and 1 (twice each) goes to the smaller.
  const std::string tie = file("fill_tie.csv", "x,label\n3,a\n3,a\n1,b\n2,b\n1,b\nNA,a\n");
  EXPECT_EQ(fill_of(tie, knn::Impute::most_frequent), 1.0f);

  knn::Preprocessor p(knn::Impute::median);
  const auto d = load(odd);
  p.fit(d);
  knn::PrepReport report;
  const auto m = p.transform(d, &report);
  EXPECT_EQ(m.values, (std::vector<float>{10, 1, 4, 4, 10, 2}));
  EXPECT_EQ(report.imputed, 1u);
  EXPECT_EQ(report.unknown_categories, 0u);
  EXPECT_TRUE(p.plain());

  knn::Preprocessor none(knn::Impute::none);
  none.fit(load(file("fill_none.csv", "x,label\n1,a\n2,b\n")));
  EXPECT_FALSE(none.features()[0].has_fill);
}

TEST(TabularPreprocessor, CategoricalFillIsTheMostFrequentCategory) {
  // a and b twice each: the tie goes to a, first in byte order. Imputed so under any strategy.
  const auto d = load(file("catfill.csv", "c,label\nb,p\na,p\nb,q\na,q\nc,q\nNA,p\n"));
  for (auto how : {knn::Impute::mean, knn::Impute::median, knn::Impute::most_frequent}) {
    knn::Preprocessor p(how);
    p.fit(d);
    EXPECT_EQ(p.features()[0].categories, (Strings{"a", "b", "c"}));
    EXPECT_EQ(p.features()[0].fill_category, 0);
    const auto m = p.transform(d);
    EXPECT_EQ(m.values, (std::vector<float>{0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0}));
  }
  const auto z = load(file("catfill2.csv", "c,label\nz,p\nZ,p\nz,q\nNA,q\ny,p\n"));
  knn::Preprocessor p(knn::Impute::mean);
  p.fit(z);
  EXPECT_EQ(p.features()[0].categories, (Strings{"Z", "y", "z"}));
  EXPECT_EQ(p.features()[0].fill_category, 2);
  knn::Preprocessor none(knn::Impute::none);
  none.fit(load(file("catfill3.csv", "c,label\nz,p\ny,q\n")));
  EXPECT_EQ(none.features()[0].fill_category, -1);
}

TEST(TabularPreprocessor, OneHotLayoutInFeatureOrder) {
  const auto d = load(file("onehot.csv", "x,color,y,size,label\n1,red,10,S,p\n2,Green,20,L,q\n3,blue,30,S,p\n"));
  knn::Preprocessor p(knn::Impute::mean);
  p.fit(d);
  EXPECT_FALSE(p.plain());
  ASSERT_EQ(p.width(), 7u);
  EXPECT_EQ(p.column_names(), (Strings{"x", "color=Green", "color=blue", "color=red", "y", "size=L", "size=S"}));
  EXPECT_EQ(p.one_hot_columns(), (std::vector<bool>{false, true, true, true, false, true, true}));
  const std::vector<std::size_t> of{0, 1, 1, 1, 2, 3, 3};
  for (std::size_t c = 0; c < of.size(); ++c) EXPECT_EQ(p.feature_of(c), of[c]) << c;
  EXPECT_EQ(p.feature_of(7), 4u);  // past the last column: the number of features
  const auto m = p.transform(d);
  ASSERT_EQ(m.rows, 3u);
  ASSERT_EQ(m.cols, 7u);
  EXPECT_EQ(m.values, (std::vector<float>{1, 0, 0, 1, 10, 0, 1,  //
                                          2, 1, 0, 0, 20, 1, 0,  //
                                          3, 0, 1, 0, 30, 0, 1}));

  // A category the training rows lack encodes as all zeros, and is counted.
  const auto q = knn::load_query_csv(file("onehot_q.csv", "size,x,color,y\nL,4,purple,40\nM,NA,blue,50\n"), {}, d);
  knn::PrepReport report;
  const auto e = p.transform(q, &report);
  EXPECT_EQ(e.values, (std::vector<float>{4, 0, 0, 0, 40, 1, 0,  //
                                          2, 0, 1, 0, 50, 0, 0}));
  EXPECT_EQ(report.unknown_categories, 2u);
  EXPECT_EQ(report.unknown_in, (std::vector<std::string>{"color", "size"}));  // in the training rows' feature order
  EXPECT_EQ(report.imputed, 1u);
}

TEST(TabularPreprocessor, NoImputationWithAMissingCellThrows) {
  const std::string path = file("none.csv", "x,c,label\n1,a,p\nNA,b,q\n3,,r\n");
  const auto d = load(path);
  knn::Preprocessor p(knn::Impute::none);
  EXPECT_EQ(error_of([&] { p.fit(d); }),
            path + ":3:1: missing value in column \"x\" (2 cells in 2 columns of the training rows are missing); fill them "
                   "with <impute> mean, median or most_frequent, or drop their rows with <drop_missing>");
  EXPECT_FALSE(p.fitted());

  // Fitted on complete rows, a query's missing cell is named at the query file's line and column.
  const auto train = load(file("none_train.csv", "c,x,label\na,1,p\nb,2,q\n"));
  knn::Preprocessor q(knn::Impute::none);
  q.fit(train);
  const std::string qpath = file("none_q.csv", "x,c\n5,a\nNA,b\n");
  const auto queries = knn::load_query_csv(qpath, {}, train);
  EXPECT_EQ(error_of([&] { q.transform(queries); }),
            qpath + ":3:1: missing value in column \"x\" (1 cell in 1 column is missing); fill them with <impute> mean, "
                    "median or most_frequent");
  try {
    q.transform(queries.features, queries.levels);
    ADD_FAILURE() << "no MissingValue";
  } catch (const knn::MissingValue& e) {
    EXPECT_EQ(e.row, 1u);
    EXPECT_EQ(e.feature, 1u);
  }

  const std::string empty = file("none_empty.csv", "x,y,label\nNA,1,p\n,2,q\n");
  knn::Preprocessor mean(knn::Impute::mean);
  EXPECT_EQ(error_of([&] { mean.fit(load(empty)); }),
            empty + ":1:1: column \"x\" has no value in the training rows to impute from; leave it out with <ignore>");
}

TEST(TabularPreprocessor, FitOnSomeRowsUsesOnlyThoseRows) {
  const auto d = load(file("subset.csv", "x,c,label\n1,a,p\n100,z,q\n3,b,p\nNA,a,q\n"));
  const std::vector<std::size_t> rows{0, 2, 3};
  knn::Preprocessor p(knn::Impute::mean);
  p.fit(d, &rows);
  EXPECT_EQ(p.features()[0].fill, 2.0f);
  EXPECT_EQ(p.features()[1].categories, (Strings{"a", "b"}));
  EXPECT_EQ(p.features()[1].fill_category, 0);
  knn::PrepReport report;
  const auto m = p.transform(d, &report);
  EXPECT_EQ(m.values, (std::vector<float>{1, 1, 0, 100, 0, 0, 3, 0, 1, 2, 1, 0}));
  EXPECT_EQ(report.unknown_categories, 1u);
  EXPECT_EQ(report.imputed, 1u);
  const std::vector<std::size_t> some{3, 0};
  EXPECT_EQ(p.transform(d, nullptr, &some).values, (std::vector<float>{2, 1, 0, 1, 1, 0}));

  // Without imputation, only the listed rows' cells must be present.
  const std::vector<std::size_t> complete{0, 1, 2};
  knn::Preprocessor none(knn::Impute::none);
  none.fit(d, &complete);
  EXPECT_EQ(none.features()[1].categories, (Strings{"a", "b", "z"}));
  const std::vector<std::size_t> last{3};
  knn::Preprocessor again(knn::Impute::none);
  EXPECT_NE(error_of([&] { again.fit(d, &last); }).find(d.source + ":5:1: missing value in column \"x\" (1 cell in 1 column"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Scaler with kept columns

TEST(TabularScaler, KeptColumnsAreLeftAsTheyAre) {
  const auto m = matrix(3, 3, {1, 2, 0,  //
                               3, 4, 1,  //
                               5, 8, 1});
  const std::vector<bool> kept{false, true, false};
  knn::Scaler minmax(knn::Scaling::minmax, kept);
  minmax.fit(m);
  EXPECT_EQ(minmax.kept(), kept);
  EXPECT_EQ(minmax.offset(), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(minmax.scale(), (std::vector<double>{4, 1, 1}));
  knn::Scaler plain(knn::Scaling::minmax);
  plain.fit(m);
  EXPECT_EQ(plain.offset(), (std::vector<double>{1, 2, 0}));
  EXPECT_EQ(plain.scale(), (std::vector<double>{4, 6, 1}));
  auto scaled = m;
  minmax.transform(scaled);
  EXPECT_EQ(scaled.values, (std::vector<float>{0, 2, 0, 0.5f, 4, 1, 1, 8, 1}));

  knn::Scaler standard(knn::Scaling::standard, kept);
  standard.fit(m);
  knn::Scaler standard_plain(knn::Scaling::standard);
  standard_plain.fit(m);
  EXPECT_EQ(standard.offset()[0], 3.0);
  EXPECT_EQ(standard.scale()[0], std::sqrt(8.0 / 3.0));
  EXPECT_EQ(standard.offset()[1], 0.0);
  EXPECT_EQ(standard.scale()[1], 1.0);
  EXPECT_NE(standard_plain.offset()[1], 0.0);
  EXPECT_EQ(standard.offset()[0], standard_plain.offset()[0]);
  EXPECT_EQ(standard.scale()[0], standard_plain.scale()[0]);
  EXPECT_EQ(standard.offset()[2], standard_plain.offset()[2]);
  EXPECT_EQ(standard.scale()[2], standard_plain.scale()[2]);
  auto s = m;
  standard.transform(s);
  EXPECT_EQ(s(0, 1), 2.0f);
  EXPECT_EQ(s(1, 1), 4.0f);
  EXPECT_EQ(s(2, 1), 8.0f);
  EXPECT_EQ(s(1, 0), 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Models on data sets

// x with one missing cell (the mean of the others is 5), and a categorical color.
const char* kModelTrain = "x,color,label\n1,red,A\n2,blue,A\nNA,red,B\n8,green,B\n9,blue,B\n3,red,A\n7,green,B\n";
const char* kModelQuery = "color,x\nred,2\nblue,8\ngreen,NA\n";

// The same rows as kModelTrain and kModelQuery, imputed and encoded by hand: x, blue, green, red.
knn::Matrix hand_train() {
  return matrix(7, 4, {1, 0, 0, 1,  //
                       2, 1, 0, 0,  //
                       5, 0, 0, 1,  //
                       8, 0, 1, 0,  //
                       9, 1, 0, 0,  //
                       3, 0, 0, 1,  //
                       7, 0, 1, 0});
}
knn::Matrix hand_query() {
  return matrix(3, 4, {2, 0, 0, 1,  //
                       8, 1, 0, 0,  //
                       5, 0, 1, 0});
}

TEST(TabularModel, ClassifierOnADataSetEqualsOneOnAHandEncodedMatrix) {
  const auto train = load(file("model_train.csv", kModelTrain));
  const auto query = knn::load_query_csv(file("model_q.csv", kModelQuery), {}, train);
  knn::KnnClassifier model(cpu_params(3, knn::Scaling::none, knn::Impute::mean));
  model.fit(train);
  knn::KnnClassifier hand(cpu_params(3, knn::Scaling::none, knn::Impute::none));
  hand.fit(hand_train(), train.labels);

  EXPECT_EQ(model.preprocessor().column_names(), (Strings{"x", "color=blue", "color=green", "color=red"}));
  knn::PrepReport report;
  const auto encoded = model.encode(query, &report);
  EXPECT_EQ(encoded.values, hand_query().values);
  EXPECT_EQ(report.imputed, 1u);
  EXPECT_EQ(model.classes(), (Strings{"A", "B"}));
  const auto predicted = model.predict(query);
  EXPECT_EQ(predicted, hand.predict(hand_query()));
  EXPECT_EQ(predicted, (Strings{"A", "B", "B"}));
  EXPECT_EQ(model.predict_proba(encoded), hand.predict_proba(hand_query()));
  const auto a = model.kneighbors(query);
  const auto b = hand.kneighbors(hand_query());
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.distance, b.distance);
  EXPECT_EQ(std::vector<std::int64_t>(a.index_row(0), a.index_row(0) + 3), (std::vector<std::int64_t>{0, 5, 1}));

  // Min-max scaling of the same model leaves the one-hot columns as they are.
  knn::KnnClassifier scaled(cpu_params(3, knn::Scaling::minmax, knn::Impute::mean));
  scaled.fit(train);
  EXPECT_EQ(scaled.scaler().kept(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(scaled.scaler().offset(), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(scaled.scaler().scale(), (std::vector<double>{8, 1, 1, 1}));
}

TEST(TabularModel, NearestNeighborsOnADataSetEqualsOneOnAHandEncodedMatrix) {
  const auto train = load(file("nn_train.csv", kModelTrain));
  const auto query = knn::load_query_csv(file("nn_q.csv", kModelQuery), {}, train);
  knn::NearestNeighbors model(cpu_params(4, knn::Scaling::none, knn::Impute::mean));
  model.fit(train);
  knn::NearestNeighbors hand(cpu_params(4, knn::Scaling::none, knn::Impute::none));
  hand.fit(hand_train());
  const auto a = model.kneighbors(query);
  const auto b = hand.kneighbors(hand_query());
  ASSERT_EQ(a.queries, 3u);
  ASSERT_EQ(a.k, 4u);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.distance, b.distance);
  // Query 2 (x 5, green): row 2 (5, red) at sqrt(2), row 6 (7, green) at 2, row 5 (3, red) at
  // sqrt(6), row 3 (8, green) at 3.
  EXPECT_EQ(std::vector<std::int64_t>(a.index_row(2), a.index_row(2) + 4), (std::vector<std::int64_t>{2, 6, 5, 3}));
  EXPECT_EQ(a.distance_row(2)[1], 2.0);
  EXPECT_EQ(a.distance_row(2)[3], 3.0);
}

// ---------------------------------------------------------------------------------------------
// Class labels

knn::Dataset with_labels(Strings labels) {
  knn::Dataset d;
  d.source = "labels.csv";
  d.label_name = "y";
  d.label_column = 1;
  d.labels = std::move(labels);
  return d;
}

Strings numbered(const std::string& prefix, int n) {
  Strings out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(TabularLabels, ClassLabelsThatLookLikeATarget) {
  auto twenty = numbered("", 20);
  twenty.insert(twenty.end(), {"3", "3", "19", ""});  // repeats and a missing label add no class
  EXPECT_NO_THROW(knn::check_class_labels(with_labels(twenty), false));
  EXPECT_EQ(error_of([&] { knn::check_class_labels(with_labels(numbered("", 21)), false); }),
            "labels.csv: the label column \"y\" holds 21 distinct numbers, like a regression target: give <task> regress "
            "(or <task> classify to keep them as classes), or name the label column with <label>");
  EXPECT_EQ(error_of([&] { knn::check_class_labels(with_labels(numbered("", 21)), true); }),
            "labels.csv: the label column \"y\" holds 21 distinct numbers, like a regression target: give <task> regress "
            "(or <task> classify to keep them as classes)");
  EXPECT_EQ(error_of([&] { knn::check_class_labels(with_labels({"1", "2.5", "1"}), true); }),
            "labels.csv: the label column \"y\" holds numbers that are not whole, like a regression target: give <task> "
            "regress (or <task> classify to keep them as classes)");
  EXPECT_NO_THROW(knn::check_class_labels(with_labels(numbered("c", 30)), false));
  EXPECT_NO_THROW(knn::check_class_labels(with_labels({"1.5", "x", "2.5"}), false));
  EXPECT_NO_THROW(knn::check_class_labels(with_labels({"-1", "0", "1"}), false));
}

// ---------------------------------------------------------------------------------------------
// Evaluation

// 30 rows: x missing at rows 3, 13 and 23, color missing at row 11.
std::string eval_csv() {
  const char* colors[] = {"red", "blue", "green"};
  std::string s = "x,color,label\n";
  for (int i = 0; i < 30; ++i) {
    const bool b = i % 2 == 1;
    s += i % 10 == 3 ? std::string("NA") : std::to_string(i % 7 + (b ? 4 : 0));
    s += ",";
    s += i == 11 ? "NA" : colors[(i * 7 + (b ? 1 : 0)) % 3];
    s += b ? ",B\n" : ",A\n";
  }
  return s;
}

TEST(TabularEvaluation, ImputedFoldsEqualAPerFoldComputation) {
  const auto data = load(file("eval.csv", eval_csv()));
  ASSERT_EQ(data.feature_types, (std::vector<ColumnType>{ColumnType::numeric, ColumnType::categorical}));
  knn::EvalOptions o;
  o.ks = {3};
  o.impute = knn::Impute::mean;
  o.folds.folds = 3;
  o.backend.device = knn::Device::cpu;
  const auto res = knn::evaluate(data, o);
  ASSERT_EQ(res.folds, 3u);
  ASSERT_EQ(res.rows.size(), 1u);
  EXPECT_EQ(res.classes, (Strings{"A", "B"}));

  // The same folds by hand: each fold's preprocessing and scaler fitted on its training rows only.
  knn::LabelEncoder enc;
  enc.fit(data.labels);
  const std::vector<int> classes = enc.encode(data.labels);
  const auto fold = knn::assign_folds(data.size(), &classes, 3, knn::default_fold_seed);
  double sum = 0.0;
  for (int f = 0; f < 3; ++f) {
    std::vector<std::size_t> train, test;
    for (std::size_t i = 0; i < data.size(); ++i) (fold[i] == f ? test : train).push_back(i);
    knn::Preprocessor prep(knn::Impute::mean);
    prep.fit(data, &train);
    knn::Matrix xtr = prep.transform(data, nullptr, &train), xte = prep.transform(data, nullptr, &test);
    knn::Scaler scaler(knn::Scaling::minmax, prep.one_hot_columns());
    scaler.fit(xtr);
    scaler.transform(xtr);
    scaler.transform(xte);
    Strings ytr;
    for (std::size_t i : train) ytr.push_back(data.labels[i]);
    knn::KnnClassifier model(cpu_params(3, knn::Scaling::none, knn::Impute::none));
    model.fit(xtr, ytr);
    const auto predicted = model.predict(xte);
    std::size_t correct = 0;
    for (std::size_t j = 0; j < test.size(); ++j) correct += predicted[j] == data.labels[test[j]];
    sum += static_cast<double>(correct) / static_cast<double>(test.size());
  }
  EXPECT_DOUBLE_EQ(res.rows[0].scores[0].mean, sum / 3.0);
}

TEST(TabularEvaluation, WithoutImputationTheFirstMissingCellIsNamed) {
  const std::string path = file("eval_none.csv", eval_csv());
  const auto data = load(path);
  knn::EvalOptions o;
  o.ks = {3};
  o.impute = knn::Impute::none;
  o.folds.folds = 3;
  o.backend.device = knn::Device::cpu;
  EXPECT_EQ(error_of([&] { knn::evaluate(data, o); }),
            path + ":5:1: missing value in column \"x\" (4 cells in 2 columns of the training rows are missing); fill "
                   "them with <impute> mean, median or most_frequent, or drop their rows with <drop_missing>");
}

}  // namespace
