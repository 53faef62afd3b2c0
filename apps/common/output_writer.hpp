#pragma once
// The one writer of the apps' CSV and JSON results. A number has one text in both: the shortest
// that reads back exactly (std::to_chars); in JSON a non-finite number is null.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace knn::app {

/// The shortest text that reads back as exactly `v`.
std::string format_double(double v);

/// A CSV field, quoted when it holds the delimiter, a quote, a newline or surrounding spaces.
std::string csv_field(std::string_view text, char delimiter = ',');

/// A CSV document, one field after the other, each row ended by end_row().
class CsvWriter {
 public:
  /// A text field, quoted where csv_field quotes it.
  CsvWriter& text(std::string_view field);
  CsvWriter& number(double v);
  template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  CsvWriter& integer(Int v) {
    return raw(std::to_string(v));
  }
  CsvWriter& end_row();
  const std::string& str() const { return text_; }

 private:
  CsvWriter& raw(std::string_view field);
  std::string text_;
  bool in_row_ = false;
};

/// A JSON document: nlohmann's value, with objects that keep their members in insertion order.
using Json = nlohmann::ordered_json;

/// The document as text ending in a newline: one line with ", " and ": " between items, except
/// that a member named in `line_breaks` by its path of keys ("rows", "settings/scale"; members
/// of objects inside arrays have none) starts a new line indented one space per level, and an
/// array of objects puts each on a line of its own, indented two spaces, with the closing bracket
/// on a line of its own. Numbers as format_double writes them; strings escaped byte for byte
/// (\uXXXX below 0x20, other bytes as they are).
std::string json_text(const Json& doc, std::initializer_list<std::string_view> line_breaks = {});

}  // namespace knn::app
