#pragma once
namespace knn {
/// The library version, "MAJOR.MINOR.PATCH".
const char* version();
/// True when this build includes the CUDA backend.
bool built_with_cuda();
}  // namespace knn
