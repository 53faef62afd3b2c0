// Fuzz target: the CSV loader. The first byte picks the options (header, delimiter, label
// column, ignored columns); the rest is the file. A load either succeeds with a consistent,
// finite data set, or throws knn::Error with a one-line message. The same bytes are then read
// as a query file against a small training set.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"

namespace {

void check_dataset(const knn::Dataset& d, bool labelled) {
  using knn::fuzz::require;
  require(d.size() > 0, "a loaded data set has no rows");
  require(d.features.cols == d.feature_names.size(), "feature names and columns differ");
  require(d.feature_columns.size() == d.dims(), "feature column map has the wrong size");
  require(d.lines.size() == d.size(), "one line number per row");
  if (labelled) require(d.labels.size() == d.size(), "one label per row");
  for (std::size_t i = 1; i < d.lines.size(); ++i) require(d.lines[i] > d.lines[i - 1], "line numbers increase");
  require(d.features.values.size() == d.size() * d.dims(), "matrix size");
  for (std::size_t i = 0; i < d.features.values.size(); ++i) require(std::isfinite(d.features.values[i]), "a feature is not finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string path = knn::fuzz::write_scratch("input.csv", bytes);

  knn::CsvOptions options;
  options.header = (mode & 1) == 0;
  static const char delimiters[] = {',', ';', '\t', ' '};
  options.delimiter = delimiters[(mode >> 1) & 3];
  static const char* const labels[] = {"", "0", "-1", "label"};
  options.label = labels[(mode >> 3) & 3];
  if (mode & 0x20) options.ignore = {"0"};

  try {
    const knn::Dataset d = knn::load_csv(path, options);
    check_dataset(d, true);
    if (mode & 0x40) {
      try {
        const auto targets = knn::numeric_targets(d);
        for (double t : targets) knn::fuzz::require(std::isfinite(t), "a regression target is not finite");
      } catch (const knn::Error& e) {
        knn::fuzz::check_message(e.what());
      }
    }
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
  }

  // The same bytes as a query file, matched to a fixed training file's columns.
  static const knn::Dataset train = [] {
    knn::CsvOptions o;
    return knn::load_csv(knn::fuzz::write_scratch("train.csv", "a,b,label\n0,1,x\n2,3,y\n"), o);
  }();
  knn::CsvOptions q;
  q.header = options.header;
  q.delimiter = options.delimiter;
  try {
    const knn::Dataset d = knn::load_query_csv(path, q, train);
    check_dataset(d, false);
    knn::fuzz::require(d.dims() == train.dims(), "query columns differ from the training columns");
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
  }
  return 0;
}
