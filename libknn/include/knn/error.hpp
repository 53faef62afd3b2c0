#pragma once
// knn::Error: the one exception type of the library. Its message is a complete, single line
// that names where the problem is (file, line and column, or the option) and quotes the value.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace knn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}

  /// "FILE:LINE:COLUMN: WHAT" (line and column 1-based; 0 leaves them out). Bytes of FILE outside
  /// printable ASCII are shown as \xNN; an empty FILE as "".
  static Error at(std::string_view file, std::size_t line, std::size_t column, std::string_view what);
  /// "option --NAME: WHAT".
  static Error option(std::string_view name, std::string_view what);
};

/// The value in double quotes, escaped (\", \\, \n, \t, \xNN for other bytes outside printable
/// ASCII) and cut to 40 characters with "..." after it when longer.
std::string quote(std::string_view value);

}  // namespace knn
