#pragma once
// Row numbers as the user knows them: the training file's 0-based data rows, where rows dropped
// for a missing value do not shift the rows after them.
#include <cstddef>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/dataset.hpp"

namespace knn::app {

/// The file row of every row of `data`, over every rank of `comm` in rank order (global rows).
std::vector<std::size_t> all_file_rows(const Dataset& data, const Communicator* comm);

}  // namespace knn::app
