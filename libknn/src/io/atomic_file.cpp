#include "knn/io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "knn/error.hpp"

namespace knn {

void write_file_atomic(const std::string& path, std::string_view content) {
  if (path == "-" || path.empty()) {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
      throw Error::at("<stdout>", 0, 0, std::string("write failed: ") + std::strerror(errno));
    return;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  // Write through a symbolic link to the file it names, and straight into anything that is not a
  // regular file (/dev/null, a pipe): renaming over those would replace them.
  const fs::path target = fs::is_symlink(path, ec) ? fs::weakly_canonical(path, ec) : fs::path(path);
  if (fs::is_directory(target, ec)) throw Error::at(path, 0, 0, "is a directory; give an output file name");
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
    std::FILE* f = std::fopen(target.c_str(), "wb");
    if (!f) throw Error::at(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
    if (std::fclose(f) != 0 || !ok) throw Error::at(path, 0, 0, std::string("write failed: ") + std::strerror(errno));
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw Error::at(path, 0, 0, "cannot write: folder " + quote(dir.string()) + " does not exist");
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp-")).string();
  tmp += std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error::at(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw Error::at(path, 0, 0, std::string("write failed: ") + std::strerror(ok ? errno : saved));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error::at(path, 0, 0, std::string("cannot write: ") + std::strerror(e));
  }
}

}  // namespace knn
