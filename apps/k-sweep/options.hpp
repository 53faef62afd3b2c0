#pragma once
// k-sweep's option table and its --help.
#include <cxxopts.hpp>

#include <string>

namespace knn::sweep {

constexpr const char* kProg = "k-sweep";

cxxopts::Options make_options();

/// `k-sweep --help`: the options by group, then examples and what the table holds.
std::string help_text(cxxopts::Options& options);

}  // namespace knn::sweep
