#pragma once
// Values of options that are numbers or lists, read with messages that name the option and quote
// the value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace knn::app {

/// A whole number >= min_value.
std::size_t parse_count(const std::string& option, const std::string& text, std::size_t min_value);
/// --seed: a whole number from 0 to 2^64-1.
std::uint64_t parse_seed(const std::string& text);
/// The parts of `text` between separators, e.g. "id,2" -> {"id", "2"}; empty parts are kept.
std::vector<std::string> split_list(const std::string& text, char separator = ',');
/// --k of k-sweep: "start:stop[:step]" (stop included) or "a,b,c"; all >= 1. Sorted, duplicates
/// removed.
std::vector<std::size_t> parse_k_list(const std::string& text);

}  // namespace knn::app
