#include "io/cell_value.hpp"

#include <algorithm>
#include <charconv>

#include "io/text_format.hpp"

namespace knn::detail {

namespace {

// Whole numbers of up to 7 digits (pixel values, counts) are exact in float: a fast path for them.
bool parse_small_int(const char* b, const char* e, float& out) {
  bool neg = false;
  if (b != e && (*b == '-' || *b == '+')) neg = *b++ == '-';
  const std::ptrdiff_t len = e - b;
  if (len < 1 || len > 7) return false;
  int v = 0;
  for (const char* p = b; p != e; ++p) {
    const unsigned dgt = static_cast<unsigned>(*p - '0');
    if (dgt > 9) return false;
    v = v * 10 + static_cast<int>(dgt);
  }
  out = static_cast<float>(neg ? -v : v);
  return true;
}

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
    has_number_ = has_number_ || reads_as_number(v);
  }
}

bool MissingTokens::contains(std::string_view trimmed) const {
  if (trimmed.empty()) return empty_;
  return std::find(tokens_.begin(), tokens_.end(), trimmed) != tokens_.end();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

CellKind classify_cell(std::string_view cell, const MissingTokens& na, float& value) {
  const std::string_view t = trim(cell);
  // Most cells are small whole numbers: they are taken before the tokens are compared, unless a
  // token is itself a number (-999, say).
  if (!na.has_number() && parse_small_int(t.data(), t.data() + t.size(), value)) return CellKind::number;
  if (na.contains(t)) return CellKind::missing;
  if (parse_small_int(t.data(), t.data() + t.size(), value)) return CellKind::number;
  if (const auto parsed = parse_float(t.data(), t.data() + t.size())) {
    value = *parsed;
    return CellKind::number;
  }
  return reads_as_number(t) ? CellKind::not_finite : CellKind::text;
}

}  // namespace knn::detail
