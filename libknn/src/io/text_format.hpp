#pragma once
// Text forms the library reads and writes itself: CSV fields of save_csv, doubles in messages and
// weight names, float cells of the loader. Not part of the public API; the apps format their own
// output.
#include <optional>
#include <string>
#include <string_view>

namespace knn {

/// A CSV field, quoted when it holds the delimiter, a quote, a newline or surrounding spaces.
std::string csv_field(std::string_view text, char delimiter = ',');

/// The shortest text that reads back as exactly `v` (std::to_chars).
std::string format_double(double v);

/// Parses a float cell the way the loader does: the whole text must be a finite float32 number.
std::optional<float> parse_float(const char* begin, const char* end);

}  // namespace knn
