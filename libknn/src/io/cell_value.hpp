#pragma once
// What one CSV cell holds: a missing value (one of the NA tokens), a finite float32 number, a
// number that float32 cannot hold (inf, nan, 1e999: an error in a numeric column), or text.
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
  bool has_number() const { return has_number_; }  // a token reads as a number

 private:
  std::vector<std::string> tokens_;
  bool empty_ = false;  // the empty cell is one of them
  bool has_number_ = false;
};

std::string_view trim(std::string_view s);

/// The kind of the trimmed `cell`; `value` is set for a number.
CellKind classify_cell(std::string_view cell, const MissingTokens& na, float& value);

}  // namespace knn::detail
