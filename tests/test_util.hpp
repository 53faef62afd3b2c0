#pragma once
// Helpers shared by the CPU tests: temporary files and random data with a printed seed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "knn/matrix.hpp"

namespace knn::test {

/// One folder of temporary files per test process, removed when the tests end.
inline const std::filesystem::path& temp_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("knn_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

class TempDirCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("knn_test_" + std::to_string(::getpid())), ec);
  }
};
inline ::testing::Environment* const temp_dir_cleanup = ::testing::AddGlobalTestEnvironment(new TempDirCleanup);

/// Writes `content` to temp_dir()/name (subfolders created) and returns the path.
inline std::string write_temp(const std::string& name, const std::string& content) {
  const auto p = temp_dir() / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << content;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + p.string());
  return p.string();
}

/// A build with the GPU backend, run where no GPU is usable, says so in one line on stderr when
/// --device is auto (the default). Tests of everything else remove that documented line.
inline std::string without_fallback_note(std::string err) {
  const std::string head = "note: no usable GPU";
  if (err.rfind(head, 0) == 0) {
    const auto end = err.find('\n');
    if (end != std::string::npos && err.compare(end - 20, 20, "; running on the CPU") == 0) err.erase(0, end + 1);
  }
  return err;
}

/// Sets an environment variable for one scope, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

inline std::uint64_t fresh_seed() { return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}(); }

inline Matrix random_matrix(std::size_t rows, std::size_t cols, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  Matrix m(rows, cols);
  std::uniform_real_distribution<float> u(lo, hi);
  for (auto& v : m.values) v = u(rng);
  return m;
}

// Values +-10^e with e uniform in [lo_exp, hi_exp], either sign: magnitudes spread over many
// orders, for bounds near the ends of float's range.
inline Matrix log_spread_matrix(std::size_t rows, std::size_t cols, std::mt19937_64& rng, float lo_exp, float hi_exp) {
  Matrix m(rows, cols);
  std::uniform_real_distribution<float> e(lo_exp, hi_exp);
  for (auto& v : m.values) v = std::pow(10.0f, e(rng)) * (rng() % 2 ? 1.0f : -1.0f);
  return m;
}

}  // namespace knn::test
