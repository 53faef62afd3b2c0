// knn::evaluate on arrays: every k of the list in one pass over the folds, as the k-sweep app runs
// it. Class labels arrive as ids 0..C-1 and regression targets as doubles; both become the data
// set's label texts, which the library reads back exactly (ids in numeric order, targets by
// from_chars of their shortest form).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "errors.hpp"
#include "knn/evaluation.hpp"

namespace knn::py {

namespace {

using Index = pybind11::array_t<std::int64_t, pybind11::array::c_style>;

std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The rows and labels as a data set of numeric columns f0, f1, ... and a label column y; a row's
// "line" is its 1-based row number, which messages name (X:ROW:COLUMN).
Dataset make_dataset(MatrixView rows, const pybind11::object& y, Task task) {
  Dataset d;
  d.source = "X";
  for (std::size_t j = 0; j < rows.cols; ++j) {
    d.feature_names.push_back("f" + std::to_string(j));
    d.feature_columns.push_back(j);
  }
  d.column_names = d.feature_names;
  d.column_names.push_back("y");
  d.feature_types.assign(rows.cols, ColumnType::numeric);
  d.levels.assign(rows.cols, {});
  d.label_name = "y";
  d.label_column = rows.cols;
  d.labels.reserve(rows.rows);
  if (task == Task::classify) {
    const auto ids = Index::ensure(y);
    if (!ids) throw pybind11::error_already_set();
    for (std::int64_t id : vector_of<std::int64_t>(ids, rows.rows, "y")) d.labels.push_back(std::to_string(id));
  } else {
    const auto values = pybind11::array_t<double, pybind11::array::c_style>::ensure(y);
    if (!values) throw pybind11::error_already_set();
    for (double v : vector_of<double>(values, rows.rows, "y")) d.labels.push_back(shortest(v));
  }
  d.lines.resize(rows.rows);
  for (std::size_t i = 0; i < rows.rows; ++i) d.lines[i] = i + 1;
  d.features = Matrix(rows);  // the evaluation keeps its own rows
  return d;
}

std::vector<std::size_t> row_list(const Index& a) {
  if (a.ndim() != 1) throw pybind11::value_error("a split's rows must be a 1-d array of row numbers");
  std::vector<std::size_t> out(static_cast<std::size_t>(a.shape(0)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (a.data()[i] < 0) throw pybind11::value_error("a split names a negative row number");
    out[i] = static_cast<std::size_t>(a.data()[i]);
  }
  return out;
}

template <class T>
pybind11::array_t<T> column(std::vector<T>&& v) {
  const auto n = static_cast<pybind11::ssize_t>(v.size());
  return owned_array(std::move(v), {n});
}

// The result as columns: weights, metric and k per row, then a mean and a std per score.
pybind11::dict result_columns(const EvalResult& res) {
  const std::size_t n = res.rows.size();
  std::vector<std::string> weights, metrics;
  std::vector<std::int64_t> ks;
  std::vector<std::vector<double>> mean(res.score_names.size()), sd(res.score_names.size());
  for (const SweepRow& row : res.rows) {
    weights.push_back(row.weights.to_string());
    metrics.push_back(to_string(row.metric));
    ks.push_back(static_cast<std::int64_t>(row.k));
    for (std::size_t s = 0; s < row.scores.size(); ++s) {
      mean[s].push_back(row.scores[s].mean);
      sd[s].push_back(row.scores[s].std);
    }
  }
  pybind11::dict out;
  out["weights"] = weights;
  out["metric"] = metrics;
  out["k"] = column(std::move(ks));
  for (std::size_t s = 0; s < res.score_names.size(); ++s) {
    out[pybind11::str(res.score_names[s] + "_mean")] = column(std::move(mean[s]));
    out[pybind11::str(res.score_names[s] + "_std")] = column(std::move(sd[s]));
  }
  pybind11::dict info;
  info["folds"] = res.folds;
  info["best"] = n ? res.best : 0;
  pybind11::dict both;
  both["columns"] = out;
  both["info"] = info;
  return both;
}

pybind11::dict evaluate(const FloatRows& x, const pybind11::object& y, const std::string& task,
                        const std::vector<std::size_t>& ks, const std::vector<std::string>& weights,
                        const std::vector<std::string>& metrics, const std::string& scaling, int folds,
                        const std::optional<std::vector<std::pair<Index, Index>>>& splits, const std::string& device,
                        const std::string& precision, int threads) {
  const MatrixView rows = rows_of(x, "X");
  EvalOptions o = without_gil(sweep_spelling(), [&] {
    EvalOptions e;
    e.task = parse_task(task);
    e.ks = ks;
    e.weights.clear();
    for (const auto& w : weights) e.weights.push_back(Weights::parse(w));
    e.metrics.clear();
    for (const auto& m : metrics) e.metrics.push_back(parse_metric(m));
    e.scaling = parse_scaling(scaling);
    e.folds.folds = folds;
    e.backend.device = parse_device(device);
    e.backend.precision = parse_precision(precision);
    e.backend.threads = threads;
    return e;
  });
  if (splits) {
    o.folds.kind = FoldSpec::Kind::splits;
    for (const auto& [train, test] : *splits) o.folds.splits.push_back({row_list(train), row_list(test)});
  }
  const Dataset data = make_dataset(rows, y, o.task);
  const EvalResult res = without_gil(sweep_spelling(), [&] { return knn::evaluate(data, o); });
  return result_columns(res);
}

}  // namespace

void bind_evaluate(pybind11::module_& m) {
  m.def("evaluate", &evaluate, pybind11::arg("X").noconvert(), pybind11::arg("y"), pybind11::arg("task"),
        pybind11::arg("ks"), pybind11::arg("weights"), pybind11::arg("metrics"), pybind11::arg("scaling"),
        pybind11::arg("folds"), pybind11::arg("splits"), pybind11::arg("device"), pybind11::arg("precision"),
        pybind11::arg("threads"),
        "Cross-validated scores of every k in `ks` for every weight function and metric, in one pass over the "
        "folds (the k-fold folds of `folds`, or the given (train, test) row splits). Returns {'columns': {...}, "
        "'info': {'folds', 'best'}}; y: class ids 0..C-1 for classify, float targets for regress.");
}

}  // namespace knn::py
