#pragma once
// The global operator new of a test program that watches its allocations: no allocation may be a
// gigabyte (a size read from a damaged file must be refused before anything is allocated for it),
// and a LargestAllocation records the largest one made, by any thread, while it is alive.
// Include it in one source file of a program: it defines the replacement.
//
// Under AddressSanitizer the sanitizer's allocator stays (it refuses absurd sizes itself), and
// KNN_TEST_ASAN says so: a test of the record leaves itself out there.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KNN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KNN_TEST_ASAN 1
#endif

namespace knn::test {

inline std::atomic<bool> recording_allocations{false};
inline std::atomic<std::size_t> largest_allocation{0};

/// Records the largest single allocation of this process from its construction to stop().
struct LargestAllocation {
  LargestAllocation() {
    largest_allocation = 0;
    recording_allocations = true;
  }
  ~LargestAllocation() { recording_allocations = false; }
  std::size_t stop() {
    recording_allocations = false;
    return largest_allocation.load();
  }
};

}  // namespace knn::test

#ifndef KNN_TEST_ASAN
void* operator new(std::size_t n) {
  if (n >= (std::size_t{1} << 30)) {
    std::fprintf(stderr, "an allocation of %zu bytes\n", n);
    std::abort();
  }
  if (knn::test::recording_allocations.load(std::memory_order_relaxed)) {
    std::size_t seen = knn::test::largest_allocation.load(std::memory_order_relaxed);
    while (n > seen && !knn::test::largest_allocation.compare_exchange_weak(seen, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif
