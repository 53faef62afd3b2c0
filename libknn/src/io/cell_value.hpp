#pragma once
// What one CSV cell holds: a missing value (one of the NA tokens), a finite float32 number, a
// number that float32 cannot hold (inf, nan, 1e999: an error in a numeric column), or text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace knn::detail {

enum class CellKind { missing, number, not_finite, text };

/// The NA tokens, compared after surrounding spaces and tabs are trimmed.
class MissingTokens {
 public:
  explicit MissingTokens(const std::vector<std::string>& tokens);
  bool contains(std::string_view trimmed) const;
  bool has_number() const { return has_number_; }  // a token reads as a finite number

 private:
  std::vector<std::string> tokens_;
  bool empty_ = false;  // the empty cell is one of them
  bool has_number_ = false;
};

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Whole numbers of up to 7 digits, with a sign, are exact in float: they are read as integers
/// (so "-0" is +0).
inline bool parse_small_int(const char* b, const char* e, float& out) {
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

/// A plain number at [p, end): "-"? digits, or "-"? digits "." digits*, seven digits at most in
/// all: the way most cells are read, inline in the loops that read them. Returns where it ends,
/// with its value in `out`, or nullptr where the text there is no plain number (the caller then
/// reads the cell by the other rules, classify_other's). The values are those of
/// parse_small_int and parse_float: the digits are exact in float and so is 10^k for k <= 7, so
/// the one division rounds the exact quotient once, to nearest, as parse_float does (Clinger's
/// fast path); "-0" is +0, as a whole number.
inline const char* scan_plain_number(const char* p, const char* end, float& out) {
  const bool neg = p != end && *p == '-';
  const char* q = p + neg;
  const char* const whole = q;
  std::uint32_t v = 0;
  for (unsigned d; q != end && (d = static_cast<unsigned char>(*q) - unsigned{'0'}) < 10; ++q) v = v * 10 + d;
  const std::ptrdiff_t digits = q - whole;
  if (digits < 1 || digits > 7) return nullptr;
  if (q == end || *q != '.') {
    out = static_cast<float>(neg ? -static_cast<int>(v) : static_cast<int>(v));
    return q;
  }
  const char* const frac = ++q;
  for (unsigned d; q != end && (d = static_cast<unsigned char>(*q) - unsigned{'0'}) < 10; ++q) v = v * 10 + d;
  const std::ptrdiff_t k = q - frac;
  if (digits + k > 7) return nullptr;
  static constexpr float kPow10[8] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f};
  const float x = static_cast<float>(v) / kPow10[k];
  out = neg ? -x : x;
  return q;
}

/// `text` as a file of decimal mark `decimal` means it, with a point for the mark: false where
/// the mark is a comma and `text` holds a point (text, not a number), else `out` is set.
bool pointed_text(std::string_view text, char decimal, std::string& out);

/// classify_cell for a file whose decimal mark is `decimal` (CsvOptions::decimal): with ',' the
/// cell's comma is read as a point, and a cell with a point is text.
CellKind classify_cell(std::string_view cell, const MissingTokens& na, char decimal, float& value);

/// classify_cell past the fast path.
CellKind classify_other(std::string_view trimmed, const MissingTokens& na, float& value);

/// The kind of the trimmed `cell`; `value` is set for a number.
inline CellKind classify_cell(std::string_view cell, const MissingTokens& na, float& value) {
  const std::string_view t = trim(cell);
  // Most cells are plain numbers: they are taken before the tokens are compared, unless a token
  // is itself a number (-999, say).
  const char* const end = t.data() + t.size();
  if (!na.has_number() && !t.empty() && scan_plain_number(t.data(), end, value) == end) return CellKind::number;
  return classify_other(t, na, value);
}

}  // namespace knn::detail
