#pragma once
// k-sweep's output files (the table, the plot, the folds): checked before any work, so that the
// writes at the end do not fail after some of them were made, and written each whole.
#include <ostream>
#include <string>
#include <string_view>

namespace knn::sweep {

/// The file of option `option` must not be a folder, and its folder must exist and be writable;
/// "-" (standard output) always passes.
void check_destination(const std::string& option, const std::string& path);

/// Whether two destinations name the same file.
bool same_file(const std::string& a, const std::string& b);

/// Writes one result: "-" to `out`; an existing file that is not a regular file (/dev/null, a
/// pipe) directly, since renaming a temporary file over it would replace it; otherwise whole or
/// not at all.
void write_result(const std::string& path, std::string_view content, std::ostream& out);

}  // namespace knn::sweep
