#pragma once
// The command line through cxxopts, with the project's messages: an unknown option or a missing
// value is quoted as the user typed it.
#include <cxxopts.hpp>

#include <functional>
#include <string>

namespace knn::app {

/// Parses argv (argv[0] is the program or subcommand name); -k is also spelled --k.
/// `help_hint` ends the unknown-option message, e.g. "see k-sweep --help"; `elsewhere`, where
/// given, says where an unknown option (as typed) is known instead, e.g. "predict takes it", or
/// gives "" for none.
cxxopts::ParseResult parse_arguments(cxxopts::Options& options, int argc, const char* const* argv, const std::string& help_hint,
                                     const std::function<std::string(const std::string&)>& elsewhere = {});

/// The option's text as given, its default when it has one, else "".
std::string option_text(const cxxopts::ParseResult& r, const std::string& name);

/// Throws on an argument that is not an option or an option's value.
void no_stray_arguments(const cxxopts::ParseResult& r);

}  // namespace knn::app
