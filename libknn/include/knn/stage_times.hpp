#pragma once
// Wall-clock marks of a run's stages (reading, GPU start-up, fitting, searching, writing), kept
// when the environment variable KNN_STAGE_TIMES is set and printed by the program at its end:
// what a user waits for, stage by stage, without a profiler.
#include <ostream>

namespace knn {

/// Whether marks are kept (KNN_STAGE_TIMES set); false costs nothing.
bool stage_times_on();

/// Records that the stage `name` (a string literal) ended now. Thread-safe.
void stage_done(const char* name);

/// The marks in the order they were made, one line each: the stage, the seconds since the
/// previous mark of the same thread (a thread's first: since the program's first mark), and the
/// absolute time (seconds since the epoch, so that a harness can add the time from its exec() to
/// the first mark).
void print_stage_times(std::ostream& out);

}  // namespace knn
