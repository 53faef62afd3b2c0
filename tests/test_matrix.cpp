#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "knn/matrix.hpp"

// Sizes on both sides of the 2 MiB from which a matrix asks for huge pages: the values are the
// same whatever the pages.
TEST(Matrix, ConstructorsAndCopiesHoldTheValues) {
  for (std::size_t rows : {std::size_t{3}, std::size_t{1} << 12, (std::size_t{1} << 12) + 7}) {
    const std::size_t cols = 257;
    std::vector<float> source(rows * cols);
    std::iota(source.begin(), source.end(), 0.5f);
    const knn::Matrix from(rows, cols, source.data());
    ASSERT_EQ(from.rows, rows);
    ASSERT_EQ(from.cols, cols);
    EXPECT_EQ(from.values, source);

    const knn::Matrix zeros(rows, cols);
    EXPECT_EQ(zeros.values, std::vector<float>(rows * cols, 0.0f));

    knn::Matrix copy = from;
    EXPECT_EQ(copy.values, source);
    EXPECT_EQ(copy.rows, rows);
    copy(rows - 1, cols - 1) = -1.0f;
    EXPECT_EQ(from(rows - 1, cols - 1), source.back());  // a copy, not a view

    knn::Matrix assigned(1, 1);
    assigned = from;
    EXPECT_EQ(assigned.values, source);
    EXPECT_EQ(assigned.cols, cols);
    const knn::Matrix& same = assigned;
    assigned = same;  // self-assignment keeps the values
    EXPECT_EQ(assigned.values, source);

    knn::Matrix moved = std::move(copy);
    EXPECT_EQ(moved.rows, rows);
    EXPECT_EQ(moved(rows - 1, cols - 1), -1.0f);
  }
}
