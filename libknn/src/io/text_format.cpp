#include "io/text_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

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
    // strtod wants a terminated string: a short one is copied to the stack, not the heap.
    char small[64];
    std::string large;
    const auto n = static_cast<std::size_t>(e - b);
    const char* text = small;
    if (n < sizeof small) {
      std::memcpy(small, b, n);
      small[n] = '\0';
    } else {
      large.assign(b, e);
      text = large.c_str();
    }
    char* end = nullptr;
    const double d = std::strtod(text, &end);
    if (end != text + n || !(std::fabs(d) < 1.0)) return std::nullopt;
    f = static_cast<float>(d);
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  if (!std::isfinite(f)) return std::nullopt;
  return f;
}

}  // namespace knn
