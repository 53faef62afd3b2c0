// all_file_rows (knn/dataset.hpp): every rank's file rows, gathered as raw bytes.
#include <cstring>
#include <string>

#include "knn/communicator.hpp"
#include "knn/dataset.hpp"

namespace knn {

std::vector<std::size_t> all_file_rows(const Dataset& data, const Communicator* comm) {
  std::vector<std::size_t> mine(data.size());
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = data.file_row(i);
  if (!distributed(comm)) return mine;
  std::vector<std::size_t> all;
  const std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(std::size_t));
  for (const std::string& part : comm->allgather(bytes)) {
    const std::size_t at = all.size();
    all.resize(at + part.size() / sizeof(std::size_t));
    std::memcpy(all.data() + at, part.data(), part.size());
  }
  return all;
}

}  // namespace knn
