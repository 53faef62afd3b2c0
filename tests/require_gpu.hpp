#pragma once
// REQUIRE_GPU(): the GPU tests' first line. Without a usable GPU the test is skipped (reported as
// skipped, never as passed).
#include <gtest/gtest.h>

#include "knn/knn.hpp"

#define REQUIRE_GPU()                                            \
  do {                                                           \
    if (!knn::cuda_available()) GTEST_SKIP() << "no usable GPU"; \
  } while (0)
