#pragma once
// What knn-cli and k-sweep share: option values parsed with messages that name the option and
// quote the value, progress lines, and the JSON writer.
#include <cxxopts.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/search.hpp"

namespace knn::app {

std::size_t parse_count(const std::string& option, const std::string& text, std::size_t min_value);
std::uint64_t parse_seed(const std::string& text);
char parse_delimiter(const std::string& text);
/// Comma-separated names or indices, e.g. "id,2".
std::vector<std::string> split_list(const std::string& text);
/// "start:stop[:step]" (stop included) or "a,b,c"; all >= 1. Sorted, duplicates removed.
std::vector<std::size_t> parse_k_list(const std::string& text);

/// Progress on stderr, only when it is a terminal and the caller's error stream is stderr.
class Progress {
 public:
  Progress(std::ostream& err, std::string what);
  void update(std::size_t done, std::size_t total);
  void finish();

 private:
  std::ostream& err_;
  std::string what_;
  bool active_;
  bool shown_ = false;
};

/// A JSON string literal.
std::string json_string(const std::string& s);
/// A JSON number (shortest round-trip form); non-finite values become null.
std::string json_number(double v);

/// Parses argv (argv[0] is the program or subcommand name) with the project's error lines: an
/// unknown option or a missing value is quoted as the user typed it; -k is also spelled --k.
/// `help_hint` ends the unknown-option message, e.g. "see k-sweep --help".
cxxopts::ParseResult parse_arguments(cxxopts::Options& options, int argc, const char* const* argv,
                                     const std::string& help_hint);

/// "option --NAME: WHAT", an error in the value of a program's option.
Error option_error(std::string_view option, std::string_view what);
/// The command-line option of a library parameter ("scaling" -> "--scale").
std::string option_name(std::string_view parameter);
/// The error's message with the library's parameters spelled as options.
std::string error_line(const Error& e);

/// Runs an app's body: knn::Error and out-of-memory become one line "PROG: error: ..." and exit
/// code 2, anything unexpected exit code 1.
int guarded(const char* prog, std::ostream& err, const std::function<int()>& body);

/// The options that choose where work runs: --device, --threads, --precision, --gpu-memory.
void add_run_options(cxxopts::Options& options);
/// Their values, checked; --threads also sets the number of OpenMP threads. Notices (a GPU build
/// falling back to the CPU) go to `err`.
BackendOptions run_options(const cxxopts::ParseResult& result, std::ostream& err);

}  // namespace knn::app
