#include "output.hpp"

#include "errors.hpp"
#include "knn/io.hpp"
#include "knn/mpi.hpp"
#include "knn/version.hpp"

namespace knn::app {

RankStreams::RankStreams(std::ostream& out, std::ostream& err)
    : comm_(mpi::world()), null_(nullptr), out_(writes() ? out : null_), err_(writes() ? err : null_) {}

std::string version_line(std::string_view prog) {
  return std::string(prog) + ' ' + version() + (built_with_cuda() ? " (CPU and CUDA backends)" : " (CPU backend)") + '\n';
}

void check_format(const std::string& format) {
  if (format != "csv" && format != "json")
    throw option_error("format", "unknown format " + quote(format) + " (expected csv or json)");
}

void write_output(const std::string& path, std::string_view content, std::ostream& out) {
  if (path == "-") {
    out << content << std::flush;
    return;
  }
  write_file_atomic(path, content);
}

}  // namespace knn::app
