#pragma once
// Running knn-cli and k-sweep in tests: in-process through their run() functions, or as a
// subprocess with stdout and stderr captured apart.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace knn::test {

struct AppResult {
  int code = -1;
  std::string out, err;  // err without the documented no-GPU fallback note
};

inline std::ostream& operator<<(std::ostream& os, const AppResult& r) {
  return os << "exit code " << r.code << "\n--- stdout ---\n" << r.out << "--- stderr ---\n" << r.err << "---";
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

using AppMain = int (*)(int, const char* const*, std::ostream&, std::ostream&);

/// In-process: argv[0] is `name`, then `args`.
inline AppResult run_app(AppMain app, const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> all{name};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : all) argv.push_back(a.c_str());
  std::ostringstream out, err;
  AppResult r;
  r.code = app(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = without_fallback_note(err.str());
  return r;
}

/// As a subprocess: `shell_prefix` (e.g. "cat f |") then `program` with `args`; without a prefix
/// standard input is /dev/null.
inline AppResult run_process(const std::string& program, const std::vector<std::string>& args,
                             const std::string& shell_prefix = "") {
  static int counter = 0;
  const std::string tag = std::to_string(++counter);
  const std::string out = (temp_dir() / ("proc_out_" + tag)).string();
  const std::string err = (temp_dir() / ("proc_err_" + tag)).string();
  std::string cmd = shell_prefix + " " + shell_quote(program);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(out) + " 2>" + shell_quote(err);
  if (shell_prefix.empty()) cmd += " </dev/null";
  const int status = std::system(cmd.c_str());
  AppResult r;
  r.code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = without_fallback_note(read_file(err));
  return r;
}

}  // namespace knn::test
