// A task left to the default must not silently turn a regression target into hundreds of classes.
#include <cmath>
#include <set>

#include "distributed/gather.hpp"
#include "knn/error.hpp"
#include "knn/evaluation.hpp"

namespace knn {

void check_class_labels(const Dataset& data, bool label_given, const Communicator* comm) {
  constexpr std::size_t kMostClasses = 20;
  std::set<std::string> distinct(data.labels.begin(), data.labels.end());
  distinct.erase("");
  std::vector<std::string> labels(distinct.begin(), distinct.end());
  if (distributed(comm)) labels = detail::all_labels(*comm, labels);
  bool numbers = !labels.empty(), whole = true;
  for (const auto& s : labels) {
    const auto v = label_number(s, data.options.decimal);
    if (!v) {
      numbers = false;
      break;
    }
    whole = whole && *v == std::floor(*v);
  }
  if (!numbers || (whole && labels.size() <= kMostClasses)) return;
  const std::string what = whole ? std::to_string(labels.size()) + " distinct numbers" : "numbers that are not whole";
  throw Error::at(data.source, 0, 0,
                  "the label column " + quote(data.label_name) + " holds " + what + ", like a regression target: give " +
                      param("task") + " regress (or " + param("task") + " classify to keep them as classes)" +
                      (label_given ? "" : ", or name the label column with " + param("label")));
}

}  // namespace knn
