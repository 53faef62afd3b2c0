#pragma once
// A training set searched in parts, for a device that cannot hold it whole.
#include <cstddef>

#include "distributed/candidate_merge.hpp"

namespace knn::detail {

/// The request over its training rows taken `rows_per_part` at a time: each part's nearest, merged
/// by (distance, row), so the answer is the one of a single search. `request.exclude` holds rows of
/// the whole training set.
Neighbors search_in_parts(const SearchFn& search_rows, const SearchRequest& request, std::size_t rows_per_part);

}  // namespace knn::detail
