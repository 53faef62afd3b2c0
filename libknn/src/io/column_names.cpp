#include "io/column_names.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "knn/error.hpp"

namespace knn::detail {

namespace {

// Case as names are compared without it: ASCII letters, as std::tolower in the "C" locale that
// the library runs in, without a call per byte.
char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(const std::string& s) {
  std::string out(s);
  for (char& c : out) c = fold(c);
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::size_t> match_name(const std::string& name, const std::vector<std::string>& names) {
  return NameIndex(names).match(name);
}

NameIndex::NameIndex(const std::vector<std::string>& names) : names_(&names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    exact_[names[i]].push_back(i);
    auto [at, fresh] = folded_.try_emplace(lower(names[i]), i, 0);
    (void)fresh;
    ++at->second.second;
  }
}

std::optional<std::size_t> NameIndex::match(const std::string& name) const {
  if (const auto e = exact_.find(name); e != exact_.end()) return e->second.front();
  if (const auto f = folded_.find(lower(name)); f != folded_.end() && f->second.second == 1) return f->second.first;
  return std::nullopt;
}

std::optional<std::size_t> NameIndex::next_same(std::size_t i) const {
  const std::vector<std::size_t>& at = exact_.at((*names_)[i]);
  const auto next = std::upper_bound(at.begin(), at.end(), i);
  if (next == at.end()) return std::nullopt;
  return *next;
}

std::string columns_hint(const std::string& spec, const std::vector<std::string>& names) {
  constexpr std::size_t kListed = 12;
  std::string out = " (columns: ";
  for (std::size_t i = 0; i < names.size() && i < kListed; ++i) out += (i ? ", " : "") + quote(names[i]);
  if (names.size() > kListed) out += ", ... " + std::to_string(names.size()) + " in all";
  std::size_t best = names.size(), best_d = 0;
  const std::string low = lower(spec);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    const std::size_t d = edit_distance(low, lower(names[i]));
    if (best == names.size() || d < best_d) best = i, best_d = d;
  }
  // A name that shares too little with the one given is no suggestion.
  if (best < names.size() && best_d <= std::max<std::size_t>(2, spec.size() / 2)) out += "; closest: " + quote(names[best]);
  return out + ")";
}

std::optional<std::size_t> find_column(const std::string& spec, const std::vector<std::string>& names, std::size_t header_line,
                                       const std::string& parameter, const std::string& file) {
  if (header_line) {
    const auto count = static_cast<std::size_t>(std::count(names.begin(), names.end(), spec));
    if (count > 1)
      throw Error::at(file, header_line, 0, "column name " + quote(spec) + " given to " + param(parameter) + " appears " +
                                      std::to_string(count) + " times in the header");
    if (const auto found = match_name(spec, names)) return found;
  }
  const char* b = spec.c_str();
  char* e = nullptr;
  errno = 0;
  const long long v = std::strtoll(b, &e, 10);
  if (spec.empty() || *e != '\0' || errno == ERANGE) return std::nullopt;
  const auto n = static_cast<long long>(names.size());
  const long long idx = v < 0 ? n + v : v;
  if (idx < 0 || idx >= n) return std::nullopt;
  return static_cast<std::size_t>(idx);
}

std::size_t resolve_column(const std::string& spec, const std::vector<std::string>& names, std::size_t header_line,
                           const std::string& parameter, const std::string& file, const std::string& hint) {
  if (const auto found = find_column(spec, names, header_line, parameter, file)) return *found;
  const char* b = spec.c_str();
  char* e = nullptr;
  errno = 0;
  (void)std::strtoll(b, &e, 10);
  const auto n = names.size();
  if (!spec.empty() && *e == '\0' && errno != ERANGE)
    throw Error::parameter(parameter, "column index " + quote(spec) + " is out of range for " + file + " (" +
                                          std::to_string(n) + " columns: 0.." + std::to_string(n - 1) + " or -" +
                                          std::to_string(n) + "..-1)");
  throw Error::parameter(parameter, "no column named " + quote(spec) + " in " + file + columns_hint(spec, names) + hint);
}

}  // namespace knn::detail
