#pragma once
// The rows of the whole training set that a process's (or a part's) rows are.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace knn::detail {

/// Global index of each local row: `keys[i]` (ascending) where given, else `offset + i`.
struct RowKeys {
  std::size_t offset = 0;
  const std::int64_t* keys = nullptr;

  std::int64_t global(std::size_t local) const {
    return keys ? keys[local] : static_cast<std::int64_t>(offset + local);
  }
  /// The local row that is global row `g` among `rows` local rows, or -1 when it is not here.
  std::int64_t local(std::int64_t g, std::size_t rows) const {
    if (g < 0) return -1;
    if (keys) {
      const std::int64_t* it = std::lower_bound(keys, keys + rows, g);
      return it != keys + rows && *it == g ? it - keys : -1;
    }
    const auto first = static_cast<std::int64_t>(offset);
    return g >= first && g < first + static_cast<std::int64_t>(rows) ? g - first : -1;
  }
};

}  // namespace knn::detail
