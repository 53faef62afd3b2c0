#include "run_options.hpp"

#include <omp.h>

#include <string>

#include "errors.hpp"
#include "option_values.hpp"

namespace knn::app {

void add_run_options(cxxopts::Options& o) {
  // clang-format off
  o.add_options("run")
    ("device", "auto | cpu | cuda (auto: the GPU when there is one)", cxxopts::value<std::string>()->default_value("auto"), "D")
    ("threads", "CPU threads (default: all cores)", cxxopts::value<std::string>(), "N")
    ("precision", "GPU candidate pass: auto (the faster for the data's shape), fp32, or tf32 on tensor cores; results are exact either way", cxxopts::value<std::string>()->default_value("auto"), "P")
    ("gpu-memory", "MiB of GPU memory the search may use, training rows included; training sets larger than that are searched in parts (default: 80% of what is free)", cxxopts::value<std::string>(), "MIB");
  // clang-format on
}

BackendOptions run_options(const cxxopts::ParseResult& r, std::ostream& err) {
  BackendOptions b;
  b.device = parse_device(r["device"].as<std::string>());
  if (r.count("threads")) {
    const std::string text = r["threads"].as<std::string>();
    const std::size_t threads = parse_count("threads", text, 1);
    if (threads > 1024) throw option_error("threads", quote(text) + " is more than 1024");
    b.threads = static_cast<int>(threads);
    omp_set_num_threads(b.threads);
  }
  b.precision = parse_precision(r["precision"].as<std::string>());
  if (r.count("gpu-memory")) {
    const std::size_t mib = parse_count("gpu-memory", r["gpu-memory"].as<std::string>(), 1);
    if (mib > (std::size_t{1} << 30)) throw option_error("gpu-memory", quote(r["gpu-memory"].as<std::string>()) + " MiB is more than 1 PiB");
    b.device_memory_budget = mib << 20;
  }
  b.notice = [&err](const std::string& line) { err << "note: " << line << '\n'; };
  return b;
}

}  // namespace knn::app
