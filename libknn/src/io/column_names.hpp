#pragma once
// Columns named by the user (label, ignore, categorical, numeric, id): by header name, exactly or
// without regard to case where that picks one column, else by 0-based index (negative from the
// end). An unknown name is an error that lists the file's columns and the closest name.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace knn::detail {

/// The file column `spec` names, or nothing where it names none (a name the file lacks, or an
/// index out of range). `header_line`: the header row's line of the file (Dataset::header_line),
/// 0 when it has none, so that only indices name columns. Throws where a name appears more than
/// once in the header.
std::optional<std::size_t> find_column(const std::string& spec, const std::vector<std::string>& names, std::size_t header_line,
                                       const std::string& parameter, const std::string& file);

/// find_column, or knn::Error::parameter(parameter, ...) naming the file's columns and the closest,
/// then `hint` (a cause the caller knows of).
std::size_t resolve_column(const std::string& spec, const std::vector<std::string>& names, std::size_t header_line,
                           const std::string& parameter, const std::string& file, const std::string& hint = "");

/// Where `name` is among `names`: the one exact match, else the one match without regard to case.
std::optional<std::size_t> match_name(const std::string& name, const std::vector<std::string>& names);

/// match_name's rule over one list of names, for many lookups (a query file's hundreds of
/// columns, each matched to the training file's): a lookup takes constant time once the index is
/// made. The list must outlive the index.
class NameIndex {
 public:
  explicit NameIndex(const std::vector<std::string>& names);
  explicit NameIndex(std::vector<std::string>&&) = delete;  // it keeps views into the list
  /// match_name(name, names).
  std::optional<std::size_t> match(const std::string& name) const;
  /// The first position after `i` that holds names[i] exactly, if any.
  std::optional<std::size_t> next_same(std::size_t i) const;

 private:
  const std::vector<std::string>* names_;
  std::unordered_map<std::string_view, std::vector<std::size_t>> exact_;        // positions, ascending
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> folded_;  // first position, count
};

/// " (columns: "a", "b", ...; closest: "x")": the file's columns, cut after 12, and the name
/// nearest `spec` by edit distance without regard to case.
std::string columns_hint(const std::string& spec, const std::vector<std::string>& names);

}  // namespace knn::detail
