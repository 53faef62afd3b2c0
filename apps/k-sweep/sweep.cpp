#include "sweep.hpp"

#include <string>

#include "arguments.hpp"
#include "data_notes.hpp"
#include "destinations.hpp"
#include "errors.hpp"
#include "folds.hpp"
#include "knn/communicator.hpp"
#include "options.hpp"
#include "output.hpp"
#include "plot.hpp"
#include "progress.hpp"
#include "settings.hpp"
#include "table.hpp"

namespace knn::sweep {

int run(int argc, const char* const* argv, std::ostream& out_stream, std::ostream& err_stream) {
  app::RankStreams streams(out_stream, err_stream);
  std::ostream& out = streams.out();
  std::ostream& err = streams.err();
  return app::guarded(kProg, err, [&]() -> int {
    auto options = make_options();
    const char* const fallback[] = {kProg};
    const cxxopts::ParseResult r =
        argc > 0 ? app::parse_arguments(options, argc, argv, "see k-sweep --help") : app::parse_arguments(options, 1, fallback, "see k-sweep --help");
    if (r.count("help")) {
      out << help_text(options);
      return 0;
    }
    if (r.count("version")) {
      out << app::version_line(kProg);
      return 0;
    }
    app::no_stray_arguments(r);

    Settings st = read_settings(r, err);
    const auto& comm = streams.comm();
    st.eval.backend.comm = comm;
    prepare_backend(st.eval.backend);  // the GPU starts up while the CSV files are read
    const Dataset data = load_csv_sharded(st.data_path, st.csv, comm.get());
    check_fillable(data, st.eval.impute, comm);
    if (st.eval.task == Task::classify) app::check_guessed_task(data, st.task_given, st.label_given, comm.get());
    app::DataNotes notes(false);  // a table of scores: no rows for --id to label
    notes.training(data);
    notes.single_row_classes(data, st.eval.folds, st.eval.task);
    Dataset test;
    if (st.eval.folds.kind == FoldSpec::Kind::test) {
      collective(comm.get(), [&] { test = load_query_csv(st.test_path, st.csv, data); });
      st.eval.folds.test = &test;
    }
    app::Progress progress(err, "folds");
    st.eval.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    EvalResult res;
    try {
      res = evaluate(data, st.eval);
    } catch (...) {
      progress.finish();
      throw;
    }
    progress.finish();

    const std::string folds = st.save_folds.empty() ? std::string() : folds_csv(data, st.eval);
    if (!streams.writes()) return 0;
    // Everything is made before anything is written.
    const std::string table = table_text(res, st, data);
    const std::string image = st.plot.empty() ? std::string() : plot_image(res, st);

    if (!st.plot.empty()) write_result(st.plot, image, out);
    if (!st.save_folds.empty()) write_result(st.save_folds, folds, out);
    write_result(st.output, table, out);
    notes.print(err);
    err << best_line(res, st.eval.folds);
    return 0;
  });
}

}  // namespace knn::sweep
