#pragma once
// KNN_TEST_ASAN is defined where AddressSanitizer instruments the program (GCC or Clang): test
// programs that replace the global operator new leave it to the sanitizer's allocator then.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KNN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KNN_TEST_ASAN 1
#endif
