#pragma once
// Progress lines of long runs (the folds of an evaluation).
#include <cstddef>
#include <ostream>
#include <string>

namespace knn::app {

/// Progress on stderr, only when it is a terminal and the caller's error stream is stderr.
class Progress {
 public:
  Progress(std::ostream& err, std::string what);
  void update(std::size_t done, std::size_t total);
  /// Clears the line, so that what follows starts at its beginning.
  void finish();

 private:
  std::ostream& err_;
  std::string what_;
  bool active_;
  bool shown_ = false;
};

}  // namespace knn::app
