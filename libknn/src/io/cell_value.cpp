#include "io/cell_value.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "io/text_format.hpp"

namespace knn::detail {

namespace {

// Text that reads whole as a number of any size (inf, nan and 1e999 included).
bool reads_as_number(std::string_view s) {
  const char* b = s.data();
  const char* e = b + s.size();
  if (e - b > 1 && *b == '+' && b[1] != '-' && b[1] != '+') ++b;
  double d = 0.0;
  const auto [p, ec] = std::from_chars(b, e, d);
  return p == e && b != e && (ec == std::errc() || ec == std::errc::result_out_of_range);
}

}  // namespace

MissingTokens::MissingTokens(const std::vector<std::string>& tokens) {
  for (const auto& t : tokens) {
    const std::string_view v = trim(t);
    if (v.empty()) {
      empty_ = true;
      continue;
    }
    tokens_.emplace_back(v);
    // Only a token the number parsers would take (-999, not NaN) must be compared first.
    float unused = 0.0f;
    has_number_ = has_number_ || parse_small_int(v.data(), v.data() + v.size(), unused) || parse_float(v.data(), v.data() + v.size());
  }
}

bool MissingTokens::contains(std::string_view trimmed) const {
  if (trimmed.empty()) return empty_;
  return std::find(tokens_.begin(), tokens_.end(), trimmed) != tokens_.end();
}

bool pointed_text(std::string_view text, char decimal, std::string& out) {
  if (decimal != '.' && text.find('.') != std::string_view::npos) return false;
  out.assign(text);
  std::replace(out.begin(), out.end(), decimal, '.');
  return true;
}

CellKind classify_cell(std::string_view cell, const MissingTokens& na, char decimal, float& value) {
  if (decimal == '.') return classify_cell(cell, na, value);
  const std::string_view t = trim(cell);
  if (na.contains(t)) return CellKind::missing;
  std::string pointed;
  return pointed_text(t, decimal, pointed) ? classify_cell(pointed, na, value) : CellKind::text;
}

CellKind classify_other(std::string_view t, const MissingTokens& na, float& value) {
  if (na.contains(t)) return CellKind::missing;
  if (parse_small_int(t.data(), t.data() + t.size(), value)) return CellKind::number;
  if (const auto parsed = parse_float(t.data(), t.data() + t.size())) {
    value = *parsed;
    return CellKind::number;
  }
  return reads_as_number(t) ? CellKind::not_finite : CellKind::text;
}

}  // namespace knn::detail
