// The evaluation's options: the task's spelling, and the checks made before any search.
#include <string>

#include "core/evaluation/eval_context.hpp"
#include "knn/error.hpp"

namespace knn {

Task parse_task(const std::string& text) {
  if (text == "classify" || text == "classification") return Task::classify;
  if (text == "regress" || text == "regression") return Task::regress;
  throw Error::parameter("task", "unknown task " + quote(text) + " (expected classify or regress)");
}

const char* to_string(Task t) { return t == Task::classify ? "classify" : "regress"; }

namespace detail {

void validate_options(const Dataset& data, const EvalOptions& opt) {
  if (opt.ks.empty()) throw Error::parameter("ks", "no k given");
  for (std::size_t i = 0; i < opt.ks.size(); ++i)
    if (opt.ks[i] < 1 || (i && opt.ks[i] <= opt.ks[i - 1]))
      throw Error::parameter("ks", "k values must be >= 1, ascending and distinct");
  if (opt.weights.empty() || opt.metrics.empty()) throw Error("evaluate: no weights or metric given");
  if (!data.has_labels()) throw Error::at(data.source, 0, 0, "has no label column to score against");
  if (opt.folds.kind != FoldSpec::Kind::test) return;
  const Dataset* test = opt.folds.test;
  if (!test) throw Error::parameter("test", "no test data given");
  if (!test->has_labels()) throw Error::at(test->source, 0, 0, "has no label column " + quote(data.label_name) + " to score against");
  if (!test->missing_labels.empty()) {
    const std::size_t row = test->missing_labels.front();
    throw Error::at(test->source, test->lines.at(row), test->label_column + 1,
                    "missing label in column " + quote(test->label_name) + " (" + std::to_string(test->missing_labels.size()) +
                        " test rows have none); every test row needs its label");
  }
  if (test->dims() != data.dims())
    throw Error::at(test->source, 0, 0, "has " + std::to_string(test->dims()) + " features, " + data.source + " has " +
                                           std::to_string(data.dims()));
}

void check_k_fits(const EvalOptions& opt, std::size_t smallest_train) {
  const std::size_t kmax = opt.ks.back();
  if (kmax > smallest_train)
    throw Error::parameter("ks", quote(std::to_string(kmax)) + " is larger than the " + std::to_string(smallest_train) +
                                 " training rows of " + (opt.folds.kind == FoldSpec::Kind::test ? "the training file" : "the smallest fold") +
                                 "; the largest allowed k is " + std::to_string(smallest_train));
}

}  // namespace detail
}  // namespace knn
