// Fuzz target: the command lines of knn-cli and k-sweep, run in-process on small files. The
// input's first byte picks the program; the rest is the argument list, one argument per line.
// The words @train, @regress, @query, @test and @tabular stand for fixture files (@tabular: R's
// row names, a text column and missing cells). Every run must end with
// exit code 0, or 2 with one error line; anything thrown past run() aborts.
//
// Kept out: arguments with '/' (the run may only write into its scratch folder, its working
// directory), "-" (standard input would block) and --plot (it starts gnuplot).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "fuzz_common.hpp"
#include "sweep.hpp"

namespace {

void write_fixtures() {
  using knn::fuzz::write_scratch;
  write_scratch("train.csv", "a,b,label\n0,0,x\n1,0,x\n0,1,y\n1,1,y\n2,2,z\n0.5,0.5,x\n");
  write_scratch("regress.csv", "a,b,y\n0,0,1.5\n1,0,2\n0,1,3\n1,1,4\n2,2,8\n");
  write_scratch("query.csv", "a,b\n0.2,0.1\n1.5,1.5\n");
  write_scratch("test.csv", "a,b,label\n0.1,0.1,x\n0.9,1,y\n");
  write_scratch("tabular.csv", "\"\",a,colour,label\n\"1\",0,red,x\n\"2\",NA,blue,x\n\"3\",1,,y\n\"4\",2,red,NA\n\"5\",3,green,y\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // --threads may ask for up to 1024 threads; the fuzzer does not need to start them all.
  ::setenv("OMP_THREAD_LIMIT", "2", 1);
  std::filesystem::current_path(knn::fuzz::scratch());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool sweep = data[0] & 1;
  std::vector<std::string> args{sweep ? "k-sweep" : "knn-cli"};
  std::string cur;
  for (std::size_t i = 1; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      if (cur.find('/') != std::string::npos || cur == "-" || cur.rfind("--plot", 0) == 0) return 0;
      if (cur == "@train" || cur == "@regress" || cur == "@query" || cur == "@test" || cur == "@tabular")
        cur = (knn::fuzz::scratch() / (cur.substr(1) + ".csv")).string();
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (args.size() > 40) return 0;
  write_fixtures();
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = sweep ? knn::sweep::run(static_cast<int>(argv.size()), argv.data(), out, err)
                         : knn::cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  const std::string e = err.str();
  if (code == 2) {
    knn::fuzz::require(out.str().empty(), "output written on an error", e);
    // One line: the error (after any notes, which are lines of their own).
    const std::size_t last = e.rfind('\n', e.size() >= 2 ? e.size() - 2 : 0);
    const std::string line = e.substr(last == std::string::npos ? 0 : last + 1);
    knn::fuzz::require(line.find(": error: ") != std::string::npos && line.back() == '\n', "no error line", e);
    knn::fuzz::check_message(std::string_view(line).substr(0, line.size() - 1));
  } else {
    knn::fuzz::require(code == 0, "exit code other than 0 or 2", e);
  }
  return 0;
}
