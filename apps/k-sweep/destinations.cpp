#include "destinations.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "errors.hpp"
#include "knn/error.hpp"
#include "output.hpp"

namespace knn::sweep {

namespace fs = std::filesystem;

void check_destination(const std::string& option, const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw app::option_error(option, "needs a file name");
  std::error_code ec;
  const fs::path target(path);
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw app::option_error(option, quote(path) + " is a folder; give a file name");
  if (fs::exists(status) && !fs::is_regular_file(status)) {  // a device or a pipe: written directly
    if (::access(path.c_str(), W_OK) != 0)
      throw app::option_error(option, quote(path) + ": cannot write: " + std::strerror(errno));
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw app::option_error(option, quote(path) + ": folder " + quote(dir.string()) + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw app::option_error(option, quote(path) + ": cannot write in folder " + quote(dir.string()) + ": " +
                                    std::strerror(errno));
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  std::error_code ec1, ec2;
  const fs::path pa = fs::weakly_canonical(a, ec1), pb = fs::weakly_canonical(b, ec2);
  return ec1 || ec2 ? a == b : pa == pb;
}

void write_result(const std::string& path, std::string_view content, std::ostream& out) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (path != "-" && !ec && fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status)) {
    std::ofstream f(path, std::ios::binary);
    f << content;
    f.close();
    if (!f) throw Error::at(path, 0, 0, "write failed");
    return;
  }
  app::write_output(path, content, out);
}

}  // namespace knn::sweep
