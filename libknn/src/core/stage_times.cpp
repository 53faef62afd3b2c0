// Stage marks (knn/stage_times.hpp).
#include "knn/stage_times.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/environment.hpp"

namespace knn {

namespace {

struct Mark {
  const char* name;
  std::thread::id thread;
  double at;  // seconds since the epoch
};

struct Log {
  std::mutex mutex;
  std::vector<Mark> marks;
};

Log& stage_log() {
  static Log l;
  return l;
}

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool stage_times_on() {
  static const bool on = detail::stage_times_requested();
  return on;
}

void stage_done(const char* name) {
  if (!stage_times_on()) return;
  // Timed under the lock, so that the marks are in time order and the first is the earliest.
  const std::lock_guard<std::mutex> lock(stage_log().mutex);
  stage_log().marks.push_back({name, std::this_thread::get_id(), epoch_seconds()});
}

void print_stage_times(std::ostream& out) {
  if (!stage_times_on()) return;
  const std::lock_guard<std::mutex> lock(stage_log().mutex);
  const std::vector<Mark>& marks = stage_log().marks;
  for (std::size_t i = 0; i < marks.size(); ++i) {
    // A thread's first mark counts from the program's first: a thread started early (the GPU's
    // start-up) shows how long its first stage took.
    double since = marks[i].at - marks[0].at;
    for (std::size_t j = i; j-- > 0;)
      if (marks[j].thread == marks[i].thread) {
        since = marks[i].at - marks[j].at;
        break;
      }
    char line[160];
    std::snprintf(line, sizeof line, "stage %-28s %9.4f s  at %.6f\n", marks[i].name, since, marks[i].at);
    out << line;
  }
}

}  // namespace knn
