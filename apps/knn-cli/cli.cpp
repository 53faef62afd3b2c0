#include "cli.hpp"

#include <string>

#include "arguments.hpp"
#include "errors.hpp"
#include "knn/error.hpp"
#include "knn/search.hpp"
#include "knn/stage_times.hpp"
#include "options.hpp"
#include "output.hpp"
#include "saved_model.hpp"
#include "settings.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

constexpr const char* kUsage =
    "knn-cli: exact k-nearest-neighbour classification and regression on CSV files\n"
    "\n"
    "usage:\n"
    "  knn-cli predict   --train FILE --query FILE [options]   one prediction per query row\n"
    "  knn-cli evaluate  --train FILE [--test FILE | --folds N | --loo] [options]   scores\n"
    "  knn-cli neighbors --train FILE --query FILE [options]   neighbour indices and distances\n"
    "  knn-cli inspect   FILE [--label COLUMN] [options]        columns, types, missing cells, classes\n"
    "  knn-cli fit       --train FILE -o MODEL [options]        a model file: predict and neighbors\n"
    "                    take --model MODEL in place of --train, with the same answers\n"
    "  knn-cli --version | --help | SUBCOMMAND --help\n"
    "\n"
    "example:\n"
    "  knn-cli evaluate --train data/iris.csv -k 5\n";

struct Subcommand {
  const char* name;
  std::string (*run)(const cxxopts::ParseResult&, const Settings&, std::ostream&);
  bool prints = true;  // fit writes a model file, not output
};
constexpr Subcommand kSubcommands[] = {
    {"predict", predict}, {"evaluate", evaluate}, {"neighbors", neighbors}, {"inspect", inspect}, {"fit", fit, false}};

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out_stream, std::ostream& err_stream) {
  app::RankStreams streams(out_stream, err_stream);
  std::ostream& out = streams.out();
  std::ostream& err = streams.err();
  stage_done("start");
  return app::guarded("knn-cli", err, [&]() -> int {
    if (argc < 2) throw Error("no subcommand (expected predict, evaluate, neighbors, inspect or fit; see knn-cli --help)");
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      out << kUsage;
      return 0;
    }
    if (cmd == "--version") {
      out << app::version_line("knn-cli");
      return 0;
    }
    const Subcommand* sub = nullptr;
    for (const auto& s : kSubcommands)
      if (cmd == s.name) sub = &s;
    if (!sub) throw Error("unknown subcommand " + quote(cmd) + " (expected predict, evaluate, neighbors, inspect or fit; see knn-cli --help)");
    auto options = make_options(cmd);
    const cxxopts::ParseResult r = app::parse_arguments(options, argc - 1, argv + 1, "see knn-cli " + cmd + " --help",
                                                        [&](const std::string& arg) { return taken_elsewhere(cmd, arg); });
    if (r.count("help")) {
      out << help_text(cmd);
      return 0;
    }
    app::no_stray_arguments(r);
    if (cmd != "inspect") check_stdin_once(r);
    Settings s = read_settings(r, cmd, err);
    s.params.backend.comm = streams.comm();
    // The GPU's start-up (the CUDA runtime, context and streams) runs while the model or the
    // CSV files are read; a model takes the backend when it is fitted, or, read from a file, once
    // the query file is read (answer_queries).
    if (cmd != "inspect") prepare_backend(s.params.backend);
    stage_done("options");
    if (cmd == "predict" || cmd == "neighbors") {
      read_model(r, s, cmd);
      if (s.model) stage_done("model file read");
    }
    const std::string result = sub->run(r, s, err);
    if (streams.writes() && sub->prints) app::write_output(s.output, result, out);
    stage_done("output written");
    s.notes.print(err);
    print_stage_times(err);
    return 0;
  });
}

}  // namespace knn::cli
