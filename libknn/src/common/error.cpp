#include "knn/error.hpp"

#include <cstdio>

namespace knn {

Error Error::at(std::string_view file, std::size_t line, std::size_t column, std::string_view what) {
  std::string m(file);
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
