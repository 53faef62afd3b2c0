#include "model_options.hpp"

#include <algorithm>

#include "arguments.hpp"
#include "errors.hpp"
#include "option_values.hpp"

namespace knn::app {

namespace {

std::vector<Weights> parse_weights_list(const std::string& text) {
  std::vector<Weights> out;
  for (const auto& part : split_list(text)) {
    const Weights w = Weights::parse(part);
    for (const auto& seen : out)
      if (seen.kind == w.kind && seen.param == w.param)
        throw option_error("weights", quote(text) + " names " + quote(w.to_string()) + " twice");
    out.push_back(w);
  }
  return out;
}

std::vector<Metric> parse_metric_list(const std::string& text) {
  std::vector<Metric> out;
  for (const auto& part : split_list(text)) {
    const Metric m = parse_metric(part);
    if (std::find(out.begin(), out.end(), m) != out.end())
      throw option_error("metric", quote(text) + " names " + quote(to_string(m)) + " twice");
    out.push_back(m);
  }
  return out;
}

}  // namespace

void add_model_options(cxxopts::Options& o, const std::string& group, ModelValues values, bool votes) {
  const bool lists = values == ModelValues::lists;
  const std::string list_of = lists ? "comma-separated: " : "";
  auto add = o.add_options(group);
  const auto add_task = [&] {
    add("task", "classify or regress (default: classify; a label of many distinct numbers asks for the choice)", cxxopts::value<std::string>(), "TASK");
  };
  // clang-format off
  if (lists)
    add("k", "k values: START:STOP[:STEP] with STOP included (1:50, 1:99:2) or a list 1,3,5,7", cxxopts::value<std::string>()->default_value("1:30"), "LIST");
  else
    add("k", "number of neighbours", cxxopts::value<std::string>()->default_value("5"), "N");
  // knn-cli's help names the task beside k; k-sweep's keeps the swept options together first.
  if (!lists && votes) add_task();
  if (votes) add("weights", list_of + "uniform | distance | gaussian[:SIGMA] | inverse[:C] | subtract[:C]", cxxopts::value<std::string>()->default_value("uniform"), lists ? "LIST" : "W");
  add("metric", list_of + "l2 | l1 | cosine", cxxopts::value<std::string>()->default_value("l2"), lists ? "LIST" : "M");
  if (lists && votes) add_task();
  add("scale", std::string("minmax | standard | none, fitted on ") + (lists ? "each fold's training rows" : "the training rows only"), cxxopts::value<std::string>()->default_value("minmax"), "S")
     ("no-normalize", "same as --scale none")
     ("impute", std::string("none | mean | median | most_frequent: fills missing numeric cells (categorical ones take their most frequent category), fitted on ") + (lists ? "each fold's training rows" : "the training rows only"), cxxopts::value<std::string>()->default_value("none"), "HOW");
  // clang-format on
}

EvalOptions model_options(const cxxopts::ParseResult& r, ModelValues values, bool votes) {
  const bool lists = values == ModelValues::lists;
  EvalOptions m;
  const std::string k = option_text(r, "k");
  m.ks = lists ? parse_k_list(k) : std::vector<std::size_t>{parse_count("k", k, 1)};
  m.task = r.count("task") ? parse_task(option_text(r, "task")) : Task::classify;
  m.impute = parse_impute(option_text(r, "impute"));
  const std::string weights = votes ? option_text(r, "weights") : "uniform", metric = option_text(r, "metric");
  m.weights = lists ? parse_weights_list(weights) : std::vector<Weights>{Weights::parse(weights)};
  m.metrics = lists ? parse_metric_list(metric) : std::vector<Metric>{parse_metric(metric)};
  m.scaling = parse_scaling(option_text(r, "scale"));
  if (r.count("no-normalize")) {
    // knn-cli shows the --scale value as given, k-sweep quotes it.
    const std::string scale = option_text(r, "scale");
    if (r.count("scale") && m.scaling != Scaling::none)
      throw option_error("no-normalize", "conflicts with --scale " + (lists ? quote(scale) : scale));
    m.scaling = Scaling::none;
  }
  return m;
}

}  // namespace knn::app
