#pragma once
// The option table of each knn-cli subcommand and its --help.
#include <cxxopts.hpp>

#include <string>

namespace knn::cli {

/// The options of subcommand `cmd` (fit, predict, evaluate, neighbors or inspect).
cxxopts::Options make_options(const std::string& cmd);

/// `knn-cli CMD --help`: the options by group, then examples.
std::string help_text(const std::string& cmd);

/// For an option `arg` (as typed: --name or --name=value) that `cmd` does not take, which other
/// subcommands take it, e.g. "predict and neighbors take it, not evaluate"; "" where none does.
std::string taken_elsewhere(const std::string& cmd, const std::string& arg);

}  // namespace knn::cli
