#pragma once
// Columns named by the user (label, ignore, categorical, numeric, id): by header name, exactly or
// without regard to case where that picks one column, else by 0-based index (negative from the
// end). An unknown name is an error that lists the file's columns and the closest name.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace knn::detail {

/// The file column `spec` names, or nothing where it names none (a name the file lacks, or an
/// index out of range). Throws where a name appears more than once in the header.
std::optional<std::size_t> find_column(const std::string& spec, const std::vector<std::string>& names, bool header,
                                       const std::string& parameter, const std::string& file);

/// find_column, or knn::Error::parameter(parameter, ...) naming the file's columns and the closest.
std::size_t resolve_column(const std::string& spec, const std::vector<std::string>& names, bool header,
                           const std::string& parameter, const std::string& file);

/// Where `name` is among `names`: the one exact match, else the one match without regard to case.
std::optional<std::size_t> match_name(const std::string& name, const std::vector<std::string>& names);

/// " (columns: "a", "b", ...; closest: "x")": the file's columns, cut after 12, and the name
/// nearest `spec` by edit distance without regard to case.
std::string columns_hint(const std::string& spec, const std::vector<std::string>& names);

}  // namespace knn::detail
