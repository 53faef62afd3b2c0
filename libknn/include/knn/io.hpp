#pragma once
// Output files are written whole or not at all.
#include <string>
#include <string_view>

namespace knn {

/// Writes `content` to `path` through a temporary file in the same folder, renamed into place
/// when complete; "-" writes to standard output. Throws knn::Error naming the path on failure,
/// leaving no partial file behind.
void write_file_atomic(const std::string& path, std::string_view content);

}  // namespace knn
