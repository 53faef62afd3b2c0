#pragma once
// A file read with the wrong separator: scikit-learn's diabetes data (spaces), a spreadsheet's
// export in a locale that writes decimal commas (semicolons). Its header then reads as one field,
// and the loader's errors would ask about a title line instead.
#include <string>
#include <string_view>

namespace knn::detail {

/// Where the first line of `text` is one field at `delimiter` and the first lines (up to five; at
/// least two) all split at one other separator (semicolon, tab, bar, space, comma) into the same number
/// of fields, more than one: advice naming that separator and the delimiter parameter, e.g.
/// "its first 5 lines each hold 10 fields separated by spaces: give --delimiter ' '", and where
/// `delimiter` is a comma and a field is a number with a decimal comma, the decimal parameter as
/// well. Else "".
/// Fields split at spaces must not be empty (a run of spaces is not one separator); quotes end
/// the guess (a quoted field may hold any separator).
std::string separator_advice(std::string_view text, char delimiter);

}  // namespace knn::detail
