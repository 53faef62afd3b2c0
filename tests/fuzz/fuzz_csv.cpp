// Fuzz target: the CSV loader and the preprocessing fitted on what it loads. The first two bytes
// pick the options (header, delimiter, label column, ignored columns, decimal mark; missing-value
// tokens, column types, an identifier column, dropped rows, lenient loading, the imputation); the
// rest is the file. A load either succeeds with a consistent data set (numbers finite, categories valid
// level indices, missing cells NaN) whose preprocessing gives finite rows or one error line, or
// throws knn::Error with a one-line message. The same bytes are then read as a query file
// against a small training set.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/preprocess.hpp"

namespace {

void check_values(const knn::Dataset& d, bool dropped_missing) {
  using knn::fuzz::require;
  require(d.feature_types.size() == d.dims() && d.levels.size() == d.dims(), "one type and level list per feature");
  for (std::size_t f = 0; f < d.dims(); ++f) {
    const auto& lv = d.levels[f];
    for (std::size_t l = 1; l < lv.size(); ++l) require(lv[l - 1] < lv[l], "levels sorted and distinct");
    for (std::size_t i = 0; i < d.size(); ++i) {
      const float v = d.features(i, f);
      if (std::isnan(v)) {
        require(!dropped_missing, "a missing cell left after its row was to be dropped");
        continue;
      }
      require(std::isfinite(v), "a feature is infinite");
      if (d.feature_types[f] == knn::ColumnType::categorical)
        require(v >= 0 && v == std::floor(v) && static_cast<std::size_t>(v) < lv.size(), "a category code out of its levels");
    }
  }
  if (d.has_ids()) require(d.ids.size() == d.size(), "one identifier per row");
  if (!d.file_rows.empty()) require(d.file_rows.size() == d.size(), "one file row per row");
}

// Fits the preprocessing on the rows and encodes them: finite values, or one error line.
void check_preprocessing(const knn::Dataset& d, knn::Impute impute) {
  try {
    knn::Preprocessor p(impute);
    p.fit(d);
    const knn::Matrix m = p.transform(d);
    knn::fuzz::require(m.cols == p.width() && m.rows == d.size(), "encoded shape");
    for (float v : m.values) knn::fuzz::require(std::isfinite(v), "an encoded value is not finite");
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
  }
}

void check_dataset(const knn::Dataset& d, bool labelled) {
  using knn::fuzz::require;
  require(d.size() > 0, "a loaded data set has no rows");
  require(d.features.cols == d.feature_names.size(), "feature names and columns differ");
  require(d.feature_columns.size() == d.dims(), "feature column map has the wrong size");
  require(d.lines.size() == d.size(), "one line number per row");
  if (labelled) require(d.labels.size() == d.size(), "one label per row");
  for (std::size_t i = 1; i < d.lines.size(); ++i) require(d.lines[i] > d.lines[i - 1], "line numbers increase");
  require(d.features.values.size() == d.size() * d.dims(), "matrix size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t mode = data[0], more = data[1];
  const std::string bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string path = knn::fuzz::write_scratch("input.csv", bytes);

  knn::CsvOptions options;
  options.header = (mode & 1) == 0;
  static const char delimiters[] = {',', ';', '\t', ' '};
  options.delimiter = delimiters[(mode >> 1) & 3];
  options.decimal = mode & 0x80 ? ',' : '.';  // with the ',' delimiter: refused, with one line
  static const char* const labels[] = {"", "0", "-1", "label"};
  options.label = labels[(mode >> 3) & 3];
  if (mode & 0x20) options.ignore = {"0"};
  options.drop_missing = more & 1;
  if (more & 2) options.categorical = {"1"};
  if (more & 4) options.numeric = {"-2"};
  if (more & 8) options.id = "id";
  if (more & 0x10) options.na_values = {"-1", "x", ""};
  options.lenient = more & 0x20;
  static const knn::Impute imputes[] = {knn::Impute::none, knn::Impute::mean, knn::Impute::median, knn::Impute::most_frequent};
  const knn::Impute impute = imputes[(more >> 6) & 3];

  try {
    const knn::Dataset d = knn::load_csv(path, options);
    check_dataset(d, true);
    check_values(d, options.drop_missing && !options.lenient);
    check_preprocessing(d, impute);
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
  q.decimal = options.decimal;
  try {
    const knn::Dataset d = knn::load_query_csv(path, q, train);
    check_dataset(d, false);
    check_values(d, false);
    knn::fuzz::require(d.dims() == train.dims(), "query columns differ from the training columns");
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
  }
  return 0;
}
