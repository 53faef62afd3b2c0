#include "knn/version.hpp"

namespace knn {
const char* version() { return KNN_VERSION_STRING; }
bool built_with_cuda() { return KNN_WITH_CUDA != 0; }
}  // namespace knn
