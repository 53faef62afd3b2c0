#include <gtest/gtest.h>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "io/column_names.hpp"
#include "io/separator_guess.hpp"
#include "test_util.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>

using knn::test::write_temp;

namespace {

knn::Dataset load(const std::string& name, const std::string& text, knn::CsvOptions o = {}) {
  return knn::load_csv(write_temp(name, text), o);
}

std::string error_of(const std::string& name, const std::string& text, knn::CsvOptions o = {}) {
  try {
    load(name, text, o);
  } catch (const knn::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Csv, PlainFileWithHeader) {
  const auto d = load("plain.csv", "a,b,label\n1,2.5,x\n-3,4e2,y\n");
  ASSERT_EQ(d.size(), 2u);
  ASSERT_EQ(d.dims(), 2u);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d.label_name, "label");
  EXPECT_EQ(d.features(0, 1), 2.5f);
  EXPECT_EQ(d.features(1, 0), -3.0f);
  EXPECT_EQ(d.features(1, 1), 400.0f);
  EXPECT_EQ(d.labels, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(d.lines, (std::vector<std::size_t>{2, 3}));
}

TEST(Csv, BomCrlfNoTrailingNewlineAndQuotesGiveTheSameData) {
  const auto plain = load("p.csv", "a,b,label\n1,2,x y\n3,4,\"q,r\"\n");
  const auto odd = load("o.csv", "\xEF\xBB\xBF\"a\",b,label\r\n\"1\",2,x y\r\n3,\"4\",\"q,r\"");
  EXPECT_EQ(plain.feature_names, odd.feature_names);
  EXPECT_EQ(plain.features.values, odd.features.values);
  EXPECT_EQ(plain.labels, odd.labels);
  EXPECT_EQ(odd.labels[1], "q,r");
}

TEST(Csv, QuotedFieldWithNewlineAndEscapedQuote) {
  const auto d = load("nl.csv", "a,label\n1,\"two\nlines \"\"quoted\"\"\"\n2,z\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.labels[0], "two\nlines \"quoted\"");
  EXPECT_EQ(d.lines[1], 4u);
}

TEST(Csv, LabelByNameIndexAndNegativeIndexAndIgnore) {
  const std::string text = "id,y,f1,f2\n7,a,1,2\n8,b,3,4\n";
  knn::CsvOptions o;
  o.label = "y";
  o.ignore = {"id"};
  const auto by_name = load("l1.csv", text, o);
  EXPECT_EQ(by_name.feature_names, (std::vector<std::string>{"f1", "f2"}));
  EXPECT_EQ(by_name.labels, (std::vector<std::string>{"a", "b"}));
  o.label = "1";
  o.ignore = {"0"};
  const auto by_index = load("l2.csv", text, o);
  EXPECT_EQ(by_index.features.values, by_name.features.values);
  o.label = "-3";
  const auto by_negative = load("l3.csv", text, o);
  EXPECT_EQ(by_negative.labels, by_name.labels);
}

TEST(Csv, NoHeaderNamesColumnsByIndex) {
  knn::CsvOptions o;
  o.header = false;
  const auto d = load("nh.csv", "1,2,a\n3,4,b\n", o);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(d.labels[0], "a");
}

TEST(Csv, OtherDelimiter) {
  knn::CsvOptions o;
  o.delimiter = ';';
  const auto d = load("semi.csv", "a;b;label\n1.5;2;x,y\n", o);
  EXPECT_EQ(d.dims(), 2u);
  EXPECT_EQ(d.features(0, 0), 1.5f);
  EXPECT_EQ(d.labels[0], "x,y");
  o.numeric = {"a"};  // "1,5" is text in a ';' file: an error where the column must hold numbers
  EXPECT_NE(error_of("semi2.csv", "a;b;label\n1,5;2;x\n", o).find("semi2.csv:2:1: not a finite number: \"1,5\" in column \"a\", which numeric reads as numbers (a decimal comma: decimal ',' reads it)"),
            std::string::npos);
}

// A decimal comma: every cell reads as the same text with a point does, in a file of another
// delimiter; a point makes a cell text (a thousands separator is not read), and the mark must be
// '.' or ',' and not the delimiter.
TEST(Csv, DecimalCommaCellsReadAsTheirPointedText) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-1e4, 1e4);
  std::string pointed = "a,b,c,label\n", commas = "a;b;c;label\n";
  for (int i = 0; i < 500; ++i) {
    std::string row;
    for (int c = 0; c < 3; ++c) {
      char cell[40];
      std::snprintf(cell, sizeof cell, c == 0 ? "%.*g" : c == 1 ? "%.*e" : "%.*f", 1 + i % 9, value(rng));
      row += std::string(cell) + ",";
    }
    char target[40] = "";  // every 7th row without its label
    if (i % 7) std::snprintf(target, sizeof target, "%.3f", value(rng));
    row += target;
    pointed += row + "\n";
    std::string semi = row;
    for (char& ch : semi) ch = ch == ',' ? ';' : ch == '.' ? ',' : ch;
    commas += semi + "\n";
  }
  // A missing cell (NA) and a missing label stay missing.
  pointed.replace(pointed.find('\n') + 1, 0, "NA,1.5,2,7.25\n");
  commas.replace(commas.find('\n') + 1, 0, "NA;1,5;2;7,25\n");
  knn::CsvOptions o;
  o.label = "label";
  o.drop_missing = true;
  o.drop_missing_features = false;
  const auto p = load("pointed.csv", pointed, o);
  o.delimiter = ';';
  o.decimal = ',';
  const auto c = load("commas.csv", commas, o);
  ASSERT_EQ(c.feature_types, p.feature_types);
  ASSERT_EQ(c.features.values.size(), p.features.values.size());
  for (std::size_t i = 0; i < p.features.values.size(); ++i)
    ASSERT_TRUE(std::isnan(p.features.values[i]) ? std::isnan(c.features.values[i]) : c.features.values[i] == p.features.values[i])
        << "cell " << i << " (seed 7)";
  EXPECT_EQ(c.feature_types[0], knn::ColumnType::numeric);
  EXPECT_EQ(c.dropped_rows, p.dropped_rows);
  EXPECT_GT(c.dropped_rows, 0u);
  EXPECT_EQ(knn::numeric_targets(c), knn::numeric_targets(p));
  EXPECT_EQ(knn::numeric_targets(c)[0], 7.25);
  // A point in a cell of a decimal-comma file is text: the column is categorical, or an error
  // where it must hold numbers.
  const auto t = load("thousands.csv", "a;b;label\n1.234,5;1;x\n2,5;2;y\n", o);
  EXPECT_EQ(t.feature_types[0], knn::ColumnType::categorical);
  o.numeric = {"a"};
  EXPECT_NE(error_of("thousands2.csv", "a;b;label\n2,5;1;x\n1.234,5;2;y\n", o).find("thousands2.csv:3:1: not a finite number: \"1.234,5\""),
            std::string::npos);
  o.numeric.clear();
  EXPECT_TRUE(knn::cell_is_number(" 1,5 ", ','));
  EXPECT_FALSE(knn::cell_is_number("1.5", ','));
  EXPECT_FALSE(knn::cell_is_number("1,5"));
  EXPECT_EQ(knn::label_number("+2,5", ','), 2.5);
  EXPECT_FALSE(knn::label_number("2.5", ','));
  EXPECT_EQ(knn::label_number("2.5"), 2.5);
  o.decimal = 'x';
  EXPECT_NE(error_of("x.csv", "a;label\n1;x\n", o).find("parameter decimal: \"x\" is not a decimal mark: give '.' or ','"), std::string::npos);
  o.decimal = ',';
  o.delimiter = ',';
  EXPECT_NE(error_of("same.csv", "a,label\n1,x\n", o).find("parameter decimal: ',' is the delimiter too"), std::string::npos);
}

// Another separator is named only where the first line is one field and every line looked at
// splits at it into the same number of fields.
TEST(Csv, SeparatorAdviceNamesTheSeparatorTheLinesShare) {
  using knn::detail::separator_advice;
  const auto said = [](const std::string& text, char delimiter = ',') { return std::string(knn::Error(separator_advice(text, delimiter)).what()); };
  EXPECT_EQ(said("59 2 32.1 101.0\n48 1 21.6 87.0\n72 2 30.5 93.0\n"),
            "its first 3 lines each hold 4 fields separated by spaces: give delimiter ' '");
  EXPECT_EQ(said("a;b;label\r\n1,5;2;x\r\n\r\n3;4,25;y\r\n"), "its first 3 lines each hold 3 fields separated by semicolons: give delimiter ';' and decimal ',' for its decimal commas");
  EXPECT_EQ(said("a;b\n1;2\n"), "its first 2 lines each hold 2 fields separated by semicolons: give delimiter ';'");
  EXPECT_EQ(said("a\tb\n1\t2\n"), "its first 2 lines each hold 2 fields separated by tabs: give delimiter '\\t'");
  EXPECT_EQ(said("a,b\n1,2\n", ';'), "its first 2 lines each hold 2 fields separated by commas: give delimiter ','");
  EXPECT_EQ(said("a|b|c\n1|2|3\n4|5|6\n7|8|9\n1|1|1\n2|2|2|2\n"), "its first 5 lines each hold 3 fields separated by bars: give delimiter '|'");
  EXPECT_EQ(said("Cars 1993\nx,type\n1,a\n"), "");    // a title over a header: the lines differ
  EXPECT_EQ(said("Cars 1993\ntype\na\n"), "");        // a title over one column
  EXPECT_EQ(said("city name\nNew\n"), "");             // one field on the second line
  EXPECT_EQ(said("a  b\n1  2\n"), "");                 // runs of spaces: no single separator
  EXPECT_EQ(said("a b\n"), "");                         // one line tells nothing
  EXPECT_EQ(said("a,b c\n1 2\n"), "");                 // the first line splits at the delimiter
  EXPECT_EQ(said("\"a b\" c\n1 2\n"), "");           // quotes: any separator may be quoted
}

TEST(Csv, ErrorsNameFileLineColumnAndQuoteTheValue) {
  knn::CsvOptions numbers;
  numbers.numeric = {"b"};
  EXPECT_NE(error_of("e1.csv", "a,b,l\n1,2,x\n3,abc,y\n", numbers)
                .find("e1.csv:3:2: not a finite number: \"abc\" in column \"b\", which numeric reads as numbers"),
            std::string::npos);
  // Numbers beyond float32 are errors in any column read as numbers.
  for (const char* bad : {"inf", "-inf", "1e999", "+Infinity"})
    EXPECT_NE(error_of("e3.csv", std::string("a,l\n") + bad + ",x\n").find("e3.csv:2:1: not a finite number"), std::string::npos)
        << bad;
  EXPECT_NE(error_of("e4.csv", "a,b,l\n1,2\n").find("e4.csv:2:2: expected 3 fields, found 2"), std::string::npos);
  EXPECT_NE(error_of("e5.csv", "a,b,l\n1,2,x,9\n").find("e5.csv:2:4: expected 3 fields, found 4 (extra value \"9\")"),
            std::string::npos);
  EXPECT_NE(error_of("e6.csv", "a,b,l\n").find("e6.csv: no data rows"), std::string::npos);
  EXPECT_NE(error_of("e7.csv", "").find("e7.csv: empty file"), std::string::npos);
  knn::CsvOptions o;
  o.label = "nope";
  EXPECT_NE(error_of("e8.csv", "a,l\n1,x\n", o).find("parameter label: no column named \"nope\""), std::string::npos);
  o.label = "5";
  EXPECT_NE(error_of("e9.csv", "a,l\n1,x\n", o).find("out of range"), std::string::npos);
  o.label = "a";
  EXPECT_NE(error_of("e10.csv", "a,a,l\n1,2,x\n", o).find("appears 2 times"), std::string::npos);
  EXPECT_NE(error_of("e11.csv", "a,l\n1,\"x\n").find("not closed"), std::string::npos);
}

// `text` as a gzip file of `members` streams one after another (as cat makes of two gzip files).
std::string write_gzip(const std::string& name, const std::string& text, int members = 1) {
  const std::string path = write_temp(name, "");
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) {
    ADD_FAILURE() << "gzopen " << path;
    return path;
  }
  const std::size_t part = text.size() / static_cast<std::size_t>(members);
  for (int m = 0; m < members; ++m) {
    const std::size_t from = static_cast<std::size_t>(m) * part, to = m + 1 == members ? text.size() : from + part;
    EXPECT_EQ(gzwrite(f, text.data() + from, static_cast<unsigned>(to - from)), static_cast<int>(to - from));
    if (m + 1 < members) EXPECT_EQ(gzflush(f, Z_FINISH), Z_OK);  // ends this member; the next starts a new one
  }
  EXPECT_EQ(gzclose(f), Z_OK);
  return path;
}

// A gzip file reads as the text it holds, one member or several, whatever its name; one cut short
// or damaged is an error naming it; other compressed and binary formats are refused with how to
// get the text out of them.
TEST(Csv, GzipIsReadAndOtherFormatsAreRefusedWithAHint) {
  std::string text = "a,b,label\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + "," + std::to_string(i % 7) + ".25," + (i % 3 ? "x" : "y") + "\n";
  const auto plain = load("plain_for_gz.csv", text);
  for (int members : {1, 3}) {
    const auto gz = knn::load_csv(write_gzip("data" + std::to_string(members) + ".gz", text, members), {});
    EXPECT_EQ(gz.features.values, plain.features.values) << members;
    EXPECT_EQ(gz.labels, plain.labels) << members;
    EXPECT_EQ(gz.lines, plain.lines) << members;
  }
  // A title above the header is skipped in the text a gzip file holds.
  knn::CsvOptions skip;
  skip.skip_lines = 1;
  const auto titled = knn::load_csv(write_gzip("titled.csv.gz", "A title\n" + text), skip);
  EXPECT_EQ(titled.features.values, plain.features.values);
  EXPECT_EQ(titled.labels, plain.labels);
  // Line numbers are the text's.
  const std::string bad = write_gzip("bad_cell.csv.gz", "a,l\n1,x\n2,y\n1e99,z\n");
  try {
    knn::load_csv(bad, {});
    ADD_FAILURE() << "no error";
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_cell.csv.gz:4:1: not a finite number"), std::string::npos) << e.what();
  }
  // Cut short, and damaged past its header.
  const std::string whole = [&] {
    std::ifstream in(write_gzip("whole.gz", text), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_NE(error_of("cut.gz", whole.substr(0, whole.size() / 2)).find("cut.gz: its gzip stream ends early"), std::string::npos);
  // Zero padding after the last member is ignored; other bytes there are an error, not a silent cut.
  EXPECT_EQ(load("padded.gz", whole + std::string(512, '\0')).labels, plain.labels);
  EXPECT_NE(error_of("trailing.gz", whole + "x,y\n").find("trailing.gz: 4 bytes after the end of its gzip stream are not gzip"),
            std::string::npos);
  std::string damaged = whole;
  for (std::size_t i = 20; i < 60; ++i) damaged[i] = '\xAA';
  EXPECT_NE(error_of("damaged.gz", damaged).find("damaged.gz: not a valid gzip stream"), std::string::npos);
  const std::pair<std::string, std::string> formats[] = {
      {std::string("PK\x03\x04\x14\x00\x00\x00", 8) + "rest", "a zip archive (an .xlsx workbook is one)"},
      {std::string("\xFD" "7zXZ\x00\x00\x04", 8) + "rest", "compressed by xz"},
      {std::string("BZh91AY&SY") + "rest", "compressed by bzip2"},
      {std::string("\x28\xB5\x2F\xFD\x24\x00", 6) + "rest", "compressed by zstd"},
      {std::string("PAR1") + std::string(20, '\0') + "PAR1", "a Parquet file"}};
  for (const auto& [bytes, what] : formats) EXPECT_NE(error_of("other.bin", bytes).find("other.bin: " + what), std::string::npos) << what;
  // Text that merely starts like one of them is read as text.
  EXPECT_EQ(load("bzh.csv", "BZh,b,label\n1,2,x\n").feature_names[0], "BZh");
  EXPECT_EQ(load("par1.csv", "PAR1,b,label\n1,2,x\n").feature_names[0], "PAR1");
}

// cell_is_number answers as the reader reads a cell of a numeric column.
TEST(Csv, CellIsNumberAsTheReaderReadsACell) {
  for (const char* yes : {"0", " -2.5 ", "+7", "1e3", ".5", "3.4e38"}) EXPECT_TRUE(knn::cell_is_number(yes)) << yes;
  for (const char* no : {"", "x", "0x1F", "inf", "nan", "1e99", "1,5", "--1"}) EXPECT_FALSE(knn::cell_is_number(no)) << no;
}

TEST(Csv, LongValuesAreCutInMessages) {
  const std::string junk(100, 'z');
  knn::CsvOptions o;
  o.numeric = {"a"};
  const std::string msg = error_of("long.csv", "a,l\n" + junk + ",x\n", o);
  EXPECT_NE(msg.find("\"" + std::string(40, 'z') + "...\""), std::string::npos) << msg;
}

// Found by fuzzing: a file name with control bytes (or an empty one) went into the error line raw.
TEST(Csv, FileNamesInMessagesAreOnePrintableLine) {
  const auto message_for = [](const std::string& path) {
    try {
      knn::load_csv(path, {});
    } catch (const knn::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string odd = message_for("no\nsuch\x01" "file.csv");
  EXPECT_EQ(odd.rfind("no\\x0Asuch\\x01file.csv: cannot open", 0), 0u) << odd;
  const std::string empty = message_for("");
  EXPECT_EQ(empty.rfind("\"\": cannot open", 0), 0u) << empty;
  // A file read with such a name keeps it printable wherever a message names it, here the
  // training file inside a query file's error.
  const std::string odd_train = write_temp("odd\x01" "train.csv", "a,b,label\n0,0,x\n1,1,y\n");
  const knn::Dataset train = knn::load_csv(odd_train, {});
  EXPECT_EQ(train.source.find('\x01'), std::string::npos) << train.source;
  try {
    knn::load_query_csv(write_temp("odd_query.csv", "c,d\n1,1\n"), {}, train);
    ADD_FAILURE() << "no error";
  } catch (const knn::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a feature of "), std::string::npos) << m;
    EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << m;
  }
}

TEST(Csv, TinyValuesUnderflowLikeAConversionFromDouble) {
  const auto d = load("tiny.csv", "a,l\n1e-50,x\n+2.5,y\n");
  EXPECT_EQ(d.features(0, 0), 0.0f);
  EXPECT_EQ(d.features(1, 0), 2.5f);
}

TEST(Csv, QueryColumnsFoundByNameWithOrWithoutLabel) {
  const auto train = load("qt.csv", "a,b,label\n1,2,x\n3,4,y\n");
  const auto q1 = knn::load_query_csv(write_temp("q1.csv", "b,a\n20,10\n"), {}, train);
  EXPECT_EQ(q1.features.values, (std::vector<float>{10, 20}));
  EXPECT_FALSE(q1.has_labels());
  const auto q2 = knn::load_query_csv(write_temp("q2.csv", "label,a,b\nx,10,20\n"), {}, train);
  EXPECT_EQ(q2.features.values, (std::vector<float>{10, 20}));
  EXPECT_TRUE(q2.has_labels());
  try {
    knn::load_query_csv(write_temp("q3.csv", "a,c\n1,2\n"), {}, train);
    FAIL() << "missing feature column accepted";
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no column \"b\""), std::string::npos) << e.what();
  }
  knn::CsvOptions nh;
  nh.header = false;
  const auto train_nh = knn::load_csv(write_temp("qt2.csv", "1,2,x\n3,4,y\n"), nh);
  EXPECT_EQ(knn::load_query_csv(write_temp("q4.csv", "5,6\n"), nh, train_nh).dims(), 2u);
  EXPECT_EQ(knn::load_query_csv(write_temp("q5.csv", "5,6,x\n"), nh, train_nh).labels[0], "x");
  EXPECT_THROW(knn::load_query_csv(write_temp("q6.csv", "5\n"), nh, train_nh), knn::Error);
}

TEST(Csv, SaveAndLoadRoundTrip) {
  const auto d = load("rt.csv", "a,b,label\n0.1,-2.5e-7,\"x,y\"\n3,4,z\n");
  const auto path = (knn::test::temp_dir() / "rt_out.csv").string();
  knn::save_csv(path, d);
  const auto back = knn::load_csv(path, {});
  EXPECT_EQ(back.features.values, d.features.values);
  EXPECT_EQ(back.labels, d.labels);
  EXPECT_EQ(back.feature_names, d.feature_names);
}

TEST(LabelEncoder, NumericLabelsSortNumerically) {
  knn::LabelEncoder e;
  e.fit({"10", "2", "-1", "2", "1.5"});
  EXPECT_TRUE(e.numeric());
  EXPECT_EQ(e.classes(), (std::vector<std::string>{"-1", "1.5", "2", "10"}));
  EXPECT_EQ(e.encode("10"), 3);
  EXPECT_EQ(e.decode(e.encode("1.5")), "1.5");
  EXPECT_EQ(e.encode("7"), -1);
}

TEST(LabelEncoder, TextLabelsSortByBytes) {
  knn::LabelEncoder e;
  e.fit({"b", "B", "a", "10", "9"});
  EXPECT_FALSE(e.numeric());
  EXPECT_EQ(e.classes(), (std::vector<std::string>{"10", "9", "B", "a", "b"}));
  const std::vector<std::string> labels{"a", "b", "9"};
  const auto ids = e.encode(labels);
  for (std::size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(e.decode(ids[i]), labels[i]);
}

TEST(Csv, RegressionTargetsMustBeNumbers) {
  const auto ok = load("r1.csv", "a,y\n1,2.5\n2,-3\n");
  EXPECT_EQ(knn::numeric_targets(ok), (std::vector<double>{2.5, -3.0}));
  const auto bad = load("r2.csv", "a,y\n1,2.5\n2,cat\n");
  try {
    knn::numeric_targets(bad);
    FAIL();
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("r2.csv:3:2: regression target \"cat\""), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

std::string big_csv(bool quoted_header, std::size_t rows, std::size_t bad_row) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> u(-99999, 99999);
  std::string s = quoted_header ? "\"f0\",f1,f2,f3,f4,f5,f6,f7,label\n" : "f0,f1,f2,f3,f4,f5,f6,f7,label\n";
  for (std::size_t i = 0; i < rows; ++i) {
    if (i == rows / 3) s += "\n";  // a blank line: skipped, but it counts for line numbers
    for (int j = 0; j < 8; ++j) s += (i == bad_row && j == 5 ? std::string("1e99") : std::to_string(u(rng) / 100.0)) + ",";
    s += (i % 3 ? "yes\n" : "no\n");
  }
  return s;
}

}  // namespace

TEST(Csv, LargeFilesParsedInParallelGiveTheSameRowsAndLines) {
  // Over 4 MiB without quotes: read in parallel chunks; the quoted header forces one reader.
  const auto a = knn::load_csv(write_temp("big_a.csv", big_csv(false, 90000, std::size_t(-1))), {});
  const auto b = knn::load_csv(write_temp("big_b.csv", big_csv(true, 90000, std::size_t(-1))), {});
  ASSERT_GT(std::filesystem::file_size(knn::test::temp_dir() / "big_a.csv"), 4u << 20);
  ASSERT_EQ(a.size(), 90000u);
  EXPECT_EQ(a.features.values, b.features.values);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.lines.back(), 90000u + 2);  // header and blank line
}

TEST(Csv, LargeFileErrorNamesItsLine) {
  for (std::size_t bad : {std::size_t{10}, std::size_t{80000}}) {
    try {
      knn::load_csv(write_temp("big_bad.csv", big_csv(false, 90000, bad)), {});
      FAIL() << "accepted a bad cell at row " << bad;
    } catch (const knn::Error& e) {
      const std::size_t line = bad + 2 + (bad >= 30000 ? 1 : 0);
      EXPECT_NE(std::string(e.what()).find("big_bad.csv:" + std::to_string(line) + ":6: not a finite number: \"1e99\""),
                std::string::npos)
          << e.what();
    }
  }
}

// The index and match_name give the rule's answer, and the index the next exact repeat of a name, on random headers full
// of repeats and names that differ only in case.
TEST(Csv, NameIndexAnswersAsMatchName) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<std::string> pool = {"a", "A", "b", "Pixel1", "pixel1", "PIXEL1", "", "x y", "label", "Label"};
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> names(rng() % 12);
    for (auto& n : names) n = pool[rng() % pool.size()];
    const knn::detail::NameIndex index(names);
    for (const std::string& probe : pool) {
      // The rule, spelled out: the first exact match, else the only match without regard to case.
      std::optional<std::size_t> exact, folded;
      std::size_t folded_count = 0;
      for (std::size_t i = 0; i < names.size(); ++i) {
        std::string a = names[i], b = probe;
        for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (names[i] == probe && !exact) exact = i;
        if (a == b && folded_count++ == 0) folded = i;
      }
      const std::optional<std::size_t> want = exact ? exact : folded_count == 1 ? folded : std::nullopt;
      EXPECT_EQ(index.match(probe), want) << probe;
      EXPECT_EQ(knn::detail::match_name(probe, names), want) << probe;
    }
    EXPECT_EQ(index.match("absent"), std::nullopt);
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::optional<std::size_t> want;
      for (std::size_t j = i + 1; j < names.size() && !want; ++j)
        if (names[j] == names[i]) want = j;
      EXPECT_EQ(index.next_same(i), want) << i;
    }
  }
}
