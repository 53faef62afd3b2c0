#pragma once
// Errors as the apps show them: the library's parameters spelled as the apps' options, and one
// line "PROG: error: ..." with exit code 2.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "knn/error.hpp"

namespace knn::app {

/// "option --NAME: WHAT", an error in the value of a program's option.
Error option_error(std::string_view option, std::string_view what);

/// The command-line option of a library parameter ("scaling" -> "--scale").
std::string option_name(std::string_view parameter);

/// The error's message with the library's parameters spelled as options: Error::parameter's
/// "parameter k: ..." becomes "option --k: ...".
std::string error_line(const Error& e);

/// Runs an app's body: knn::Error and out-of-memory become one line "PROG: error: ..." and exit
/// code 2, anything unexpected exit code 1.
int guarded(const char* prog, std::ostream& err, const std::function<int()>& body);

}  // namespace knn::app
