#pragma once
// k-sweep: cross-validated scores for many k (and weight functions and metrics) in one pass over
// the folds, as a CSV or JSON table, with an optional plot of score against k.
#include <ostream>

namespace knn::sweep {

/// k-sweep in-process: argv[0] is the program name. The table goes to `out` (or the --output
/// file), the best-k line, notes and errors to `err`. Returns the exit code: 0, or 2 for bad
/// input (then nothing is written: no output, plot or folds file).
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace knn::sweep
