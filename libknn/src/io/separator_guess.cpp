#include "io/separator_guess.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/error.hpp"

namespace knn::detail {

namespace {

constexpr std::size_t kLinesLooked = 5;

struct Separator {
  char c;
  const char* value;  // as the delimiter parameter takes it
  const char* plural;
};

constexpr Separator kSeparators[] = {
    {';', "';'", "semicolons"}, {'\t', "'\\t'", "tabs"}, {'|', "'|'", "bars"}, {' ', "' '", "spaces"}, {',', "','", "commas"}};

// The first lines of `text`, without their line ends; blank lines passed over.
std::vector<std::string_view> first_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t at = 0;
  while (at < text.size() && lines.size() < kLinesLooked) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

// Whether a field of `lines` split at `c` is a number with a decimal comma ("1,5").
bool decimal_comma_field(const std::vector<std::string_view>& lines, char c) {
  for (std::string_view line : lines) {
    std::size_t at = 0;
    while (at <= line.size()) {
      std::size_t end = line.find(c, at);
      if (end == std::string_view::npos) end = line.size();
      const std::string_view field = line.substr(at, end - at);
      if (decimal_comma_number(field)) return true;
      at = end + 1;
    }
  }
  return false;
}

// Fields of `line` at `c`; 0 where a field split at a space would be empty.
std::size_t fields(std::string_view line, char c) {
  std::size_t n = 1;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != c) continue;
    if (c == ' ' && (i == 0 || i + 1 == line.size() || line[i + 1] == ' ')) return 0;
    ++n;
  }
  return n;
}

}  // namespace

std::string separator_advice(std::string_view text, char delimiter) {
  const std::vector<std::string_view> lines = first_lines(text);
  if (lines.size() < 2) return "";
  if (lines.front().find(delimiter) != std::string_view::npos) return "";
  for (std::string_view line : lines)
    if (line.find('"') != std::string_view::npos) return "";
  for (const Separator& s : kSeparators) {
    if (s.c == delimiter) continue;
    const std::size_t n = fields(lines.front(), s.c);
    if (n < 2 || !std::all_of(lines.begin(), lines.end(), [&](std::string_view l) { return fields(l, s.c) == n; })) continue;
    const bool commas = delimiter == ',' && decimal_comma_field(lines, s.c);
    return "its first " + std::to_string(lines.size()) + " lines each hold " + std::to_string(n) + " fields separated by " + s.plural +
           ": give " + param("delimiter") + " " + s.value + (commas ? " and " + param("decimal") + " ',' for its decimal commas" : "");
  }
  return "";
}

}  // namespace knn::detail
