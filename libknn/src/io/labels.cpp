// Labels: regression targets parsed from the label column, and class labels encoded to ids.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_set>

#include "io/cell_value.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"

namespace knn {

std::optional<double> label_number(std::string_view text, char decimal) {
  std::string pointed;
  if (decimal != '.') {
    if (!detail::pointed_text(text, decimal, pointed)) return std::nullopt;
    text = pointed;
  }
  const char* b = text.data();
  const char* e = b + text.size();
  if (e - b > 1 && *b == '+' && b[1] != '-') ++b;
  double v = 0.0;
  const auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<double> numeric_targets(const Dataset& data) {
  std::vector<double> y(data.labels.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::string& s = data.labels[i];
    if (const auto v = label_number(s, data.options.decimal))
      y[i] = *v;
    else
      throw Error::at(data.source, data.lines[i], data.label_column + 1,
                      "regression target " + quote(s) + " is not a finite number (column " + quote(data.label_name) +
                          "; use " + param("task") + " classify for class labels)");
  }
  return y;
}

std::vector<std::string> distinct_labels(const std::vector<std::string>& labels) {
  // Hashed first: a training file has many rows and few classes, and sorting every row's label
  // took longer than the rest of a fit's bookkeeping.
  const std::unordered_set<std::string_view> seen(labels.begin(), labels.end());
  return {seen.begin(), seen.end()};
}

void LabelEncoder::fit(const std::vector<std::string>& labels) {
  std::vector<std::string> u = distinct_labels(labels);
  std::sort(u.begin(), u.end());
  std::vector<double> num(u.size());
  numeric_ = !u.empty();
  for (std::size_t i = 0; i < u.size() && numeric_; ++i) {
    auto [p, ec] = std::from_chars(u[i].data(), u[i].data() + u[i].size(), num[i]);
    numeric_ = ec == std::errc() && p == u[i].data() + u[i].size() && std::isfinite(num[i]);
  }
  if (numeric_) {
    std::vector<std::size_t> order(u.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return num[a] < num[b]; });
    classes_.clear();
    for (std::size_t i : order) classes_.push_back(u[i]);
  } else {
    classes_ = std::move(u);
  }
}

void LabelEncoder::fit_ids(std::size_t n) {
  classes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) classes_[i] = std::to_string(i);
  numeric_ = n > 0;
}

int LabelEncoder::encode(const std::string& label) const {
  if (numeric_) {
    auto it = std::find(classes_.begin(), classes_.end(), label);
    return it == classes_.end() ? -1 : static_cast<int>(it - classes_.begin());
  }
  auto it = std::lower_bound(classes_.begin(), classes_.end(), label);
  return it != classes_.end() && *it == label ? static_cast<int>(it - classes_.begin()) : -1;
}

std::vector<int> LabelEncoder::encode(const std::vector<std::string>& labels) const {
  std::map<std::string, int> ids;
  for (std::size_t i = 0; i < classes_.size(); ++i) ids.emplace(classes_[i], static_cast<int>(i));
  std::vector<int> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    auto it = ids.find(labels[i]);
    out[i] = it == ids.end() ? -1 : it->second;
  }
  return out;
}

}  // namespace knn
