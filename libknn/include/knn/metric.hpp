#pragma once
// The distance, defined once (docs/design.md#distance): computed directly from the two float rows, accumulated
// in double in feature order, each product and sum rounded on its own (no fused multiply-add).
// Every backend reports exactly this value and orders neighbours by it.
#include <cstddef>
#include <string>

namespace knn {

enum class Metric { l2, l1, cosine };

Metric parse_metric(const std::string& text);  // "l2" | "l1" | "cosine"
const char* to_string(Metric m);

/// l2: sqrt(sum (a_i - b_i)^2). l1: sum |a_i - b_i|. cosine: 1 - a.b / (|a| |b|), and 1 when
/// either row is all zeros (so a zero row is equally far from everything).
double distance(const float* a, const float* b, std::size_t dims, Metric metric);

}  // namespace knn
