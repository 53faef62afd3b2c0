#pragma once
// Where an app's results and messages go: rank 0's streams under mpirun, the --output file, the
// version line.
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "knn/communicator.hpp"

namespace knn::app {

/// The streams of one run. Under mpirun every rank computes; rank 0 alone writes results and
/// messages, the other ranks' streams drop what they are given.
class RankStreams {
 public:
  RankStreams(std::ostream& out, std::ostream& err);
  RankStreams(const RankStreams&) = delete;
  RankStreams& operator=(const RankStreams&) = delete;

  /// MPI_COMM_WORLD under an MPI launcher, else nullptr.
  const std::shared_ptr<const Communicator>& comm() const { return comm_; }
  /// Whether this process writes results: rank 0, or a run without MPI.
  bool writes() const { return !comm_ || comm_->rank() == 0; }
  std::ostream& out() { return out_; }
  std::ostream& err() { return err_; }

 private:
  std::shared_ptr<const Communicator> comm_;
  std::ostream null_;
  std::ostream& out_;
  std::ostream& err_;
};

/// "PROG VERSION (BACKENDS)" and a newline.
std::string version_line(std::string_view prog);

/// --format: csv or json.
void check_format(const std::string& format);

/// Writes a result: "-" to `out`, a file whole or not at all (knn::write_file_atomic).
void write_output(const std::string& path, std::string_view content, std::ostream& out);

}  // namespace knn::app
