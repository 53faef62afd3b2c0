// Every public header, in a second translation unit of a test program: the program only links
// if the headers define nothing that two translation units cannot both define.
#include <knn/prim/block/block_bitonic_sort.cuh>
#include <knn/prim/block/block_reduce.cuh>
#include <knn/prim/block/block_scan.cuh>
#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/device/device_radix_sort.cuh>
#include <knn/prim/device/device_reduce.cuh>
#include <knn/prim/device/device_scan.cuh>
#include <knn/prim/device/device_segmented_scan.cuh>
#include <knn/prim/device/device_segmented_sort.cuh>
#include <knn/prim/device/device_select.cuh>
#include <knn/prim/operators.hpp>
#include <knn/prim/reference/radix_select.hpp>
#include <knn/prim/reference/radix_sort.hpp>
#include <knn/prim/reference/reduce.hpp>
#include <knn/prim/reference/scan.hpp>
#include <knn/prim/reference/select.hpp>
#include <knn/prim/status.hpp>
#include <knn/prim/warp/warp_append.cuh>
#include <knn/prim/warp/warp_reduce.cuh>
#include <knn/prim/warp/warp_scan.cuh>

namespace knn::prim::test {
// Instantiates the non-template entry points here too, as the other translation unit does.
Status all_headers_size_query(std::size_t& bytes) {
  KNN_PRIM_TRY(column_min_max(nullptr, bytes, nullptr, 10, 3, nullptr, nullptr));
  return radix_select_k(nullptr, bytes, nullptr, 2, 10, 3, nullptr, nullptr);
}
}  // namespace knn::prim::test
