#pragma once
// Plain CSV tables in tests: expected files and the tools' outputs (no quoted fields, every row
// as wide as the header), read by column name.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace knn::test {

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = s.find(sep, b);
    parts.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return parts;
    b = e + 1;
  }
}

/// The lines of a text that must end with a newline (a failure otherwise).
inline std::vector<std::string> lines_of(const std::string& text) {
  EXPECT_TRUE(!text.empty() && text.back() == '\n') << "no final newline:\n" << text;
  std::vector<std::string> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  bool has(const std::string& name) const { return std::find(header.begin(), header.end(), name) != header.end(); }
  std::size_t column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw std::runtime_error("no column " + name);
  }
  const std::string& at(std::size_t row, const std::string& name) const { return rows.at(row).at(column(name)); }
  double number(std::size_t row, const std::string& name) const {
    const std::string& s = at(row, name);
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) throw std::runtime_error("not a number: " + s);
    return v;
  }
};

inline Table parse_table(const std::string& text) {
  Table t;
  const std::vector<std::string> lines = lines_of(text);
  if (lines.empty()) return t;
  t.header = split(lines[0], ',');
  for (std::size_t i = 1; i < lines.size(); ++i) {
    t.rows.push_back(split(lines[i], ','));
    EXPECT_EQ(t.rows.back().size(), t.header.size()) << "line " << i + 1 << ": " << lines[i];
  }
  return t;
}

inline Table read_table(const std::string& path) { return parse_table(read_file(path)); }

}  // namespace knn::test
