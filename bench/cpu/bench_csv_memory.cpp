// Peak memory of loading a CSV file, against the file's size and the size of what is kept (the
// float32 matrix and the label texts). Run one file per process: the peak is the process's own.
//   bench_csv_memory FILE [FILE...]   (each in a child process; prints a CSV table)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "knn/dataset.hpp"

namespace {

// VmHWM / VmRSS of this process from /proc/self/status, in bytes.
long long status_bytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::strlen(key))) * 1024;
  return -1;
}

int measure(const std::string& path) {
  const long long before = status_bytes("VmRSS:");
  const auto t = std::chrono::steady_clock::now();
  const knn::Dataset d = knn::load_csv(path, {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  const long long peak = status_bytes("VmHWM:");
  long long kept = static_cast<long long>(d.features.values.size() * sizeof(float));
  for (const auto& l : d.labels) kept += static_cast<long long>(sizeof(std::string) + (l.size() > 15 ? l.size() : 0));
  kept += static_cast<long long>(d.lines.size() * sizeof(std::size_t));
  const auto file = static_cast<long long>(std::filesystem::file_size(path));
  std::printf("%s,%zu,%zu,%.1f,%.1f,%.1f,%.1f,%.2f,%.3f\n", std::filesystem::path(path).filename().c_str(), d.size(),
              d.dims(), file / 1e6, kept / 1e6, (peak - before) / 1e6, peak / 1e6,
              static_cast<double>(peak - before) / static_cast<double>(file), s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [FILE...]\n", argv[0]);
    return 2;
  }
  std::printf("file,rows,features,file_MB,kept_MB,peak_minus_start_MB,peak_rss_MB,peak_over_file,load_s\n");
  std::fflush(stdout);
  for (int i = 1; i < argc; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        const int rc = measure(argv[i]);
        std::fflush(stdout);
        std::_Exit(rc);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_csv_memory: %s\n", e.what());
        std::_Exit(2);
      }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 2;
  }
  return 0;
}
