// The loader's ways through a file against each other: parts read in parallel against one
// reader (cuts at every byte, many parts), the plain-line reader against the record reader,
// standard input against the file; and float cells against strtof.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <omp.h>

#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "io/cell_value.hpp"
#include "io/rows_read.hpp"
#include "io/text_format.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "test_util.hpp"

namespace {

using knn::detail::PartCuts;
using knn::test::write_temp;

// The loader's part cuts for the life of one object.
class CutsInUse {
 public:
  explicit CutsInUse(PartCuts cuts) : saved_(knn::detail::part_cuts()) { knn::detail::part_cuts() = std::move(cuts); }
  ~CutsInUse() { knn::detail::part_cuts() = saved_; }

 private:
  PartCuts saved_;
};

PartCuts one_reader() {
  PartCuts c;
  c.parallel_from = std::numeric_limits<std::size_t>::max();
  return c;
}

PartCuts cut_at(std::vector<std::size_t> at) {
  PartCuts c;
  c.parallel_from = 0;
  c.at = std::move(at);
  return c;
}

struct Loaded {
  knn::Dataset data;
  std::string error;
};

Loaded load_with(const std::string& path, const knn::CsvOptions& o, PartCuts cuts) {
  const CutsInUse in_use(std::move(cuts));
  try {
    return {knn::load_csv(path, o), ""};
  } catch (const knn::Error& e) {
    return {{}, e.what()};
  }
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

void expect_same(const Loaded& got, const Loaded& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.error, want.error);
  if (!want.error.empty()) return;
  const knn::Dataset &a = got.data, &b = want.data;
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a.dims(), b.dims());
  EXPECT_EQ(bits(a.features.values), bits(b.features.values));  // NaN and -0 included
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.missing_labels, b.missing_labels);
  EXPECT_EQ(a.file_rows, b.file_rows);
  EXPECT_EQ(a.dropped_rows, b.dropped_rows);
  EXPECT_EQ(a.levels, b.levels);
  EXPECT_EQ(a.feature_types, b.feature_types);
}

// Small files of every shape the parts must agree on: line ends, a byte order mark, no final
// newline, blank lines, text columns, missing cells, quotes and errors in some of them.
struct Shape {
  const char* name;
  std::string text;
  knn::CsvOptions options;
};

std::vector<Shape> shapes() {
  knn::CsvOptions plain, no_header, drop, with_id, tab;
  no_header.header = false;
  drop.drop_missing = true;
  with_id.id = "id";
  tab.delimiter = '\t';
  return {
      {"lf", "a,b,label\n1,2.5,x\n-3,4e2,y\n5,6,x\n7,0.125,y\n8,9,z\n", plain},
      {"crlf", "a,b,label\r\n1,2.5,x\r\n-3,4e2,y\r\n5,6,x\r\n7,0.125,y\r\n8,9,z\r\n", plain},
      {"no_final_newline", "a,b,label\n1,2.5,x\n-3,4e2,y\n5,6,x\n7,0.125,y\n8,9,z", plain},
      {"crlf_no_final_newline", "a,b,label\r\n1,2,x\r\n3,4,y\r\n5,6,z", plain},
      {"bom_no_header", "\xEF\xBB\xBF" "1,2,x\n3,4,y\n5,6,x\n7,8,y\n", no_header},
      {"blank_lines", "\na,b,label\n\n1,2,x\n\r\n3,4,y\n\n\n5,6,x\n\n", plain},
      {"spaces_and_tokens", "a,b,label\n 1 ,NA,x\n?,\t2,y\n,3,x\nnull,-0,y\n-0.0,+5,x\n", plain},
      {"text_column", "a,c,label\n1,red,x\n2,green,y\n3,red,x\n4,blue,y\n5,NA,x\n6,green,y\n7,amber,x\n", plain},
      {"late_text", "a,c,label\n1,2,x\n2,3,y\n3,4,x\n4,5,y\n5,six,x\n6,7,y\n", plain},
      {"drop_missing", "a,c,label\n1,red,x\n,green,y\n3,red,\n4,,y\n5,blue,x\n6,green,NA\n", drop},
      {"id_column", "id,a,label\nr1,1,x\nr2,2,y\nr3,3,x\nr4,4,y\nr5,5,x\n", with_id},
      {"tab", "a\tb\tlabel\n1\t2\tx\n3\t4\ty\n5\t6\tx\n", tab},
      {"cr_inside", "a,b,label\n1,2\r,x\n3,4,y\r\r\n5,6,x\n", plain},
      {"two_errors", "a,b,label\n1,2,x\n3,4,y\n5,6,7,x\n8,9,y\n1e40,1,x\n", plain},
      {"ragged_short", "a,b,label\n1,2,x\n3,4\n5,6,x\n", plain},
      {"not_finite_then_text", "a,b,label\n1,2,x\n3,inf,y\n5,6,x\n7,word,y\n", plain},
      {"missing_label", "a,b,label\n1,2,x\n3,4,\n5,6,x\n", plain},
      {"all_dropped", "a,b,label\n1,2,\n3,4,NA\n", drop},
      {"header_only", "a,b,label\n", plain},
      {"quoted", "a,b,label\n1,2,\"x,y\"\n3,\"4\",\"two\nlines\"\n5,6,z\n", plain},
  };
}

TEST(CsvParts, EveryCutGivesTheRowsOfOneReader) {
  for (const Shape& s : shapes()) {
    const std::string path = write_temp(std::string("parts/") + s.name + ".csv", s.text);
    const Loaded want = load_with(path, s.options, one_reader());
    const std::size_t n = s.text.size();
    for (std::size_t p = 0; p <= n; ++p) {
      expect_same(load_with(path, s.options, cut_at({p})), want, std::string(s.name) + ", one cut at " + std::to_string(p));
      // Many parts, most of them a line or less, some empty.
      expect_same(load_with(path, s.options, cut_at({p, p + 1, p + 2, p + 3, p + 5, p + 8, p + 13})), want,
                  std::string(s.name) + ", seven cuts from " + std::to_string(p));
    }
  }
}

// An error's place ("path:line:column: ...") with the path left out and the line moved by `by`.
std::string moved_error(const std::string& error, const std::string& path, long by) {
  if (error.empty() || error.compare(0, path.size() + 1, path + ":") != 0) return error;
  const std::size_t at = path.size() + 1, end = error.find(':', at);
  if (at == error.size() || !std::isdigit(static_cast<unsigned char>(error[at]))) return error.substr(at);  // no line
  const long line = std::stol(error.substr(at, end - at));
  return std::to_string(line == 0 ? 0 : line + by) + error.substr(end);
}

// Lines skipped above the header (CsvOptions::skip_lines): every shape reads as it does without
// them, on every cut, the line numbers of rows and errors the file's; a quote or a NUL byte in
// the skipped lines changes nothing; a shard's rows are its part of the whole.
TEST(CsvParts, SkippedLinesLeaveTheRowsAndNumberTheLinesOfTheFile) {
  const std::string titles[] = {"Data set 7, 2024,,\n# measured by hand\n", "\"A title, quoted\"\n\"and its second line\"\n",
                                std::string("binary\0title\n\n", 14)};
  for (const Shape& s : shapes())
    for (const std::string& title : titles) {
      const std::string what = std::string(s.name) + " under " + knn::quote(title);
      const std::string plain = write_temp(std::string("skip/") + s.name + ".csv", s.text);
      const std::string titled = write_temp(std::string("skip/") + s.name + "_titled.csv", title + s.text);
      knn::CsvOptions o = s.options;
      o.skip_lines = 2;
      Loaded want = load_with(plain, s.options, one_reader());
      for (auto& line : want.data.lines) line += 2;
      want.error = moved_error(want.error, plain, 2);
      for (std::size_t p = 0; p <= s.text.size(); p += 3) {
        Loaded got = load_with(titled, o, cut_at({p, p + 2, p + 7}));
        got.error = moved_error(got.error, titled, 0);
        expect_same(got, want, what + ", cuts from " + std::to_string(p));
      }
      // Each of two shards reads what it reads of the file without the lines (a quote in them
      // does not send the rows down the quoted path, which shares them out in another way).
      for (std::size_t shard = 0; shard < 2; ++shard) {
        knn::CsvOptions part = s.options;
        part.shard = shard;
        part.shards = 2;
        Loaded shard_want = load_with(plain, part, one_reader());
        for (auto& line : shard_want.data.lines) line += 2;
        shard_want.error = moved_error(shard_want.error, plain, 2);
        part.skip_lines = 2;
        Loaded got = load_with(titled, part, one_reader());
        got.error = moved_error(got.error, titled, 0);
        expect_same(got, shard_want, what + ", shard " + std::to_string(shard));
        EXPECT_EQ(got.data.row_offset, shard_want.data.row_offset) << what;
      }
    }
  // A NUL byte after the skipped lines is still refused, at its line of the file.
  const char nul_text[] = "title\na,label\n1,x\n2\0,y\n";
  const std::string nul = write_temp("skip/nul.csv", std::string(nul_text, sizeof nul_text - 1));
  knn::CsvOptions o;
  o.skip_lines = 1;
  EXPECT_NE(load_with(nul, o, one_reader()).error.find("nul.csv:4:1: NUL byte"), std::string::npos) << load_with(nul, o, one_reader()).error;
  // More lines skipped than the file has: one error that says so.
  const std::string short_file = write_temp("skip/short.csv", "title\na,label\n1,x");
  o.skip_lines = 3;
  EXPECT_EQ(load_with(short_file, o, one_reader()).error,
            short_file + ": skip_lines 3 passes over every line: the file has 3 lines (give the count of lines above the header, or "
                         "above the first data row of a file without one)");
  // As many as it has, the last one ended: the same error, not an empty file's.
  const std::string two_lines = write_temp("skip/two_lines.csv", "title\na,label\n");
  o.skip_lines = 2;
  EXPECT_NE(load_with(two_lines, o, one_reader()).error.find("skip_lines 2 passes over every line: the file has 2 lines"), std::string::npos)
      << load_with(two_lines, o, one_reader()).error;
  // Blank lines after the skipped ones: the header's line is where the reader found it.
  const std::string blank = write_temp("skip/blank.csv", "title\n\n\na,a,label\n1,2,x\n");
  o.skip_lines = 1;
  EXPECT_EQ(load_with(blank, o, one_reader()).data.first_line, 4u);
  o.label = "a";
  EXPECT_NE(load_with(blank, o, one_reader()).error.find("blank.csv:4: column name \"a\""), std::string::npos)
      << load_with(blank, o, one_reader()).error;
  o.skip_lines = 2;  // and no header: line 3 is the one data row
  o.header = false;
  o.label.clear();
  EXPECT_EQ(load_with(short_file, o, one_reader()).data.size(), 1u);
}

TEST(CsvParts, FirstErrorInFileOrderWhateverThePartsFind) {
  // Both errors in every split: the one on line 4 is named, though the part holding line 6 ends
  // first or alone.
  const std::string text = "a,b,label\n1,2,x\n3,4,y\n5,6,7,x\n8,9,y\n1e40,1,x\n";
  const std::string path = write_temp("parts/first_error.csv", text);
  const std::string want = load_with(path, {}, one_reader()).error;
  EXPECT_NE(want.find(":4:4: expected 3 fields, found 4"), std::string::npos) << want;
  for (std::size_t p = 0; p <= text.size(); ++p) EXPECT_EQ(load_with(path, {}, cut_at({p})).error, want) << p;
}

TEST(CsvParts, TextColumnCodesFollowTheFileOrderInEveryPart) {
  // Each part meets the texts in its own order; the merged levels and codes are one reader's.
  std::string text = "a,c,label\n";
  const char* colours[] = {"red", "green", "blue", "amber", "teal", "NA"};
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) text += std::to_string(i) + "," + colours[rng() % 6] + "," + (i % 2 ? "x" : "y") + "\n";
  const std::string path = write_temp("parts/levels.csv", text);
  knn::CsvOptions o;
  o.categorical = {"c"};
  const Loaded want = load_with(path, o, one_reader());
  ASSERT_EQ(want.error, "");
  EXPECT_EQ(want.data.levels[1], (std::vector<std::string>{"amber", "blue", "green", "red", "teal"}));
  for (std::size_t p = 0; p <= text.size(); p += 7)
    expect_same(load_with(path, o, cut_at({p / 3, p / 2, p})), want, "cuts " + std::to_string(p));
}

TEST(CsvParts, LargeFileWithManyThreadsGivesTheRowsOfOneReader) {
  // Past the size from which parts are read in parallel, cut by the thread count (7 here, on
  // any machine), with CRLF line ends, missing cells, a text column and decimals.
  std::string text = "a,b,c,label\r\n";
  std::mt19937 rng(5);
  while (text.size() < (std::size_t{5} << 20)) {
    const unsigned r = rng();
    text += std::to_string(r % 1000) + "," + (r % 17 == 0 ? std::string("NA") : std::to_string(r % 977) + "." + std::to_string(r % 89)) +
            "," + "tone" + std::to_string(r % 13) + "," + (r % 3 ? "x" : "y") + "\r\n";
  }
  const std::string path = write_temp("parts/large.csv", text);
  const Loaded want = load_with(path, {}, one_reader());
  ASSERT_EQ(want.error, "");
  const int threads = omp_get_max_threads();
  omp_set_num_threads(7);
  const Loaded got = load_with(path, {}, PartCuts{});
  omp_set_num_threads(threads);
  expect_same(got, want, "7 threads");
  EXPECT_EQ(want.data.feature_types[2], knn::ColumnType::categorical);
}

// Random cells of every form the plain-line reader takes or leaves: whole numbers and decimals
// (its own), exponents, long mantissas, signs, spaces, NA tokens, text, CR inside a line.
std::string random_cell(std::mt19937& rng) {
  const auto digits = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('0' + rng() % 10);
    return s;
  };
  switch (rng() % 16) {
    case 0: return digits(1 + rng() % 3);
    case 1: return "-" + digits(1 + rng() % 7);
    case 2: return digits(1 + rng() % 4) + "." + digits(rng() % 5);
    case 3: return "-" + digits(1 + rng() % 3) + "." + digits(1 + rng() % 4);
    case 4: return digits(8 + rng() % 12);
    case 5: return digits(1 + rng() % 3) + "." + digits(6 + rng() % 20);
    case 6: return digits(1) + "." + digits(rng() % 8) + "e" + (rng() % 2 ? "-" : "") + std::to_string(rng() % 46);
    case 7: return std::vector<std::string>{"-0", "+0", "+7", "-0.0", ".5", "5.", "-.5", "00012", "0000000", "-00000000"}[rng() % 10];
    case 8: return std::vector<std::string>{"", "NA", "?", "NaN", "null", " NA "}[rng() % 6];
    case 9: return " " + digits(2) + (rng() % 2 ? " " : "\t");
    case 10: return std::vector<std::string>{"1e-46", "-1e-50", "7e-46", "1e-45", "1.17549435e-38", "3.4028235e38"}[rng() % 6];
    default: return digits(1 + rng() % 3);
  }
}

TEST(CsvParts, PlainLinesReadAsTheRecordReaderReadsThem) {
  // A numeric NA token turns the plain-line reader off (a plain number must then be compared
  // with the tokens first): with one the file holds nowhere, every line goes through the record
  // reader, which must give the same rows.
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    std::string text = "a,b,c,label\n";
    const int rows = 5 + static_cast<int>(rng() % 60);
    for (int i = 0; i < rows; ++i) {
      text += random_cell(rng) + "," + random_cell(rng) + "," + random_cell(rng) + "," + (rng() % 9 ? "p" : "q");
      const unsigned end = rng() % 20;
      text += end == 0 ? "\r\n" : end == 1 ? "\n\n" : "\n";
    }
    if (seed % 5 == 0) text.pop_back();  // no final newline
    const std::string path = write_temp("parts/plain_" + std::to_string(seed) + ".csv", text);
    knn::CsvOptions records;
    records.na_values.push_back("-987654321");
    for (const PartCuts& cuts : {one_reader(), cut_at({text.size() / 3, text.size() / 2})})
      expect_same(load_with(path, {}, cuts), load_with(path, records, one_reader()), "seed " + std::to_string(seed));
  }
}

// Random float texts: mantissas of 1 to 40 digits with or without a point, exponents from -60
// to 45, signs; subnormals, float's edges and overflow among them.
std::string random_float_text(std::mt19937& rng) {
  std::string s = rng() % 3 == 0 ? "-" : "";
  const int whole = static_cast<int>(rng() % 20), frac = static_cast<int>(rng() % 22);
  for (int i = 0; i < std::max(whole, frac == 0 ? 1 : 0); ++i) s += static_cast<char>('0' + rng() % 10);
  if (frac > 0 || rng() % 4 == 0) {
    s += '.';
    for (int i = 0; i < frac; ++i) s += static_cast<char>('0' + rng() % 10);
  }
  if (rng() % 2) s += (rng() % 2 ? "e" : "E") + std::string(rng() % 2 ? "-" : (rng() % 2 ? "+" : "")) + std::to_string(rng() % 61);
  return s;
}

// Whole numbers of up to seven digits are read as whole numbers: "-0" is +0.
bool loader_whole_zero(const std::string& s) {
  const std::size_t b = s[0] == '-' ? 1 : 0;
  return b == 1 && s.size() - b <= 7 && s.find_first_not_of('0', b) == std::string::npos;
}

TEST(CsvFloats, CellsAreWhatStrtofReads) {
  const knn::detail::MissingTokens na(knn::default_na_values());
  std::mt19937 rng(20251126);
  int overflow = 0, subnormal = 0, zero_underflow = 0, negative_zero = 0;
  for (int i = 0; i < 300000; ++i) {
    std::string s = random_float_text(rng);
    if (i % 50 == 0) s = std::vector<std::string>{"1e40", "-1e39", "3.4028235e38", "3.40282357e38", "1e-46", "-1e-50",
                                                    "7.1e-46", "1e-45", "1.17549421e-38", "-0.0", "-0", "0e999"}[i / 50 % 12];
    SCOPED_TRACE(s);
    const float want = std::strtof(s.c_str(), nullptr);
    float got = 0.0f;
    const knn::detail::CellKind kind = knn::detail::classify_cell(s, na, got);
    if (std::isinf(want)) {
      // Beyond float's range: refused, never turned into an infinity.
      EXPECT_EQ(kind, knn::detail::CellKind::not_finite);
      EXPECT_FALSE(knn::parse_float(s.data(), s.data() + s.size()));
      ++overflow;
      continue;
    }
    ASSERT_EQ(kind, knn::detail::CellKind::number);
    if (loader_whole_zero(s)) {
      EXPECT_EQ(std::signbit(got), false);
      EXPECT_EQ(got, 0.0f);
      continue;
    }
    std::uint32_t a = 0, b = 0;
    std::memcpy(&a, &got, 4);
    std::memcpy(&b, &want, 4);
    EXPECT_EQ(a, b) << got << " " << want;
    const auto parsed = knn::parse_float(s.data(), s.data() + s.size());
    ASSERT_TRUE(parsed);
    std::memcpy(&a, &*parsed, 4);
    EXPECT_EQ(a, b);
    subnormal += std::fpclassify(want) == FP_SUBNORMAL;
    zero_underflow += want == 0.0f && s.find_first_of("123456789") < s.find_first_of("eE");
    negative_zero += want == 0.0f && std::signbit(want);
  }
  // The draw covers each rule.
  EXPECT_GT(overflow, 1000);
  EXPECT_GT(subnormal, 100);
  EXPECT_GT(zero_underflow, 1000);
  EXPECT_GT(negative_zero, 100);
}

TEST(CsvFloats, PlainNumbersScanAsTheyParse) {
  // scan_plain_number against parse_small_int and parse_float on short texts of digits, points,
  // signs and other bytes: where it takes a text, the value is theirs, bit for bit.
  std::mt19937 rng(3);
  const std::string alphabet = "0123456789.-+e ,x";
  int taken = 0;
  for (int i = 0; i < 1000000; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 10);
    for (int k = 0; k < len; ++k) s += alphabet[rng() % (k == 0 ? alphabet.size() : 12)];
    float v = 0.0f;
    const char* end = knn::detail::scan_plain_number(s.data(), s.data() + s.size(), v);
    if (!end) continue;
    const std::string_view number(s.data(), static_cast<std::size_t>(end - s.data()));
    float want = 0.0f;
    if (!knn::detail::parse_small_int(number.data(), number.data() + number.size(), want)) {
      const auto parsed = knn::parse_float(number.data(), number.data() + number.size());
      ASSERT_TRUE(parsed) << number;
      want = *parsed;
    }
    std::uint32_t a = 0, b = 0;
    std::memcpy(&a, &v, 4);
    std::memcpy(&b, &want, 4);
    ASSERT_EQ(a, b) << number;
    ++taken;
  }
  EXPECT_GT(taken, 100000);
}

TEST(CsvFloats, EveryCellOfAFileIsWhatStrtofReads) {
  // The same texts through the loader, in a file read in parts and by one reader.
  std::mt19937 rng(8);
  std::vector<std::string> cells;
  std::string text = "x,label\n";
  while (cells.size() < 20000) {
    const std::string s = random_float_text(rng);
    if (std::isinf(std::strtof(s.c_str(), nullptr))) continue;
    cells.push_back(s);
    text += s + ",c\n";
  }
  const std::string path = write_temp("floats/cells.csv", text);
  for (const PartCuts& cuts : {one_reader(), cut_at({text.size() / 4, text.size() / 2, text.size() * 3 / 4})}) {
    const Loaded got = load_with(path, {}, cuts);
    ASSERT_EQ(got.error, "");
    ASSERT_EQ(got.data.size(), cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const float want = loader_whole_zero(cells[i]) ? 0.0f : std::strtof(cells[i].c_str(), nullptr);
      std::uint32_t a = 0, b = 0;
      std::memcpy(&a, &got.data.features.values[i], 4);
      std::memcpy(&b, &want, 4);
      ASSERT_EQ(a, b) << cells[i];
    }
  }
}

// Runs `f` with standard input read from `path`.
template <class F>
auto with_stdin(const std::string& path, F f) {
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  struct Restore {
    int saved;
    ~Restore() {
      ::dup2(saved, STDIN_FILENO);
      ::close(saved);
    }
  } restore{saved};
  return f();
}

TEST(CsvParts, StandardInputGivesTheRowsOfTheFile) {
  std::string text = "a,b,label\n";
  for (int i = 0; i < 200000; ++i) text += std::to_string(i % 256) + "," + std::to_string(i % 7) + ".5," + (i % 3 ? "x" : "y") + "\n";
  const std::string path = write_temp("stdin/big.csv", text);  // past the size read in parallel
  const Loaded want = load_with(path, {}, PartCuts{});
  const Loaded got = with_stdin(path, [] { return load_with("-", {}, PartCuts{}); });
  expect_same(got, want, "standard input");
  // A title above the header, skipped on standard input as in the file.
  const std::string titled = write_temp("stdin/titled.csv", "A title\n" + text);
  knn::CsvOptions skip;
  skip.skip_lines = 1;
  Loaded from_stdin = with_stdin(titled, [&] { return load_with("-", skip, PartCuts{}); });
  for (auto& line : from_stdin.data.lines) --line;
  expect_same(from_stdin, want, "standard input, a title skipped");
  const std::string bad = write_temp("stdin/bad.csv", "a,b,label\n1,2,x\n3,oops,y\n");
  knn::CsvOptions o;
  o.numeric = {"b"};
  EXPECT_EQ(with_stdin(bad, [&] { return load_with("-", o, PartCuts{}); }).error,
            "<stdin>:3:2: not a finite number: \"oops\" in column \"b\", which numeric reads as numbers");
}

}  // namespace
