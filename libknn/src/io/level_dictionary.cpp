#include "io/level_dictionary.hpp"

#include <algorithm>
#include <cmath>

#include "knn/error.hpp"

namespace knn::detail {

float LevelDictionary::code(std::string_view text) {
  const auto it = codes_.find(text);
  if (it != codes_.end()) return it->second;
  if (texts_.size() >= (std::size_t{1} << 24)) throw Error("more than 16,777,216 distinct values in one categorical column");
  const auto c = static_cast<float>(texts_.size());
  texts_.emplace_back(text);
  codes_.emplace(texts_.back(), c);
  return c;
}

std::vector<std::string> LevelDictionary::finish(Matrix& m, std::size_t col) const {
  const std::vector<std::string> in_order(texts_.begin(), texts_.end());
  std::vector<std::string> sorted = in_order;
  std::sort(sorted.begin(), sorted.end());
  recode_column(m, col, in_order, sorted);
  return sorted;
}

void remap_column(Matrix& m, std::size_t col, std::size_t first, std::size_t last, const std::vector<float>& to) {
  for (std::size_t i = first; i < last; ++i) {
    float& v = m(i, col);
    if (!std::isnan(v)) v = to[static_cast<std::size_t>(v)];
  }
}

void recode_column(Matrix& m, std::size_t col, const std::vector<std::string>& from, const std::vector<std::string>& to) {
  std::vector<float> remap(from.size());
  for (std::size_t i = 0; i < from.size(); ++i)
    remap[i] = static_cast<float>(std::lower_bound(to.begin(), to.end(), from[i]) - to.begin());
  remap_column(m, col, 0, m.rows, remap);
}

}  // namespace knn::detail
