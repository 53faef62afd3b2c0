#include "arguments.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

#include "knn/error.hpp"

namespace knn::app {

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

cxxopts::ParseResult parse_arguments(cxxopts::Options& options, int argc, const char* const* argv, const std::string& help_hint,
                                     const std::function<std::string(const std::string&)>& elsewhere) {
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
    const std::string where = elsewhere && unknown != "?" ? elsewhere(unknown) : std::string();
    throw Error("unknown option " + quote(unknown) + " (" + (where.empty() ? "" : where + "; ") + help_hint + ")");
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

std::string option_text(const cxxopts::ParseResult& r, const std::string& name) {
  if (r.count(name) || r[name].has_default()) return r[name].as<std::string>();
  return std::string();
}

void no_stray_arguments(const cxxopts::ParseResult& r) {
  if (!r.unmatched().empty()) throw Error("unexpected argument " + quote(r.unmatched().front()) + " (options start with --)");
}

}  // namespace knn::app
