#include "io/text_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace knn {

std::string csv_field(std::string_view text, char delimiter) {
  const bool needs = text.find_first_of(std::string{delimiter, '"', '\n', '\r'}) != std::string_view::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!needs) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string format_double(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::optional<float> parse_float(const char* b, const char* e) {
  if (b != e && *b == '+' && e - b > 1 && *(b + 1) != '-' && *(b + 1) != '+') ++b;
  if (b == e) return std::nullopt;
  float f = 0.0f;
  auto [p, ec] = std::from_chars(b, e, f);
  if (p != e) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Tiny values underflow to a subnormal or zero, as a double-to-float conversion would; values
    // beyond float's range are refused rather than turned into infinities.
    const std::string text(b, e);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !(std::fabs(d) < 1.0)) return std::nullopt;
    f = static_cast<float>(d);
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  if (!std::isfinite(f)) return std::nullopt;
  return f;
}

}  // namespace knn
