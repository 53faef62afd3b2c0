#pragma once
// Output files are written whole or not at all.
#include <string>
#include <string_view>

namespace knn {

/// Writes `content` to `path` through a temporary file in the same folder, renamed into place
/// when complete; "-" writes to standard output. Throws knn::Error naming the path on failure,
/// leaving no partial file behind.
void write_file_atomic(const std::string& path, std::string_view content);

/// A CSV field, quoted when it holds the delimiter, a quote, a newline or surrounding spaces.
std::string csv_field(std::string_view text, char delimiter = ',');

/// Doubles in a fixed, round-trippable format ("%.17g" trimmed to the shortest exact form).
std::string format_double(double v);

}  // namespace knn
