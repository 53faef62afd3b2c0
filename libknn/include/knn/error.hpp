#pragma once
// knn::Error: the one exception type of the library. Its message is a complete, single line that
// names where the problem is (file, line and column, or the parameter as this API spells it) and
// quotes the value (docs/design.md#errors).
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace knn {

class Error : public std::runtime_error {
 public:
  /// A message that may mention parameters through param(); what() spells them as the API does.
  explicit Error(const std::string& message);

  /// "FILE:LINE:COLUMN: WHAT" (line and column 1-based; 0 leaves them out). Bytes of FILE outside
  /// printable ASCII are shown as \xNN; an empty FILE as "".
  static Error at(std::string_view file, std::size_t line, std::size_t column, std::string_view what);
  /// "parameter NAME: WHAT": the value given for parameter NAME is wrong.
  static Error parameter(std::string_view name, std::string_view what);

  /// The parameter an Error::parameter is about; empty for other errors.
  const std::string& parameter_name() const { return parameter_; }
  /// The message after the subject, with param()'s marks: Error::parameter(parameter_name(),
  /// detail()), or Error(detail()) when there is no parameter, makes the same error again.
  const std::string& detail() const { return raw_; }
  /// The message with every parameter it mentions spelled by `spell` (a program shows its option
  /// names), and an Error::parameter's "parameter NAME" subject as `subject(NAME)`.
  std::string message(const std::function<std::string(std::string_view)>& spell,
                      const std::function<std::string(std::string_view)>& subject) const;

 private:
  Error(std::string parameter, std::string raw);
  std::string parameter_;
  std::string raw_;  // the message with param()'s marks
};

/// A parameter's name inside an Error's message, marked so that a program can spell it as its
/// own option (Error::message); what() shows the name as it is.
std::string param(std::string_view name);

/// The value in double quotes, escaped (\", \\, \n, \t, \xNN for other bytes outside printable
/// ASCII) and cut to 40 characters with "..." after it when longer.
std::string quote(std::string_view value);

/// A file name as messages show it: as given, but with bytes outside printable ASCII as \xNN, so
/// that a message stays one printable line whatever the name; an empty name shows as "".
std::string printable_name(std::string_view file);

}  // namespace knn
