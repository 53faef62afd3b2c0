#include <memory>

#include "data.hpp"
#include "errors.hpp"
#include "knn/model.hpp"
#include "subcommands.hpp"

namespace knn::cli {

std::string fit(const cxxopts::ParseResult& r, const Settings& s, std::ostream& err) {
  if (s.output.empty()) throw app::option_error("output", "is required by knn-cli fit: the model file to write (-o MODEL)");
  if (s.output == "-") throw app::option_error("output", "a model file is binary: give a file name, not standard output (-)");
  const Dataset train = load_train(r, s, "fit");
  std::shared_ptr<const KnnModel> model;
  std::string classes;
  if (s.task == Task::classify) {
    app::check_guessed_task(train, s.task_given, s.label_given, s.params.backend.comm.get());
    const auto m = fit_model<KnnClassifier>(s, train);
    classes = ", " + std::to_string(m->classes().size()) + (m->classes().size() == 1 ? " class" : " classes");
    model = m;
  } else {
    model = fit_model<KnnRegressor>(s, train);
  }
  model->save(s.output);
  const std::size_t width = model->preprocessor().width();
  err << "wrote " << s.output << ": " << to_string(s.task) << ", " << train.all_rows() << " rows of " << train.source << ", "
      << train.dims() << (train.dims() == 1 ? " feature (" : " features (") << width << (width == 1 ? " column" : " columns")
      << " once encoded)" << classes << ", k " << s.params.k << '\n';
  return "";
}

}  // namespace knn::cli
