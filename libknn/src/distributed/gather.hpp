#pragma once
// Every rank's values on every rank.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "knn/communicator.hpp"

namespace knn::detail {

/// Every rank's values, concatenated in rank order, on every rank.
template <class T>
std::vector<T> gather_all(const Communicator& comm, const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto parts = comm.allgather(std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(T)));
  std::vector<T> all;
  for (const auto& p : parts) {
    const std::size_t at = all.size();
    all.resize(at + p.size() / sizeof(T));
    std::memcpy(all.data() + at, p.data(), p.size());
  }
  return all;
}

/// The union of every rank's label texts, each once, in byte order (for the label encoder).
std::vector<std::string> all_labels(const Communicator& comm, const std::vector<std::string>& labels);

}  // namespace knn::detail
