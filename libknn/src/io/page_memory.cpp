#include "io/page_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <omp.h>

#include <cstdint>

namespace knn::detail {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this a parallel region costs more than the faults it saves.
constexpr std::size_t kPrepareFrom = std::size_t{4} << 20;

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

void prepare_pages(void* p, std::size_t bytes) {
  if (bytes < kPrepareFrom) return;
  const std::size_t page = page_size();
  const auto b = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
  const auto e = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  // Each thread maps its own share, cut at huge page boundaries, so the kernel clears the pages
  // in parallel.
#pragma omp parallel
  {
    const auto t = static_cast<std::uintptr_t>(omp_get_thread_num());
    const auto n = static_cast<std::uintptr_t>(omp_get_num_threads());
    const auto cut = [&](std::uintptr_t i) -> std::uintptr_t {
      if (i == 0) return b;
      if (i == n) return e;
      const std::uintptr_t at = (b + (e - b) / n * i) & ~(std::uintptr_t{kHugePage} - 1);
      return at < b ? b : at;
    };
    const std::uintptr_t from = cut(t), to = cut(t + 1);
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  }
#endif
}

void resize_prepared(std::vector<float>& v, std::size_t n) {
  v.clear();
  if (n > v.capacity()) {
    v.shrink_to_fit();
    v.reserve(n);
    prepare_pages(v.data(), n * sizeof(float));
  }
  v.resize(n);
}

}  // namespace knn::detail
