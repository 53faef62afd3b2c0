#pragma once
// --model: a model file from knn-cli fit in place of --train, for predict and neighbors. The
// options given beside it must be those the model was fitted with (but for -k, --skip-lines,
// which is the query file's, and the run options); the settings then hold the model's, so that
// the answers are those of --train.
#include <cxxopts.hpp>

#include <string>

#include "settings.hpp"

namespace knn::cli {

/// Reads --model, where given, into s.model (every rank of s.params.backend.comm reads it) and
/// puts the model's options into `s`. The model runs on the CPU backend until answer_queries
/// moves it to the run's. Throws for --model beside --train, or neither of them; for
/// an option that conflicts with the model (naming the option and the model's value); for a
/// model without a CSV file's columns, or without labels where `cmd` predicts.
void read_model(const cxxopts::ParseResult& r, Settings& s, const std::string& cmd);

}  // namespace knn::cli
