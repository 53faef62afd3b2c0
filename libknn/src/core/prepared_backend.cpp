// prepare_backend(): one backend made ahead of its use, on a thread of its own, for the next
// make_backend() that asks for the same.
#include "core/prepared_backend.hpp"

#include <chrono>
#include <future>
#include <mutex>

#include "knn/stage_times.hpp"

namespace knn {

namespace {

// A backend prepared and never taken (a program that stopped at an error in its input) is waited
// for at exit, so that no thread is still loading CUDA while the process ends, and then kept: its
// GPU context is the driver's to free with the process, not a destructor's that might run after
// the CUDA libraries' own.
std::shared_ptr<const Backend>* kept_at_exit = nullptr;

struct Slot {
  std::mutex mutex;
  bool pending = false;
  BackendOptions options;
  std::future<std::shared_ptr<const Backend>> backend;
  ~Slot() {
    if (!pending) return;
    try {
      kept_at_exit = new std::shared_ptr<const Backend>(backend.get());
    } catch (...) {
      // Its error had no one to report to.
    }
  }
};

Slot& slot() {
  static Slot s;
  return s;
}

// Whether two option sets make the same backend; the notice callback is not compared.
bool same_backend(const BackendOptions& a, const BackendOptions& b) {
  return a.device == b.device && a.threads == b.threads && a.precision == b.precision &&
         a.device_memory_budget == b.device_memory_budget && a.comm == b.comm;
}

}  // namespace

void prepare_backend(const BackendOptions& options) {
  if (options.device == Device::cpu) return;
  Slot& s = slot();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.pending) return;  // one at a time: the first stays until it is taken
  s.options = options;
  s.backend = std::async(std::launch::async, [options] {
    std::shared_ptr<const Backend> b = detail::make_backend_now(options);
    stage_done("backend made (libraries)");
    b->warm_up();
    stage_done("backend warmed (context)");
    return b;
  });
  s.pending = true;
}

namespace detail {

std::shared_ptr<const Backend> take_prepared_backend(const BackendOptions& options) {
  Slot& s = slot();
  std::future<std::shared_ptr<const Backend>> ready;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.pending || !same_backend(s.options, options)) return nullptr;
    s.pending = false;
    ready = std::move(s.backend);
  }
  return ready.get();
}

bool prepared_backend_starting(const BackendOptions& options) {
  Slot& s = slot();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.pending && same_backend(s.options, options) &&
         s.backend.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

}  // namespace detail
}  // namespace knn
