#pragma once
// What the fuzz targets share: a scratch folder of their own, and the checks that every error
// the project raises keeps its shape (one line, printable, the value quoted).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace knn::fuzz {

/// A folder for this process, made once; fuzz inputs are written there, never into the tree.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("knn-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const auto path = (scratch() / name).string();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) std::abort();
  return path;
}

/// Stops the run (libFuzzer reports it as a crash, with the input) when `ok` is false.
inline void require(bool ok, const char* what, std::string_view detail = {}) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

/// An error message is one line of printable ASCII (values inside are quoted and escaped).
inline void check_message(std::string_view message) {
  require(!message.empty(), "empty error message");
  for (unsigned char c : message) require(c >= 0x20 && c < 0x7f, "error message is not one line of printable ASCII", message);
}

}  // namespace knn::fuzz
