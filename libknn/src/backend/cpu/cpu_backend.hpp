#pragma once
#include "knn/search.hpp"

namespace knn::cpu {

/// The reference backend: candidates from a float32 matrix product (Eigen) or a float32 l1 pass,
/// widened by a proven rounding bound, then ranked by the defined double-precision distance.
class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : threads_(threads) {}
  const char* name() const override { return "cpu"; }
  Neighbors search(const SearchRequest& request) const override;

 private:
  int threads_;
};

}  // namespace knn::cpu
