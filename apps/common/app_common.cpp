#include "app_common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <omp.h>
#include <unistd.h>

#include "knn/error.hpp"
#include "knn/io.hpp"

namespace knn::app {

namespace {
bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  errno = 0;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return errno != ERANGE;
}
}  // namespace

std::size_t parse_count(const std::string& option, const std::string& text, std::size_t min_value) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v) || v < min_value)
    throw option_error(option, quote(text) + " is not a whole number >= " + std::to_string(min_value));
  return static_cast<std::size_t>(v);
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v)) throw option_error("seed", quote(text) + " is not a whole number from 0 to 2^64-1");
  return v;
}

char parse_delimiter(const std::string& text) {
  if (text == "\\t" || text == "tab") return '\t';
  if (text.size() != 1 || text[0] == '"' || text[0] == '\n' || text[0] == '\r')
    throw option_error("delimiter", quote(text) + " is not a single character (use \\t or tab for a tab)");
  return text[0];
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const std::size_t e = text.find(',', b);
    out.push_back(text.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::vector<std::size_t> parse_k_list(const std::string& text) {
  std::vector<std::size_t> ks;
  const auto bad = [&](const std::string& why) { return option_error("k", quote(text) + ": " + why); };
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::size_t b = 0;
    for (;;) {
      const std::size_t e = text.find(':', b);
      parts.push_back(text.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    if (parts.size() < 2 || parts.size() > 3) throw bad("expected start:stop or start:stop:step");
    std::uint64_t start = 0, stop = 0, step = 1;
    if (!parse_u64(parts[0], start) || !parse_u64(parts[1], stop) || (parts.size() == 3 && !parse_u64(parts[2], step)))
      throw bad("start, stop and step must be whole numbers");
    if (start < 1) throw bad("k starts at 1");
    if (stop < start) throw bad("stop is smaller than start");
    if (step < 1) throw bad("step must be at least 1");
    if ((stop - start) / step >= 1000000) throw bad("more than a million k values");
    // Counted, not `k <= stop; k += step`: near 2^64 that sum wraps and the loop never ends.
    const std::uint64_t count = (stop - start) / step + 1;
    for (std::uint64_t i = 0; i < count; ++i) ks.push_back(static_cast<std::size_t>(start + i * step));
  } else {
    for (const auto& p : split_list(text)) {
      std::uint64_t v = 0;
      if (!parse_u64(p, v) || v < 1)
        throw option_error("k", quote(text) + (p == text ? "" : ": " + quote(p)) + " is not a whole number >= 1");
      ks.push_back(static_cast<std::size_t>(v));
    }
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

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

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!(v == v) || v == 1.0 / 0.0 || v == -1.0 / 0.0) return "null";
  return format_double(v);
}

namespace {
// cxxopts quotes the argument in its messages with typographic quotes and leaves its bytes raw.
// Returns the message with each such quoted text in the project's escaped ASCII quotes, or with
// `only_first`, just the first quoted text.
std::string requote(const std::string& message, bool only_first) {
  static const std::string open = "\xe2\x80\x98", close = "\xe2\x80\x99";
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t b = message.find(open, pos);
    const std::size_t e = b == std::string::npos ? b : message.find(close, b + open.size());
    if (e == std::string::npos) break;
    const std::string quoted = quote(std::string_view(message).substr(b + open.size(), e - b - open.size()));
    if (only_first) return quoted;
    out += message.substr(pos, b - pos) + quoted;
    pos = e + close.size();
  }
  if (only_first) return quote(message);
  out += message.substr(pos);
  // Whatever else is left outside printable ASCII is escaped too.
  std::string clean;
  for (unsigned char c : out) {
    if (c >= 0x20 && c < 0x7f) clean += static_cast<char>(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      clean += buf;
    }
  }
  return clean;
}
}  // namespace

cxxopts::ParseResult parse_arguments(cxxopts::Options& options, int argc, const char* const* argv,
                                     const std::string& help_hint) {
  // The parser knows one-letter names only as short options: --k becomes -k.
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--k") args[i] = "-k";
    else if (args[i].rfind("--k=", 0) == 0) args[i] = "-k" + args[i].substr(4);
  }
  std::vector<const char*> av;
  for (const auto& a : args) av.push_back(a.c_str());
  try {
    return options.parse(static_cast<int>(av.size()), av.data());
  } catch (const cxxopts::exceptions::no_such_option&) {
    // Its own message has typographic quotes and no context: find the argument and quote it.
    std::string unknown = "?";
    options.allow_unrecognised_options();
    try {
      const auto r = options.parse(static_cast<int>(av.size()), av.data());
      for (const auto& u : r.unmatched())
        if (u.size() > 1 && u[0] == '-') {
          unknown = u;
          break;
        }
    } catch (const cxxopts::exceptions::exception&) {
    }
    throw Error("unknown option " + quote(unknown) + " (" + help_hint + ")");
  } catch (const cxxopts::exceptions::missing_argument&) {
    std::string last = "?";
    for (std::size_t i = av.size(); i-- > 1;)
      if (av[i][0] == '-' && av[i][1] != '\0') {
        last = std::string(av[i]) == "-k" ? "--k" : av[i];
        break;
      }
    throw Error("option " + quote(last) + " needs a value");
  } catch (const cxxopts::exceptions::invalid_option_syntax& e) {
    // E.g. "--weig\x98ghts": no option can be read from it.
    throw Error("argument " + requote(e.what(), true) + " is not an option (" + help_hint + ")");
  } catch (const cxxopts::exceptions::exception& e) {
    throw Error(requote(e.what(), false));
  }
}

std::string option_name(std::string_view parameter) {
  // The library's parameters whose option is spelled otherwise; the rest share their names.
  static const std::pair<std::string_view, std::string_view> renamed[] = {
      {"scaling", "scale"}, {"device_memory_budget", "gpu-memory"}, {"ks", "k"}, {"path", "train"}};
  for (const auto& [from, to] : renamed)
    if (parameter == from) return "--" + std::string(to);
  return "--" + std::string(parameter);
}

Error option_error(std::string_view option, std::string_view what) {
  return Error("option --" + std::string(option) + ": " + std::string(what));
}

std::string error_line(const Error& e) {
  return e.message(option_name, [](std::string_view p) { return "option " + option_name(p); });
}

int guarded(const char* prog, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    err << prog << ": error: " << error_line(e) << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    err << prog << ": error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    err << prog << ": error: " << e.what() << '\n';
    return 1;
  }
}

void add_run_options(cxxopts::Options& o) {
  // clang-format off
  o.add_options("run")
    ("device", "auto | cpu | cuda (auto: the GPU when there is one)", cxxopts::value<std::string>()->default_value("auto"), "D")
    ("threads", "CPU threads (default: all cores)", cxxopts::value<std::string>(), "N")
    ("precision", "GPU candidate pass: fp32, or tf32 on tensor cores; results are exact either way", cxxopts::value<std::string>()->default_value("fp32"), "P")
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
