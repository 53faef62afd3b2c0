#pragma once
// Fresh memory for what the loader writes in bulk (the feature matrix). Filling
// hundreds of megabytes of new memory is slowed most by the kernel's page faults, one per 4 KiB
// page and taken by whichever thread writes first (under some hypervisors each costs tens of
// microseconds). The pages are asked for as huge pages, and mapped by every thread at once
// before the data is written.
#include <cstddef>
#include <vector>

namespace knn::detail {

/// Asks for huge pages over the pages holding [p, p + bytes) and maps them, in parallel. The
/// contents are unchanged. Best effort: where the kernel does not offer it, nothing happens.
void prepare_pages(void* p, std::size_t bytes);

/// `n` zero values in `v`, its pages prepared first (prepare_pages).
void resize_prepared(std::vector<float>& v, std::size_t n);

}  // namespace knn::detail
