// Writes a data set back as CSV: its features (categories as their text, missing cells empty)
// and its label column.
#include <charconv>
#include <cmath>

#include "io/text_format.hpp"
#include "knn/dataset.hpp"
#include "knn/io.hpp"

namespace knn {

void save_csv(const std::string& path, const Dataset& data, char delimiter) {
  std::string out;
  auto sep = [&](bool first) {
    if (!first) out += delimiter;
  };
  for (std::size_t f = 0; f < data.dims(); ++f) {
    sep(f == 0);
    out += csv_field(data.feature_names[f], delimiter);
  }
  if (data.has_labels()) {
    sep(data.dims() == 0);
    out += csv_field(data.label_name, delimiter);
  }
  out += '\n';
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (std::size_t f = 0; f < data.dims(); ++f) {
      sep(f == 0);
      const float v = data.features(i, f);
      if (std::isnan(v)) continue;  // a missing cell stays empty
      if (f < data.feature_types.size() && data.feature_types[f] == ColumnType::categorical) {
        out += csv_field(data.levels[f][static_cast<std::size_t>(v)], delimiter);
        continue;
      }
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, v);
      out.append(buf, r.ptr);
    }
    if (data.has_labels()) {
      sep(data.dims() == 0);
      out += csv_field(data.labels[i], delimiter);
    }
    out += '\n';
  }
  write_file_atomic(path, out);
}

}  // namespace knn
