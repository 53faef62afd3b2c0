#include "gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "errors.hpp"
#include "knn/error.hpp"
#include "option_values.hpp"

#ifndef KNN_GNUPLOT_PATH
#define KNN_GNUPLOT_PATH ""
#endif

extern char** environ;

namespace knn::sweep {

namespace {

namespace fs = std::filesystem;

bool is_executable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !fs::is_directory(path, ec);
}

std::string find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  if (!env) return std::string();
  for (const auto& dir : app::split_list(env, ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;  // empty entry: "."
    if (is_executable(candidate)) return candidate;
  }
  return std::string();
}

std::string read_binary(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Runs `program` on `script` with its output in `log`; a failure is reported with gnuplot's most
// useful line.
void run_gnuplot(const std::string& program, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::string arg0 = program, arg1 = script.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw app::option_error("plot", "cannot run gnuplot " + quote(program) + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw app::option_error("plot", "lost gnuplot " + quote(program) + ": " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string first;
  std::istringstream lines(read_binary(log));
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" \t^") != std::string::npos) {
      first = line;
      if (line.find("line") != std::string::npos) break;  // gnuplot's "..., line N: what" is the useful one
    }
  throw app::option_error("plot", "gnuplot " + quote(program) + " failed" + (first.empty() ? std::string() : ": " + quote(first)));
}

}  // namespace

std::string find_gnuplot(const std::string& plot) {
  if (const char* env = std::getenv("KNN_GNUPLOT"); env && *env) {
    const std::string named(env);
    const std::string path = named.find('/') == std::string::npos ? find_on_path(named) : named;
    if (!is_executable(path))
      throw app::option_error("plot", quote(plot) + " needs gnuplot, but KNN_GNUPLOT names " + quote(named) +
                                      ", which is not an executable program");
    return path;
  }
  if (is_executable(KNN_GNUPLOT_PATH)) return KNN_GNUPLOT_PATH;
  const std::string on_path = find_on_path("gnuplot");
  if (!on_path.empty()) return on_path;
  throw app::option_error("plot", quote(plot) +
                                  " needs gnuplot, which was not found (install it, e.g. Debian's gnuplot-nox, or "
                                  "set KNN_GNUPLOT to its path)");
}

GnuplotRun::GnuplotRun() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "k-sweep-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw app::option_error("plot", "cannot make a temporary folder in " + quote(base.string()) + ": " + std::strerror(errno));
  dir_ = pattern;
}

GnuplotRun::~GnuplotRun() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void GnuplotRun::write(const std::string& name, const std::string& text) const {
  const fs::path p = file(name);
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw app::option_error("plot", "cannot write " + quote(p.string()));
}

std::string GnuplotRun::image(const std::string& program, const std::string& script, const std::string& image) const {
  run_gnuplot(program, file(script), file("gnuplot.log"));
  const fs::path image_file = file(image);
  std::error_code ec;
  if (!fs::exists(image_file, ec) || fs::file_size(image_file, ec) == 0)
    throw app::option_error("plot", "gnuplot " + quote(program) + " made no image");
  return read_binary(image_file);
}

}  // namespace knn::sweep
