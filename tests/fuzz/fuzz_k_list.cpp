// Fuzz target: the k-list parser of k-sweep ("1:100:2", "1,5,10"). It returns a sorted list of
// distinct k >= 1 of bounded length, or throws knn::Error with a one-line message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "knn/error.hpp"
#include "option_values.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto ks = knn::app::parse_k_list(text);
    knn::fuzz::require(!ks.empty(), "an empty k list was accepted", text);
    knn::fuzz::require(ks.size() <= 1000000 + text.size(), "the k list is longer than its limit", text);
    for (std::size_t i = 0; i < ks.size(); ++i) {
      knn::fuzz::require(ks[i] >= 1, "k below 1", text);
      if (i) knn::fuzz::require(ks[i] > ks[i - 1], "the k list is not sorted and distinct", text);
    }
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
    knn::fuzz::require(std::string(e.what()).find("--k") != std::string::npos, "the message does not name --k", e.what());
  }
  return 0;
}
