#include "knn/error.hpp"

#include <cstdio>

namespace knn {

namespace {
// A file name as given, but with bytes outside printable ASCII escaped as in quote(), so that the
// message stays one printable line whatever the name; an empty name shows as "".
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
}  // namespace

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

Error Error::option(std::string_view name, std::string_view what) {
  std::string m = "option --";
  m += name;
  m += ": ";
  m += what;
  return Error(m);
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
