#pragma once
// The distinct texts of a categorical column as its rows are read, each given a code in order of
// first appearance; finish() sorts them in byte order and rewrites the codes to match.
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "knn/matrix.hpp"

namespace knn::detail {

class LevelDictionary {
 public:
  LevelDictionary() = default;
  // The map's keys view the texts it holds, so a copy would view the original's.
  LevelDictionary(const LevelDictionary&) = delete;
  LevelDictionary& operator=(const LevelDictionary&) = delete;
  LevelDictionary(LevelDictionary&&) = default;
  LevelDictionary& operator=(LevelDictionary&&) = default;

  /// The code of `text`, a new one where it is new. Throws knn::Error past 2^24 distinct texts
  /// (codes are stored as float32, exact up to there).
  float code(std::string_view text);
  std::size_t size() const { return texts_.size(); }
  /// The texts in order of their codes.
  const std::deque<std::string>& texts() const { return texts_; }
  /// The texts in byte order; column `col` of `m` (codes, or NaN) rewritten to index them.
  std::vector<std::string> finish(Matrix& m, std::size_t col) const;

 private:
  std::deque<std::string> texts_;  // a deque: its strings stay where they are as it grows
  std::unordered_map<std::string_view, float> codes_;
};

/// Rewrites column `col` of `m` from codes into `from` to codes into `to` (a sorted superset).
void recode_column(Matrix& m, std::size_t col, const std::vector<std::string>& from, const std::vector<std::string>& to);

/// Rewrites column `col` of rows [first, last) of `m` by `to`: code c becomes to[c] (NaN stays).
void remap_column(Matrix& m, std::size_t col, std::size_t first, std::size_t last, const std::vector<float>& to);

}  // namespace knn::detail
