#include "option_values.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "errors.hpp"
#include "knn/error.hpp"

namespace knn::app {

namespace {

bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  errno = 0;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return errno != ERANGE;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = text.find(separator, b);
    out.push_back(text.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::size_t parse_count(const std::string& option, const std::string& text, std::size_t min_value) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v) || v < min_value)
    throw option_error(option, quote(text) + " is not a whole number >= " + std::to_string(min_value));
  return static_cast<std::size_t>(v);
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v)) throw option_error("seed", quote(text) + " is not a whole number from 0 to 2^64-1");
  return v;
}

std::vector<std::size_t> parse_k_list(const std::string& text) {
  std::vector<std::size_t> ks;
  const auto bad = [&](const std::string& why) { return option_error("k", quote(text) + ": " + why); };
  if (text.find(':') != std::string::npos) {
    const std::vector<std::string> parts = split_list(text, ':');
    if (parts.size() < 2 || parts.size() > 3) throw bad("expected start:stop or start:stop:step");
    std::uint64_t start = 0, stop = 0, step = 1;
    if (!parse_u64(parts[0], start) || !parse_u64(parts[1], stop) || (parts.size() == 3 && !parse_u64(parts[2], step)))
      throw bad("start, stop and step must be whole numbers");
    if (start < 1) throw bad("k starts at 1");
    if (stop < start) throw bad("stop is smaller than start");
    if (step < 1) throw bad("step must be at least 1");
    if ((stop - start) / step >= 1000000) throw bad("more than a million k values");
    // Counted, not `k <= stop; k += step`: near 2^64 that sum wraps and the loop never ends.
    const std::uint64_t count = (stop - start) / step + 1;
    for (std::uint64_t i = 0; i < count; ++i) ks.push_back(static_cast<std::size_t>(start + i * step));
  } else {
    for (const auto& p : split_list(text)) {
      std::uint64_t v = 0;
      if (!parse_u64(p, v) || v < 1)
        throw option_error("k", quote(text) + (p == text ? "" : ": " + quote(p)) +
                                    " is not a whole number >= 1 (k values are a list such as 1,3,5 or a range START:STOP[:STEP] "
                                    "such as 1:15)");
      ks.push_back(static_cast<std::size_t>(v));
    }
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

}  // namespace knn::app
