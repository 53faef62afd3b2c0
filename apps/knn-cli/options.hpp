#pragma once
// The option table of each knn-cli subcommand and its --help.
#include <cxxopts.hpp>

#include <string>

namespace knn::cli {

/// The options of subcommand `cmd` (fit, predict, evaluate, neighbors or inspect).
cxxopts::Options make_options(const std::string& cmd);

/// `knn-cli CMD --help`: the options by group, then examples.
std::string help_text(const std::string& cmd);

}  // namespace knn::cli
