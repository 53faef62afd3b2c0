#include "output_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace knn::app {

std::string format_double(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string csv_field(std::string_view text, char delimiter) {
  const bool needs = text.find_first_of(std::string{delimiter, '"', '\n', '\r'}) != std::string_view::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!needs) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

CsvWriter& CsvWriter::raw(std::string_view field) {
  if (in_row_) text_ += ',';
  text_ += field;
  in_row_ = true;
  return *this;
}

CsvWriter& CsvWriter::text(std::string_view field) { return raw(csv_field(field)); }

CsvWriter& CsvWriter::number(double v) { return raw(format_double(v)); }

CsvWriter& CsvWriter::end_row() {
  text_ += '\n';
  in_row_ = false;
  return *this;
}

namespace {

// nlohmann's own dump escapes \b and \f by name and refuses bytes that are not UTF-8 (a label
// from a Latin-1 file): the apps write every byte of a label as it is.
void append_string(const std::string& s, std::string& out) {
  out += '"';
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
  out += '"';
}

class JsonLayout {
 public:
  explicit JsonLayout(std::initializer_list<std::string_view> line_breaks) : breaks_(line_breaks.begin(), line_breaks.end()) {}

  // `depth`: how many containers hold `v`; `path`: its members' path prefix ("" at the top,
  // "settings/" inside member "settings"), or nullptr inside an array.
  void write(const Json& v, std::size_t depth, const std::string* path, std::string& out) const {
    switch (v.type()) {
      case Json::value_t::object: {
        out += '{';
        for (auto it = v.begin(); it != v.end(); ++it) {
          const std::string member = path ? *path + it.key() : std::string();
          if (it != v.begin()) out += path && breaks_before(member) ? ",\n" + std::string(depth + 1, ' ') : std::string(", ");
          append_string(it.key(), out);
          out += ": ";
          if (path) {
            const std::string inner = member + '/';
            write(it.value(), depth + 1, &inner, out);
          } else {
            write(it.value(), depth + 1, nullptr, out);
          }
        }
        out += '}';
        return;
      }
      case Json::value_t::array: {
        const bool rows = !v.empty() && std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_object(); });
        out += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (rows) out += i ? ",\n  " : "\n  ";
          else if (i) out += ", ";
          write(v[i], depth + 1, nullptr, out);
        }
        if (rows) out += '\n';
        out += ']';
        return;
      }
      case Json::value_t::string: append_string(v.get_ref<const std::string&>(), out); return;
      case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
      case Json::value_t::null: out += "null"; return;
      case Json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
      case Json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
      case Json::value_t::number_float: {
        const double d = v.get<double>();
        out += std::isfinite(d) ? format_double(d) : "null";
        return;
      }
      default: throw std::logic_error("json_text: a value that JSON text cannot hold");
    }
  }

 private:
  bool breaks_before(std::string_view member) const {
    return std::find(breaks_.begin(), breaks_.end(), member) != breaks_.end();
  }
  std::vector<std::string_view> breaks_;
};

}  // namespace

std::string json_text(const Json& doc, std::initializer_list<std::string_view> line_breaks) {
  std::string out;
  const std::string top;
  JsonLayout(line_breaks).write(doc, 0, &top, out);
  out += '\n';
  return out;
}

}  // namespace knn::app
