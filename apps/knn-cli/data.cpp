#include "data.hpp"

#include "knn/communicator.hpp"

namespace knn::cli {

Dataset load_train(const cxxopts::ParseResult& r, const Settings& s, const std::string& cmd) {
  return load_csv_sharded(required(r, "train", cmd), s.csv, s.params.backend.comm.get());
}

Dataset load_query(const std::string& path, const Settings& s, const Dataset& train) {
  Dataset query;
  collective(s.params.backend.comm.get(), [&] { query = load_query_csv(path, s.csv, train); });
  return query;
}

}  // namespace knn::cli
