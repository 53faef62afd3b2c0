#pragma once
// The options that choose where work runs: --device, --threads, --precision, --gpu-memory.
#include <cxxopts.hpp>

#include <ostream>

#include "knn/search.hpp"

namespace knn::app {

/// Adds them to the "run" group.
void add_run_options(cxxopts::Options& options);

/// Their values, checked; --threads also sets the number of OpenMP threads. Notices (a GPU build
/// falling back to the CPU) go to `err`.
BackendOptions run_options(const cxxopts::ParseResult& result, std::ostream& err);

}  // namespace knn::app
