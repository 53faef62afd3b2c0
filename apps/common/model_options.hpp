#pragma once
// The options that choose the model: -k, --task, --weights, --metric, --scale, --no-normalize.
#include <cxxopts.hpp>

#include <string>

#include "knn/evaluation.hpp"

namespace knn::app {

/// knn-cli takes one value of each; k-sweep takes lists of k, weight functions and metrics to
/// sweep, each model fitted on a fold's training rows.
enum class ModelValues { one, lists };

/// Adds them to `group`; without `votes`, --task and --weights are left out (a search for
/// neighbours has no vote for them to change).
void add_model_options(cxxopts::Options& options, const std::string& group, ModelValues values, bool votes = true);

/// Their values, checked, as an evaluation's task, ks, weights, metrics and scaling (with
/// ModelValues::one, each list holds one value); without `votes`, the defaults of the two left out.
EvalOptions model_options(const cxxopts::ParseResult& r, ModelValues values, bool votes = true);

}  // namespace knn::app
