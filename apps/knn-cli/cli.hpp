#pragma once
#include <ostream>

namespace knn::cli {

/// knn-cli in-process: argv[0] is the program name, argv[1] the subcommand. Results go to `out`
/// (or the --output file), messages to `err`. Returns the exit code: 0, or 2 for bad input.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace knn::cli
