#include "errors.hpp"

#include <new>
#include <utility>

namespace knn::app {

Error option_error(std::string_view option, std::string_view what) {
  return Error("option --" + std::string(option) + ": " + std::string(what));
}

std::string option_name(std::string_view parameter) {
  // The library's parameters whose option is spelled otherwise; the rest share their names.
  static const std::pair<std::string_view, std::string_view> renamed[] = {
      {"scaling", "scale"}, {"device_memory_budget", "gpu-memory"}, {"ks", "k"}, {"path", "train"},
      {"na_values", "na-values"}, {"drop_missing", "drop-missing"}, {"skip_lines", "skip-lines"}};
  for (const auto& [from, to] : renamed)
    if (parameter == from) return "--" + std::string(to);
  return "--" + std::string(parameter);
}

std::string error_line(const Error& e) {
  return e.message(option_name, [](std::string_view p) { return "option " + option_name(p); });
}

int guarded(const char* prog, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    err << prog << ": error: " << error_line(e) << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    err << prog << ": error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    err << prog << ": error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace knn::app
