// What an evaluation scores against: class ids or numeric targets of every row.
#include "core/evaluation/eval_context.hpp"

namespace knn::detail {

Targets read_targets(const Dataset& data, const Dataset* test, Task task, const Placement& placement) {
  Targets t;
  if (task == Task::classify) {
    std::vector<std::string> labels = data.labels;
    if (test) labels.insert(labels.end(), test->labels.begin(), test->labels.end());
    t.encoder.fit(placement.label_union(std::move(labels)));
    t.classes = placement.gather(t.encoder.encode(data.labels));
    if (test) {
      const auto c = t.encoder.encode(test->labels);
      t.classes.insert(t.classes.end(), c.begin(), c.end());
    }
  } else {
    placement.collective([&] { t.values = numeric_targets(data); });
    t.values = placement.gather(std::move(t.values));
    if (test) {
      const auto y = numeric_targets(*test);
      t.values.insert(t.values.end(), y.begin(), y.end());
    }
  }
  return t;
}

}  // namespace knn::detail
