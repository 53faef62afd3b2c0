#include "knn/error.hpp"

#include <cstdio>
#include <utility>

namespace knn {

std::string printable_name(std::string_view file) {
  if (file.empty()) return "\"\"";
  std::string out;
  for (unsigned char c : file) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace {

// param() marks a name with two control bytes that quote() and printable_name() never leave in
// a message, so the marks cannot be forged by a quoted value or a file name.
constexpr char kOpen = '\x01', kClose = '\x02';

std::string spelled(std::string_view raw, const std::function<std::string(std::string_view)>& spell) {
  std::string out;
  std::size_t at = 0;
  while (at < raw.size()) {
    const std::size_t open = raw.find(kOpen, at);
    const std::size_t close = open == std::string_view::npos ? open : raw.find(kClose, open);
    if (close == std::string_view::npos) {
      out += raw.substr(at);
      break;
    }
    out += raw.substr(at, open - at);
    out += spell(raw.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  return out;
}

std::string as_is(std::string_view name) { return std::string(name); }
std::string parameter_subject(std::string_view name) { return "parameter " + std::string(name); }
}  // namespace

Error::Error(const std::string& message) : Error(std::string(), message) {}

Error::Error(std::string parameter, std::string raw)
    : std::runtime_error(spelled(parameter.empty() ? raw : parameter_subject(parameter) + ": " + raw, as_is)),
      parameter_(std::move(parameter)),
      raw_(std::move(raw)) {}

Error Error::at(std::string_view file, std::size_t line, std::size_t column, std::string_view what) {
  std::string m = printable_name(file);
  if (line > 0) {
    m += ':' + std::to_string(line);
    if (column > 0) m += ':' + std::to_string(column);
  }
  m += ": ";
  m += what;
  return Error(m);
}

Error Error::parameter(std::string_view name, std::string_view what) { return Error(std::string(name), std::string(what)); }

std::string Error::message(const std::function<std::string(std::string_view)>& spell,
                           const std::function<std::string(std::string_view)>& subject) const {
  if (parameter_.empty()) return spelled(raw_, spell);
  return subject(parameter_) + ": " + spelled(raw_, spell);
}

std::string param(std::string_view name) {
  std::string m(1, kOpen);
  m += name;
  m += kClose;
  return m;
}

std::string quote(std::string_view value) {
  constexpr std::size_t limit = 40;
  std::string out = "\"";
  std::size_t shown = 0;
  for (unsigned char c : value) {
    if (shown == limit) {
      out += "...";
      break;
    }
    ++shown;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace knn
