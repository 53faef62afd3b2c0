#include "progress.hpp"

#include <unistd.h>

#include <iostream>
#include <utility>

namespace knn::app {

Progress::Progress(std::ostream& err, std::string what)
    : err_(err), what_(std::move(what)), active_(&err == &std::cerr && ::isatty(2) == 1) {}

void Progress::update(std::size_t done, std::size_t total) {
  if (!active_) return;
  err_ << '\r' << what_ << ' ' << done << '/' << total << std::flush;
  shown_ = true;
}

void Progress::finish() {
  if (active_ && shown_) err_ << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace knn::app
