#pragma once
// Helpers shared by the CPU tests: temporary files and random data with a printed seed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "knn/matrix.hpp"

namespace knn::test {

inline std::filesystem::path temp_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("knn_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_temp(const std::string& name, const std::string& content) {
  const auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

inline std::uint64_t fresh_seed() { return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}(); }

inline Matrix random_matrix(std::size_t rows, std::size_t cols, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  Matrix m(rows, cols);
  std::uniform_real_distribution<float> u(lo, hi);
  for (auto& v : m.values) v = u(rng);
  return m;
}

}  // namespace knn::test
